// SPDX-License-Identifier: GPL-3.0-or-later
#include "batchplan.h"

#include <algorithm>
#include <cstring>

#include "automata/patterncatalog.h"
#include "engine/filebatch.h"
#include "gpu/scanlayout.h"
#include "pattern/regex.h"
#include "util/parallel.h"

namespace Hitscope {

using namespace ScanLayout;

namespace {
// Mesa's software drivers end an invocation after 65,535 loop iterations: one piece of this many bytes per
// invocation and dispatch leaves room for the hit loops.
constexpr uint32_t kLimitedPieceBytes = 16384;
constexpr uint32_t kUnlimitedPieceBytes = 0x7fffffffu;
// Bytes an unbounded group's segment scans before the bytes it owns, so that its DFA usually reaches the same
// state as the segment before it did; where not, the fix-up passes scan it again.
constexpr int64_t kUnboundedWarmup = 512;
} // namespace

// Unbounded groups start each segment a warm-up before the bytes it owns, so that its DFA usually reaches the
// state the previous segment ended in; the fix-up passes scan again where it did not. The carried states (word 6
// of a continuing chunk's first segment) depend on the batch before and are filled in by build().
void BatchPlan::buildSegmentTable(const FileBatch &batch, uint64_t numUnbounded, int threads,
                                  std::vector<uint32_t> &words)
{
    const uint8_t *haystack = batch.haystack.get();
    auto context = [&](const BatchFile &bf, int64_t scanBegin) -> uint32_t {
        if (scanBegin == 0)
            return Dfa::AtFileStart;
        return isWordByte(*bf.at(haystack, scanBegin - 1)) ? Dfa::AfterWord : Dfa::AfterNonWord;
    };
    const size_t numSegments = batch.segments.size();
    words.assign(numSegments * kSegmentWords, 0);
    // Segments are independent here (144,000 of a 512 MiB batch took 6-10 ms on one thread).
    parallelSlices(numSegments, 1 << 14, threads, [&](size_t begin, size_t end, size_t) {
        for (size_t i = begin; i < end; ++i) {
            const Segment &seg = batch.segments[i];
            const BatchFile &bf = batch.files[seg.batchFile];
            uint32_t *w = words.data() + i * kSegmentWords;
            const bool chunkStart = seg.ownBegin == bf.ownBegin;
            w[0] = uint32_t(bf.dataOffset + (seg.scanBegin - bf.holdBegin));
            w[1] = uint32_t(seg.scanEnd - seg.scanBegin);
            w[2] = uint32_t(seg.ownBegin - seg.scanBegin);
            w[3] = uint32_t(seg.ownEnd - seg.scanBegin);
            w[4] = (seg.scanEnd == bf.fileSize ? kEndsFile : 0) | (context(bf, seg.scanBegin) << kBoundedContextShift)
                | (chunkStart ? kChunkStart : 0) | (bf.firstChunk ? kFirstChunk : 0);
            if (numUnbounded == 0)
                continue;
            const int64_t uBegin = chunkStart ? seg.ownBegin : std::max(bf.ownBegin, seg.ownBegin - kUnboundedWarmup);
            if (!chunkStart)
                w[4] |= context(bf, uBegin) << kUnboundedContextShift;
            w[5] = uint32_t(bf.dataOffset + (uBegin - bf.holdBegin));
            w[6] = kNone;
        }
    });
}

bool BatchPlan::build(const FileBatch &batch, const PatternCatalog &catalog, const std::vector<uint32_t> &carryIn,
                      bool loopLimited, int threads, std::vector<uint32_t> &words, BatchPlan &plan, QString *error)
{
    plan = BatchPlan();
    plan.loopLimited = loopLimited;
    plan.unboundedIndex.assign(catalog.groups.size(), kNone);
    for (size_t g = 0; g < catalog.groups.size(); ++g)
        if (catalog.groups[g].unbounded())
            plan.unboundedIndex[g] = uint32_t(plan.numUnbounded++);
    plan.numSegments = batch.segments.size();
    plan.numGroups = catalog.groups.size();
    plan.mainItems = plan.numSegments * plan.numGroups;
    plan.unboundedItems = plan.numSegments * plan.numUnbounded;
    plan.unboundedBase = plan.mainItems * 2;
    plan.stateWords = plan.unboundedBase + plan.unboundedItems * 4;
    if (plan.mainItems >= kNone || plan.stateWords >= (uint64_t(1) << 31)) {
        *error = QStringLiteral("%1 work items are too many for one GPU batch").arg(plan.mainItems);
        return false;
    }
    const uint64_t numSegments = plan.numSegments, numUnbounded = plan.numUnbounded;
    // prepareBatch() built the table beside the scan before, tagged with the unbounded groups it was built for.
    if (batch.prepared.size() == numSegments * kSegmentWords + 1 && batch.prepared.back() == numUnbounded)
        words.assign(batch.prepared.begin(), batch.prepared.end() - 1);
    else
        buildSegmentTable(batch, numUnbounded, threads, words);
    std::vector<uint32_t> carry;
    for (size_t i = 0; i < numSegments && numUnbounded > 0; ++i) {
        const Segment &seg = batch.segments[i];
        const BatchFile &bf = batch.files[seg.batchFile];
        if (seg.ownBegin == bf.ownBegin && !bf.firstChunk) {
            words[i * kSegmentWords + 6] = uint32_t(carry.size() / numUnbounded);
            for (uint64_t u = 0; u < numUnbounded; ++u)
                carry.push_back(carryIn[seg.batchFile * numUnbounded + u]);
        }
        if (!bf.lastChunk && seg.ownEnd == bf.ownEnd)
            plan.carriedOut.emplace_back(seg.batchFile, uint32_t(i));
    }
    plan.carryBase = words.size();
    words.insert(words.end(), carry.begin(), carry.end());

    plan.pieceBytes = loopLimited ? kLimitedPieceBytes : kUnlimitedPieceBytes;
    uint64_t longest = 0;
    for (size_t i = 0; i < numSegments; ++i) {
        const uint32_t *w = words.data() + i * kSegmentWords;
        longest = std::max<uint64_t>(longest, w[1]);
        if (numUnbounded > 0)
            longest = std::max<uint64_t>(longest, uint64_t(w[0]) + w[1] - w[5]);
    }
    plan.rounds = uint32_t(std::max<uint64_t>(1, (longest + plan.pieceBytes - 1) / plan.pieceBytes));
    return true;
}

// Queue words of a frame: [0] hit attempts, a head per phase, items completed by the main phases, then per
// fix-up pass items completed and items scanned again.
std::vector<uint32_t> BatchPlan::paramWords(const std::vector<ScanPhase> &phases, int64_t hitCapacity) const
{
    const uint32_t counters = 1 + uint32_t(phases.size());
    std::vector<uint32_t> out(phases.size() * kParamsWords);
    for (size_t k = 0; k < phases.size(); ++k) {
        const ScanPhase &ph = phases[k];
        ParamsBlock p {};
        p.mode = ph.mode;
        p.round = ph.round;
        p.headSlot = uint32_t(1 + k);
        p.counterSlot = ph.mode == 0 ? counters : counters + 1 + 2 * uint32_t(ph.pass);
        p.numItems = ph.items;
        p.budget = loopLimited ? 1 : 0;
        p.pieceBytes = pieceBytes;
        p.hitCapacity = uint32_t(std::min<int64_t>(hitCapacity, 0xffffffffu));
        p.numGroups = uint32_t(numGroups);
        p.numSegments = uint32_t(numSegments);
        p.numUnbounded = uint32_t(numUnbounded);
        p.unboundedBase = uint32_t(unboundedBase);
        p.carryBase = uint32_t(carryBase);
        p.generation = ph.generation;
        std::memcpy(out.data() + k * kParamsWords, &p, sizeof p);
    }
    return out;
}

} // namespace Hitscope
