// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>

#include "modules/moduleobject.h"

namespace Hitscope {

/**
 * YARA 4.2.3's declarations of its modules, as libyara builds them: every field with its kind, arrays and
 * dictionaries with the declaration of their items, functions with their overloads' argument formats and what
 * they return. A condition is type-checked against them as YARA's compiler checks it.
 */
class ModuleSchema
{
public:
    /// The declaration tree of `module` (values undefined), or null for cuckoo (it reads a sandbox report) and
    /// names that are no module. YARA's own `tests` module is one.
    static const ModuleObject *declaration(const QByteArray &module);
};

} // namespace Hitscope
