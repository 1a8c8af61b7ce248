// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "automata/dfa.h"
#include "automata/dfabuilder.h"
#include "pattern/nfa.h"

namespace Hitscope {

class SubsetConstruction;

/**
 * The DFA of a set of patterns, built only as far as a scan walks it: the same subset construction as
 * DfaBuilder (so the same ends, the same Now, Prev and Eof entries), one state at a time, the first time a walk
 * leaves it. Compiling costs the Thompson NFA only, and no pattern is ever rejected for the size of its
 * automaton: a walk over n bytes makes at most n states, and a cache that reaches its cap forgets them all
 * and goes on (memory stays bounded; the walk then costs a subset step per new state, as an NFA simulation).
 * This is what runs in the CPU engine's windows around atoms, where an eager DFA of thousands of patterns
 * would take seconds to build and could explode.
 */
class LazyDfa
{
public:
    explicit LazyDfa(const std::vector<DfaBuilder::Input> &patterns);
    ~LazyDfa();

    bool isValid() const { return m_valid; }
    size_t patterns() const { return m_patternIds.size(); }

    /// The states a walk has made, its own (one per thread). Not thread-safe.
    class Cache
    {
    public:
        explicit Cache(const LazyDfa &dfa, size_t maxBytes = kDefaultCacheBytes);
        ~Cache();
        Cache(const Cache &) = delete;
        Cache &operator=(const Cache &) = delete;

        uint32_t start(int ctx) const;
        /// The state after byte `b` from state `s` (no kReports bit). May forget every other state (see LazyDfa): ids the caller
        /// kept from before are then stale, start() gives new ones.
        uint32_t next(uint32_t s, uint8_t b)
        {
            const uint32_t t = m_trans[size_t(s) * m_numClasses + m_byteClass[b]];
            return !(t & kPending) ? t & kStateMask : compute(s, b);
        }
        /// next() with the state's reports() in bit kReports: one look-up a byte.
        uint32_t step(uint32_t s, uint8_t b)
        {
            const uint32_t t = m_trans[size_t(s) * m_numClasses + m_byteClass[b]];
            if (!(t & kPending))
                return t;
            const uint32_t u = compute(s, b);
            return u | (m_reports[u] ? kReports : 0);
        }
        static constexpr uint32_t kReports = 0x40000000u;
        static constexpr uint32_t kStateMask = 0x3fffffffu;
        /// The entries of a state start() or next() gave (Dfa::entry with global pattern ids, sorted by kind).
        const uint32_t *entriesBegin(uint32_t s) const { return m_entries.data() + m_entryBegin[s]; }
        const uint32_t *entriesEnd(uint32_t s) const { return m_entries.data() + m_entryEnd[s]; }
        /// Whether entering state s reports Now or Prev entries (as Dfa::kAcceptFlag on a transition).
        bool reports(uint32_t s) const { return m_reports[s]; }
        /// Nothing is in progress: a start state.
        bool idle(uint32_t s) const;
        size_t bytes() const;
        /// Times the cache reached its cap and was cleared.
        size_t resets() const { return m_resets; }

        static constexpr size_t kDefaultCacheBytes = size_t(2) << 20;

    private:
        /// A transition whose target's row is not known yet (or not known to be: the row may have been computed
        /// through another transition): compute() looks, and stores the target with its kReports bit.
        static constexpr uint32_t kPending = 0x80000000u;
        static constexpr uint32_t kUnknown = UINT32_MAX;
        uint32_t compute(uint32_t s, uint8_t b);
        void ensureRow(uint32_t s);
        /// Makes room for a row, clearing the cache when it is full; returns s's id after.
        uint32_t room(uint32_t s);
        void grow(uint32_t states);

        const LazyDfa &m_dfa;
        std::unique_ptr<SubsetConstruction> m_subset;
        uint32_t m_numClasses = 0;
        const uint8_t *m_byteClass = nullptr;
        size_t m_maxStates = 0;
        std::vector<uint32_t> m_trans;      ///< per state and class: target or kUnknown
        std::vector<uint8_t> m_rowDone;     ///< per state
        std::vector<uint8_t> m_reports;     ///< per state: Now or Prev entries
        std::vector<uint32_t> m_entryBegin, m_entryEnd, m_entries, m_scratch;
        size_t m_resets = 0;
    };

private:
    friend class Cache;
    Nfa m_nfa;
    std::vector<int> m_patternIds; ///< global ids of the inputs, by local index
    bool m_valid = false;
};

} // namespace Hitscope
