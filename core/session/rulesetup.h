// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include <QStringList>

#include "automata/patterncatalog.h"
#include "rules/rulesources.h"
#include "rules/ruleset.h"
#include "rules/yaraconditioncompiler.h"

namespace Hitscope {

/**
 * What the CLI, the GUI and the bench do before a scan, written once: load the rule files, compile them (the
 * tableless catalog unless every DFA is asked for, with the user's grouping cache), gather what was rejected,
 * and say whether anything is left to scan.
 */
class RuleSetup
{
public:
    struct Options
    {
        QStringList files;
        YaraExternals externals;
        RuleSources sources;     ///< texts loaded instead of some of `files` (an editor's unsaved buffers)
        CompileOptions compile;  ///< threads, state budgets (tableless and the hint folder are set from below)
        bool fullDfas = false;   ///< --gpu-dfas: every string in DFA tables
        bool groupingCache = true; ///< the user's cache of groupings and DFAs (PatternCatalog::defaultGroupingHintDir)
    };

    RuleSet rules;
    PatternCatalog catalog;
    std::vector<Rejection> rejections; ///< the loader's, then the compiler's
    double loadMs = 0;

    /// Blocks while it loads and compiles.
    static RuleSetup run(const Options &options);
    /// A pattern compiled, or a YARA rule (a condition on filesize or header bytes needs no string).
    bool usable() const;
    /// Nothing to look for and nothing refused (a file of comments only): no error, to yara either.
    bool empty() const { return rules.rules.empty() && rejections.empty(); }
};

} // namespace Hitscope
