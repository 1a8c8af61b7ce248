// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

namespace Hitscope {

struct BatchPlan;
struct BatchResult;
struct FileBatch;
struct PatternCatalog;

/**
 * The hit ring read back, as matches at file offsets (BatchResult::hits and counts), on several threads when
 * there are many. A ring entry of an unbounded item counts only when it comes from the item's last scan (its
 * generation). Runs of counts of one file, group and key are summed before they are expanded; a count of a
 * state stands for one end of each pattern that ends at its byte there.
 */
class RingDecoder
{
public:
    struct Totals
    {
        int64_t hits = 0;         ///< ring entries that became hits
        int64_t countedEnds = 0;  ///< ends the counts stand for
        int64_t counts = 0;       ///< count records
        int64_t rerunEntries = 0; ///< entries written by fix-up passes
    };

    /// `generations`: per unbounded item, the generation of its last scan, read when `filter` (some were scanned
    /// again). Replaces result.hits and result.counts.
    static Totals decode(const uint32_t *entries, uint32_t count, const uint32_t *generations, bool filter,
                         const BatchPlan &plan, const FileBatch &batch, const PatternCatalog &catalog, int threads,
                         BatchResult &result);
};

} // namespace Hitscope
