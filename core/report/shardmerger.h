// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QIODevice>
#include <QString>
#include <QStringList>

namespace Hitscope {

/**
 * Joins the JSON-lines outputs of the N parts of a sharded scan (`hitscope-cli scan --json --shard K/N`) into the
 * records one scan of all the files would have written: the rejections once, then every file's records in the
 * walk's order (each part's are in that order already; they are interleaved by the path's place in the walk:
 * roots in the order given, then names byte by byte, folder by folder), then each problem once, in the walk's
 * order (a scan reports a problem when it meets it, among the files of a batch), then the rules' profile records
 * summed per rule (ProfileMerger) where the parts were scanned with --profile, then one summary with the
 * parts' counts summed (problems and rejections as written once, wall_ms the longest part's). Records are copied
 * byte for byte. Streams: memory holds one record per part and the problems and rejections seen.
 *
 * Refuses, naming the file, an output that is not a part's, a part missing or given twice, parts of different
 * scans, a part that did not finish (no summary), and parts of which only some have profile records: a merge never
 * loses a part silently.
 */
class ShardMerger
{
public:
    /// Writes the merged records to `out`. Returns the merged scan's exit code (as one scan's: 0, 2 with problems,
    /// rejections or a stop, 1 when a part failed), or -1 with `error` when the parts cannot be merged.
    static int merge(const QStringList &files, QIODevice &out, QString *error);
};

} // namespace Hitscope
