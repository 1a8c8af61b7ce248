// SPDX-License-Identifier: GPL-3.0-or-later
#include "ruleset.h"

namespace Hitscope {

QString Rejection::toString() const
{
    QString where = file;
    if (line > 0)
        where += QLatin1Char(':') + QString::number(line);
    if (!rule.isEmpty())
        where += QLatin1String(": rule ") + rule;
    return where + QLatin1String(": ") + reason;
}

void RuleSet::append(RuleSet other)
{
    const int ruleBase = int(rules.size());
    const int patternBase = int(patterns.size());
    for (Rule &r : other.rules) {
        for (int &p : r.patterns)
            p += patternBase;
        rules.push_back(std::move(r));
    }
    for (Pattern &p : other.patterns) {
        p.ruleIndex += ruleBase;
        patterns.push_back(std::move(p));
    }
    for (Rejection &r : other.rejections)
        rejections.push_back(std::move(r));
    notes += other.notes;
    warnings.insert(warnings.end(), other.warnings.begin(), other.warnings.end());
}

} // namespace Hitscope
