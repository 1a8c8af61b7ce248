// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>

#include "modules/moduleobject.h"

namespace Hitscope {

/// Writes a module's data as text, as `yara -D` prints it (libyara's yr_object_print_data: a tab per level,
/// functions left out, undefined values as YR_UNDEFINED, unprintable string bytes as \xNN), or as JSON.
class ModulePrinter
{
public:
    /// The module's name and its data, without the final newline yara prints after it.
    static QByteArray yaraText(const ModuleObject &module);
    /// One JSON value: an object per structure and dictionary, an array per array (a missing index is null),
    /// numbers, strings (bytes as in the hit records' JSON), null for undefined values; functions left out.
    static QByteArray json(const ModuleObject &module);
};

} // namespace Hitscope
