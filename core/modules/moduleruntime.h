// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include <QByteArray>
#include <QString>

#include "modules/moduleaccess.h"

namespace Hitscope {

/**
 * Runs YARA's modules over one file at a time, for the conditions that read them: libyara (the oracle, linked
 * statically) loads the modules a rule set uses, and while its scan context lives, inside the callback that
 * reports the last module imported, a ModuleAccess reads the live objects and calls the modules' functions
 * (pe.imports(), math.entropy(), hash.md5()...) exactly as YARA's virtual machine would. libyara's scan over
 * the file's bytes is skipped (the rule it runs has no strings): the modules read the data when they load.
 * Function results are kept per file, so a range hashed by several rules is hashed once.
 *
 * One runtime per thread: a libyara scanner is not thread-safe.
 */
class ModuleRuntime
{
public:
    /// A runtime of `modules` (names YARA knows; cuckoo is refused: it reads a sandbox report, not the file).
    /// `entryPoint`: a condition reads YARA's `entrypoint`, which libyara computes while it walks the bytes.
    /// `regexes`: the ModuleRegexes numbers the conditions give functions.
    explicit ModuleRuntime(std::vector<QByteArray> modules, bool entryPoint = false, std::vector<int> regexes = {});
    ~ModuleRuntime();
    ModuleRuntime(const ModuleRuntime &) = delete;
    ModuleRuntime &operator=(const ModuleRuntime &) = delete;

    bool isValid() const { return m_error.isEmpty(); }
    QString errorString() const { return m_error; }

    /// Loads the modules for the file at `path` of `size` bytes (its first bytes `known`, when they are the whole
    /// file nothing is read) and calls `evaluate` while they live. False, without calling it, when the file
    /// cannot be read or libyara fails (`error` says why). What the console module writes goes to `console`.
    bool run(const QByteArray &path, int64_t size, std::span<const uint8_t> known,
             const std::function<void(const ModuleAccess &)> &evaluate, QString *error,
             std::vector<QByteArray> *console = nullptr);

    struct Private;

private:
    std::unique_ptr<Private> d;
    QString m_error;
};

} // namespace Hitscope
