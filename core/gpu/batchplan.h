// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <QString>

namespace Hitscope {

struct FileBatch;
struct PatternCatalog;

/// One kernel launch's worth of work: every item of a mode, one piece (round) of each.
struct ScanPhase
{
    uint32_t mode = 0; // 0 main items, 1 a fix-up pass over the unbounded items
    uint32_t round = 0;
    uint32_t items = 0;
    uint32_t generation = 0;
    int pass = -1; // fix-up pass index within the frame
};

/**
 * What a batch needs on the GPU before its first frame: its work items (one per segment and group, and one per
 * segment and unbounded group for the fix-up passes), the segment table with the carried states, the chunks
 * whose exit states are carried to the next batch, and the pieces each item's bytes are cut into.
 */
struct BatchPlan
{
    uint64_t numSegments = 0;
    uint64_t numGroups = 0;
    uint64_t numUnbounded = 0;
    uint64_t mainItems = 0;
    uint64_t unboundedItems = 0;
    uint64_t unboundedBase = 0; // first item-state word of the unbounded items
    uint64_t stateWords = 0;
    uint64_t carryBase = 0;     // first word of the carried states in the segment table
    uint32_t pieceBytes = 0;
    uint32_t rounds = 1;
    bool loopLimited = false;
    std::vector<uint32_t> unboundedIndex; // per group: its index among the unbounded groups, or kNone
    std::vector<std::pair<uint32_t, uint32_t>> carriedOut; // (batch file, segment) of every continuing chunk's end

    /// The plan and `words` (the segment table, then the carried states of `carryIn`). False, with the reason,
    /// when the batch has too many items for the kernel's 32-bit counters.
    static bool build(const FileBatch &batch, const PatternCatalog &catalog, const std::vector<uint32_t> &carryIn,
                      bool loopLimited, int threads, std::vector<uint32_t> &words, BatchPlan &plan, QString *error);
    /// The segment table alone (ScanLayout::kSegmentWords per segment), before the carried states are known.
    static void buildSegmentTable(const FileBatch &batch, uint64_t numUnbounded, int threads,
                                  std::vector<uint32_t> &words);
    /// The Params block of every phase, at `hitCapacity`.
    std::vector<uint32_t> paramWords(const std::vector<ScanPhase> &phases, int64_t hitCapacity) const;
};

} // namespace Hitscope
