// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <QMetaType>
#include <QString>
#include <QStringList>

namespace Hitscope {

/// One rule's share of a scan (Scanner::setProfiling). Times are milliseconds of work summed over the threads
/// that did it, so that rules compare whatever ran beside them.
struct RuleProfileRow
{
    int rule = -1; ///< RuleSet::rules index (-1 in a merged profile)
    QString name;
    QString file;
    int line = 0;
    /// The engine's time for the rule's strings: its pattern groups and screens, split among their patterns. Empty
    /// where a GPU ran the scan: its kernels cannot be split per rule.
    std::optional<double> engineMs;
    /// The part of the engine's time spent on the host: all of it on the CPU engine; on the GPU engine its
    /// screens and windows around what the GPU marked, and batches re-run on the CPU.
    double hostMs = 0;
    double conditionMs = 0; ///< evaluating its condition, file by file
    double resolveMs = 0;   ///< finding where its strings' matches start
    /// Its strings' matches, matched or not. Where the scan resolves every match (listing them: the CLI's -s or
    /// --json, the GUI), as YARA counts them, one per start and at most 1,000,000 per string and file: for a rule
    /// that matched, as many as its -s lines (private strings too). Otherwise the ends the engines reported (the
    /// same for literals and hex strings; a scan without listing resolves only what conditions need).
    int64_t hits = 0;
    int64_t files = 0; ///< files it matched (its condition held)
    QStringList reasons; ///< why it may be slow: measured ones first, then RuleCost's

    double totalMs() const { return engineMs.value_or(hostMs) + conditionMs + resolveMs; }
};

/// Every rule's profile of one scan, slowest first.
struct RuleProfile
{
    std::vector<RuleProfileRow> rows;
    /// Whether every batch's engine time was split per rule (the CPU engine): rows then have engineMs.
    bool engineSplit = true;
    int64_t bytes = 0; ///< bytes scanned

    /// More matches than this are many, whatever the bytes scanned.
    static constexpr int64_t kManyHits = 10000;
    /// Rows ordered slowest first (totalMs, then rule order).
    void sort();
    /// The reasons measured in a scan: many matches (over kManyHits, or one per KiB scanned), a condition or the
    /// finding of its matches' starts that takes most of the rule's time. They depend on the totals, so a merge of parts drops them (isMeasuredReason)
    /// and asks again.
    static QStringList measuredReasons(const RuleProfileRow &row, int64_t bytes);
    static bool isMeasuredReason(const QString &reason);
};

} // namespace Hitscope

Q_DECLARE_METATYPE(Hitscope::RuleProfile)
