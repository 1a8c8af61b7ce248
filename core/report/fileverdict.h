// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QByteArray>
#include <QMetaType>
#include <QStringList>

namespace Hitscope {

struct FileResult;
struct RuleSet;

/// What the Files view shows of one file that matched: its rules, their tags and a score to triage by.
struct FileVerdict
{
    /// The score of a matched rule that has no `score` or `severity` meta.
    static constexpr int kDefaultRuleScore = 50;

    QByteArray path;
    int64_t size = 0;
    QStringList rules; ///< the reported rules that matched, in rule-set order
    QStringList tags;  ///< their tags, each once, in the order first met
    /// The highest score of its rules: a file that matched one severe rule stays severe however many weak
    /// rules it matched too (a sum would rank ten weak matches above one certain one).
    int score = 0;
    /// Its hits are rows [firstHit, firstHit + hitCount) of the scan's hit table: a file's rows arrive together,
    /// so the verdict points into the table instead of holding a second copy of every hit.
    int firstHit = 0;
    int hitCount = 0;

    /// The verdict of a file the scan reported rules for; its rows begin at `firstHit` of the hit table.
    static FileVerdict of(const FileResult &file, const RuleSet &rules, int firstHit, int hitCount);
};

} // namespace Hitscope

Q_DECLARE_TYPEINFO(Hitscope::FileVerdict, Q_RELOCATABLE_TYPE);
Q_DECLARE_METATYPE(Hitscope::FileVerdict)
