// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pattern/bytecontext.h"
#include "util/bigallocator.h"

namespace Hitscope {

/**
 * A byte-class compressed DFA: the exact table layout both the CPU engine and the GPU shaders walk.
 *
 * Scanning a range [begin, end) of a file:
 *   s = start[context of the byte before begin]           (already multiplied by numClasses)
 *   for each byte b at position pos:
 *       e = transitions[(s & ~kAcceptFlag) + byteClass[b]]; s = e
 *       if (e & kAcceptFlag): for each entry of accepts(state e / numClasses):
 *           kind Now  -> a match of pattern ends at pos
 *           kind Prev -> a match ends at pos - 1 (it needed the byte at pos to decide, e.g. a trailing \b)
 *   at the end of the file: entries of kind Eof of the final state end at fileSize - 1
 *   (patterns ending in $ or \b are only decided there).
 * Every accept entry is reported: this is report-all semantics, one hit per (pattern, end offset).
 */
struct Dfa
{
    static constexpr uint32_t kAcceptFlag = 0x80000000u;
    static constexpr uint32_t kStateMask = 0x7fffffffu;

    enum AcceptKind : uint32_t { Now = 0, Prev = 1, Eof = 2 };
    static constexpr int kKindShift = 30;
    static constexpr uint32_t kPatternMask = (1u << kKindShift) - 1;

    /// Which start state to use, from the byte just before the scan begins.
    enum StartContext : int {
        AtFileStart = ByteContext::AtFileStart,
        AfterNonWord = ByteContext::AfterNonWord,
        AfterWord = ByteContext::AfterWord
    };

    uint32_t numStates = 0;
    uint32_t numClasses = 0;
    std::array<uint8_t, 256> byteClass {};
    /// numStates * numClasses entries: (next state * numClasses) | kAcceptFlag when that state has
    /// Now or Prev accept entries.
    BigTable transitions;
    /// Start state per StartContext, in the same premultiplied form (flag bit never set).
    std::array<uint32_t, 3> start {};
    /// acceptIndex[s] .. acceptIndex[s + 1] index acceptEntries for state s (numStates + 1 entries).
    std::vector<uint32_t> acceptIndex;
    /// patternId | (AcceptKind << kKindShift); pattern ids are global (RuleSet::patterns indices).
    std::vector<uint32_t> acceptEntries;
    /// The state from which nothing can be reported any more (no accept entries, every transition loops to
    /// itself), premultiplied like `start`, or kNoDeadState. A scan that reaches it may stop early: anchored
    /// DFAs, or groups whose patterns all start with `^`. A minimized DFA has at most one such state.
    uint32_t dead = kNoDeadState;
    static constexpr uint32_t kNoDeadState = 0xffffffffu;

    static uint32_t entry(uint32_t patternId, AcceptKind kind) { return patternId | (uint32_t(kind) << kKindShift); }
    static uint32_t entryPattern(uint32_t e) { return e & kPatternMask; }
    static AcceptKind entryKind(uint32_t e) { return AcceptKind(e >> kKindShift); }

    /// Bytes of the tables as they are uploaded.
    size_t tableBytes() const
    {
        return transitions.size() * 4 + acceptIndex.size() * 4 + acceptEntries.size() * 4 + 256;
    }
};

} // namespace Hitscope
