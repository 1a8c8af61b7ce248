// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStringList>

#include "rules/ruleset.h"

namespace Hitscope {

/// Loads rule files of every kind the user may give, choosing the loader by suffix, into one RuleSet.
class RuleLoader
{
public:
    static RuleSet loadFiles(const QStringList &paths);
};

} // namespace Hitscope
