// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "automata/dfa.h"
#include "pattern/nfa.h"

namespace Hitscope {

/// The subset construction's output before (or after) minimization: raw state ids, local pattern indices.
struct RawDfa
{
    uint32_t numStates = 0;
    uint32_t numClasses = 0;
    std::vector<uint32_t> trans;       ///< numStates * numClasses target ids
    std::vector<uint32_t> acceptBegin; ///< numStates + 1
    std::vector<uint32_t> accepts;     ///< local pattern | kind << kKindShift, sorted per state
    std::array<uint32_t, 3> start {};

    bool hasReportedEntries(uint32_t s) const
    {
        // Entries are sorted by kind (Now, Prev, Eof): Now or Prev entries sort first.
        return acceptBegin[s] != acceptBegin[s + 1] && Dfa::entryKind(accepts[acceptBegin[s]]) != Dfa::Eof;
    }
};

/**
 * A DFA state is (kernel K, context of the previous byte, patterns P whose match ended at the previous
 * byte and was decided by the current one, whether the NFA start state is in the set). In unanchored mode
 * the start state is implicit in every state and never stored in K; its steps are precomputed per
 * (context, class).
 */
class SubsetConstruction
{
public:
    SubsetConstruction(const Nfa &nfa, bool anchored, uint32_t maxStates)
        : m_nfa(nfa)
        , m_anchored(anchored)
        , m_maxStates(maxStates)
        , m_numClasses(nfa.numClasses)
    {
    }

    /// Builds every state, breadth first (the eager DfaBuilder); false when they exceed maxStates.
    bool run(RawDfa &out);

    // On demand (LazyDfa): states are interned as walks reach them and their rows computed when first left.
    static constexpr uint32_t kNone = UINT32_MAX;
    /// Interns the start states; call once before the calls below, and again after reset().
    void begin();
    uint32_t startState(int ctx) const { return m_starts[size_t(ctx)]; }
    uint32_t numStates() const { return uint32_t(m_states.size()); }
    uint32_t numClasses() const { return m_numClasses; }
    /// State d's row (numClasses targets) and its accept entries (local pattern | kind, sorted).
    void processRow(uint32_t d, uint32_t *row, std::vector<uint32_t> &entries);
    /// Nothing is in progress in state d: a start state.
    bool idle(uint32_t d) const { return m_states[d].kLen == 0 && m_states[d].pLen == 0; }
    /// Forgets every state but the start states and `keep`, whose new id is returned (bounded memory).
    uint32_t reset(uint32_t keep);

private:
    struct DState
    {
        uint32_t kBegin, kLen, pBegin, pLen;
        uint64_t hash;
        uint8_t ctx, hasStart, kMask;
    };

    uint8_t canonicalCtx(int ctx, uint8_t mask) const
    {
        if (ctx == Dfa::AtFileStart && !(mask & Nfa::MaskFileStart))
            ctx = Dfa::AfterNonWord;
        if (ctx == Dfa::AfterWord && !(mask & Nfa::MaskWord))
            ctx = Dfa::AfterNonWord;
        return uint8_t(ctx);
    }

    static uint64_t mix(uint64_t h, uint64_t x)
    {
        h = (h ^ x) * 0x9E3779B97F4A7C15ull;
        return h ^ (h >> 31);
    }

    uint32_t intern(const std::vector<uint32_t> &k, int ctx, const std::vector<uint32_t> &p, bool hasStart);
    void grow();
    void precomputeStartSteps();
    uint32_t defaultTarget(bool hasStart, int ctx, uint32_t cls);
    void process(uint32_t d, RawDfa &out);

    const Nfa &m_nfa;
    const bool m_anchored;
    const uint32_t m_maxStates;
    const uint32_t m_numClasses;
    bool m_exceeded = false;

    std::vector<DState> m_states;
    std::vector<uint32_t> m_kernelPool;
    std::vector<uint32_t> m_patternPool;
    std::vector<uint32_t> m_table; // open addressing, state ids
    uint64_t m_tableMask = 0;

    uint8_t m_startMask = 0;
    std::array<std::vector<std::vector<uint32_t>>, 3> m_startStep; // [ctx][class] sorted NFA states
    std::vector<uint32_t> m_defaultTargets;                       // [hasStart][ctx][class]

    Nfa::Closure m_unknown, m_word, m_nonWord, m_eof;
    std::vector<std::vector<uint32_t>> m_buckets;
    std::vector<uint32_t> m_touched;
    std::vector<uint8_t> m_isTouched;
    std::vector<uint32_t> m_kernel, m_prevWord, m_prevNonWord, m_eofOnly, m_entries;
    const std::vector<uint32_t> m_empty;
    std::array<uint32_t, 3> m_starts {};
};


} // namespace Hitscope
