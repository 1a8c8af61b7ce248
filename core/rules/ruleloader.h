// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStringList>

#include "rules/ruleset.h"
#include "rules/yaraconditioncompiler.h"

namespace Hitscope {

/**
 * Loads rule files of every kind the user may give into one RuleSet: .yar and .yara are YARA files; a file of
 * another suffix (.rule, .rules, .yr, .txt...) is read as YARA rules when its text declares a rule or imports a
 * module, else as a literal or regex list, and a note says which.
 */
class RuleLoader
{
public:
    /// `externals`: YARA's external variables (`-d NAME=VALUE`).
    static RuleSet loadFiles(const QStringList &paths, const YaraExternals &externals = {});
};

} // namespace Hitscope
