// SPDX-License-Identifier: GPL-3.0-or-later
#include "rulesetup.h"

#include <algorithm>
#include <chrono>

#include "rules/ruleloader.h"

namespace Hitscope {

RuleSetup RuleSetup::run(const Options &options)
{
    RuleSetup s;
    const auto t0 = std::chrono::steady_clock::now();
    s.rules = RuleLoader::loadFiles(options.files, options.externals, options.sources);
    s.loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CompileOptions compile = options.compile;
    if (options.groupingCache)
        compile.groupingHintDir = PatternCatalog::defaultGroupingHintDir();
    // Atoms and screens, no DFA for what they find, for either engine (the GPU marks where atoms occur).
    compile.tableless = !options.fullDfas;
    s.catalog = PatternCatalog::compile(s.rules, compile);
    s.rejections = s.rules.rejections;
    s.rejections.insert(s.rejections.end(), s.catalog.rejections.begin(), s.catalog.rejections.end());
    return s;
}

bool RuleSetup::usable() const
{
    return std::any_of(catalog.patterns.begin(), catalog.patterns.end(),
                       [](const PatternInfo &p) { return p.group >= 0; })
        || std::any_of(rules.rules.begin(), rules.rules.end(), [](const Rule &r) { return r.isYara(); });
}

} // namespace Hitscope
