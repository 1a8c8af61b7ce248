// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>
#include <vector>

#include <QByteArrayList>
#include <QString>

#include "modules/moduleobject.h"

namespace Hitscope {

/**
 * Reads the YARA modules' data of a file through libyara (Debian's 4.2.3, the oracle itself): a scanner of a
 * rule that imports the modules and matches nothing parses the file, and each module's object tree is copied
 * out when libyara reports it imported (CALLBACK_MSG_MODULE_IMPORTED), while the scan context lives. The
 * values are then yara's by construction: the same parser, the same undefined fields. One reader per thread
 * (a libyara scanner is not thread-safe).
 */
class ModuleReader
{
public:
    /// yara 4.2.3's modules that read the scanned file, in the order `dump` prints them (cuckoo reads a
    /// sandbox report given on the command line instead, and is left out).
    static QByteArrayList fileModules();

    /// A reader of `modules` (names of fileModules()).
    explicit ModuleReader(const QByteArrayList &modules);
    ~ModuleReader();
    ModuleReader(const ModuleReader &) = delete;
    ModuleReader &operator=(const ModuleReader &) = delete;

    bool isValid() const { return m_error.isEmpty(); }
    QString errorString() const { return m_error; }

    struct Module
    {
        QByteArray name;
        ModuleObject root;
    };
    /// The modules' data for data[0, size), in the order of `modules`; false (and `error`) when libyara fails.
    bool read(const uint8_t *data, size_t size, std::vector<Module> &out, QString *error = nullptr);

    /// What libyara's scan callback fills (so it is named here, not private).
    struct Private;

private:
    std::unique_ptr<Private> d;
    QString m_error;
};

} // namespace Hitscope
