// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStringList>

#include "rules/rulesources.h"
#include "rules/ruleset.h"
#include "rules/yaraconditioncompiler.h"

namespace Hitscope {

/**
 * Loads rule files of every kind the user may give into one RuleSet: .yar and .yara are YARA files; a file of
 * another suffix (.rule, .rules, .yr, .txt...) is read as YARA rules when its text declares a rule or imports a
 * module, else as a literal or regex list, and a note says which. Every file is read through RuleSources: a path
 * given a text there loads that text (an editor's unsaved buffer) with the path's suffix, folder and name.
 */
class RuleLoader
{
public:
    /// `externals`: YARA's external variables (`-d NAME=VALUE`); `sources`: texts that replace files on disk.
    static RuleSet loadFiles(const QStringList &paths, const YaraExternals &externals = {},
                             const RuleSources &sources = {});
};

} // namespace Hitscope
