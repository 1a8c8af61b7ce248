// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <QByteArray>
#include <QString>
#include <QMetaType>

namespace Hitscope {

/// One match of one pattern in one file: where it starts and how long it is.
struct Hit
{
    int pattern = -1; ///< RuleSet::patterns index
    int64_t offset = 0;
    int64_t length = 0;

    bool operator==(const Hit &) const = default;
    bool operator<(const Hit &o) const
    {
        return offset != o.offset ? offset < o.offset : (pattern != o.pattern ? pattern < o.pattern : length < o.length);
    }
};

/// Every hit of one file, delivered once the file's last chunk has been scanned.
struct FileResult
{
    int fileIndex = -1;
    QByteArray path;
    int64_t size = 0;
    std::vector<Hit> hits; ///< sorted by offset, then pattern
    /// The rules that match the file and are reported (RuleSet indices, ascending): list rules with a hit,
    /// YARA rules whose condition holds (private ones and those of a namespace whose global rule failed
    /// are left out). Set by RuleEvaluator.
    std::vector<int> rules;
    /// YARA strings with more matches than YARA records (RuleEvaluator::kMaxStringMatches): only the first
    /// ones are listed and counted, as YARA does.
    std::vector<int> capped;
    /// YARA strings whose matches were counted instead of listed (Scanner::setListHits(false)): pattern and
    /// number of matches, ascending by pattern; after RuleEvaluator, as `hits`: only reported rules' public
    /// strings, at most RuleEvaluator::kMaxStringMatches each. Their matches are not in `hits`.
    std::vector<std::pair<int, int64_t>> counts;
    /// The file's first bytes as scanned (up to kHeadBytes), for a file whose chunks span batches (its first
    /// batch is reused before its last is resolved): what conditions' uint8/16/32 read at the start of the
    /// file come from, without opening the file again. Empty for list rules only, and for files whole in one
    /// batch, whose conditions read the batch's buffer while the file is resolved.
    std::vector<uint8_t> head;
    /// What the console module's functions wrote while the file's conditions were evaluated, in order (yara
    /// prints it on standard output before the file's rule lines).
    std::vector<QByteArray> console;
    /// Why the file's YARA modules could not be loaded for its conditions (they read as undefined), or empty.
    QString moduleError;
    static constexpr int64_t kHeadBytes = 4096;
};

} // namespace Hitscope

Q_DECLARE_METATYPE(Hitscope::Hit)
