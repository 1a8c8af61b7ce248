// SPDX-License-Identifier: GPL-3.0-or-later
#include "ruleprofile.h"

#include <algorithm>

namespace Hitscope {

namespace {
const QLatin1String kManyMatches("many matches: ");
const QLatin1String kCondition("its condition: ");
const QLatin1String kResolve("finding where its matches start: ");
// A few matches in a tiny scan are not many, whatever their density.
constexpr int64_t kLeastDenseHits = 100;
// A condition (or resolving) below this is not worth a word, whatever its share. The times are of threads the
// scheduler may stop for milliseconds: on a loaded machine a rule of two quick matches measured 2.6 ms of start
// finding, so a reason needs more than such noise.
constexpr double kLeastConditionMs = 10;
// Finding a start takes microseconds: a YARA string's at most a few (HitResolver), a literal's less.
constexpr double kSlowStartMs = 0.1;
} // namespace

void RuleProfile::sort()
{
    std::stable_sort(rows.begin(), rows.end(), [](const RuleProfileRow &a, const RuleProfileRow &b) {
        const double ta = a.totalMs(), tb = b.totalMs();
        return ta != tb ? ta > tb : a.rule < b.rule;
    });
}

QStringList RuleProfile::measuredReasons(const RuleProfileRow &row, int64_t bytes)
{
    QStringList out;
    const bool dense = bytes > 0 && row.hits >= kLeastDenseHits && row.hits * 1024 >= bytes;
    if (row.hits > kManyHits || dense) {
        QString text = kManyMatches + QString::number(row.hits);
        if (bytes > 0 && row.hits > 0)
            text += QStringLiteral(" (one per %1 bytes scanned)").arg(std::max<int64_t>(1, bytes / row.hits));
        out << text;
    }
    const double total = row.totalMs();
    if (row.conditionMs >= kLeastConditionMs && row.conditionMs > total / 2)
        out << kCondition + QStringLiteral("%1% of its time").arg(qRound(100 * row.conditionMs / total));
    // A few matches whose starts take a tenth of a millisecond or more each (a string whose start finding walks far
    // back, or builds much before its first answer); where each start is quick, many matches say it already.
    const bool slowStarts = row.hits == 0 || row.resolveMs / double(row.hits) >= kSlowStartMs;
    if (row.resolveMs >= kLeastConditionMs && row.resolveMs > total / 2 && slowStarts) {
        QString text = kResolve + QStringLiteral("%1% of its time").arg(qRound(100 * row.resolveMs / total));
        if (row.hits > 0)
            text += QStringLiteral(" (%1 ms a match)").arg(row.resolveMs / double(row.hits), 0, 'g', 2);
        out << text;
    }
    return out;
}

bool RuleProfile::isMeasuredReason(const QString &reason)
{
    return reason.startsWith(kManyMatches) || reason.startsWith(kCondition) || reason.startsWith(kResolve);
}

} // namespace Hitscope
