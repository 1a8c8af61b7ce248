// SPDX-License-Identifier: GPL-3.0-or-later
#include "fileverdict.h"

#include <algorithm>

#include "engine/hit.h"
#include "rules/ruleset.h"

namespace Hitscope {

FileVerdict FileVerdict::of(const FileResult &file, const RuleSet &rules, int firstHit, int hitCount)
{
    FileVerdict v;
    v.path = file.path;
    v.size = file.size;
    v.firstHit = firstHit;
    v.hitCount = hitCount;
    for (int r : file.rules) {
        const Rule &rule = rules.rules[size_t(r)];
        v.rules.push_back(rule.name);
        for (const QString &tag : rule.tags)
            if (!v.tags.contains(tag))
                v.tags.push_back(tag);
        v.score = std::max(v.score, rule.score >= 0 ? rule.score : kDefaultRuleScore);
    }
    return v;
}

} // namespace Hitscope
