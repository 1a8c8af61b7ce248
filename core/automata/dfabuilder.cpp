// SPDX-License-Identifier: GPL-3.0-or-later
#include "dfabuilder.h"

#include <algorithm>
#include <numeric>

#include "automata/nfa.h"

namespace Hitscope {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

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

    bool run(RawDfa &out);

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
};

void SubsetConstruction::grow()
{
    const size_t size = m_table.empty() ? 1024 : m_table.size() * 2;
    m_table.assign(size, kNone);
    m_tableMask = size - 1;
    for (uint32_t id = 0; id < m_states.size(); ++id) {
        uint64_t slot = m_states[id].hash & m_tableMask;
        while (m_table[slot] != kNone)
            slot = (slot + 1) & m_tableMask;
        m_table[slot] = id;
    }
}

uint32_t SubsetConstruction::intern(const std::vector<uint32_t> &k, int ctx, const std::vector<uint32_t> &p,
                                    bool hasStart)
{
    uint8_t kMask = 0;
    if (m_nfa.usedAssertions)
        for (uint32_t s : k)
            kMask |= m_nfa.states[s].mask;
    ctx = canonicalCtx(ctx, uint8_t(kMask | (hasStart ? m_startMask : 0)));

    uint64_t h = mix(uint64_t(ctx) * 4 + (hasStart ? 1 : 0), k.size());
    for (uint32_t s : k)
        h = mix(h, s);
    h = mix(h, 0x5bd1e995u + p.size());
    for (uint32_t s : p)
        h = mix(h, s);

    if (m_table.empty())
        grow();
    uint64_t slot = h & m_tableMask;
    for (;; slot = (slot + 1) & m_tableMask) {
        const uint32_t id = m_table[slot];
        if (id == kNone)
            break;
        const DState &d = m_states[id];
        if (d.hash == h && d.ctx == ctx && d.hasStart == uint8_t(hasStart) && d.kLen == k.size()
            && d.pLen == p.size() && std::equal(k.begin(), k.end(), m_kernelPool.begin() + d.kBegin)
            && std::equal(p.begin(), p.end(), m_patternPool.begin() + d.pBegin))
            return id;
    }
    if (m_states.size() >= m_maxStates) {
        m_exceeded = true;
        return 0;
    }
    const uint32_t id = uint32_t(m_states.size());
    m_states.push_back({ uint32_t(m_kernelPool.size()), uint32_t(k.size()), uint32_t(m_patternPool.size()),
                         uint32_t(p.size()), h, uint8_t(ctx), uint8_t(hasStart), kMask });
    m_kernelPool.insert(m_kernelPool.end(), k.begin(), k.end());
    m_patternPool.insert(m_patternPool.end(), p.begin(), p.end());
    m_table[slot] = id;
    if (m_states.size() * 2 > m_table.size())
        grow();
    return id;
}

void SubsetConstruction::precomputeStartSteps()
{
    m_startMask = m_nfa.states[m_nfa.start].mask;
    const bool needNext = m_startMask & (Nfa::MaskWord | Nfa::MaskFileEnd);
    for (int ctx = 0; ctx < 3; ++ctx) {
        auto &steps = m_startStep[size_t(ctx)];
        steps.assign(m_numClasses, {});
        for (int variant = 0; variant < (needNext ? 2 : 1); ++variant) {
            const Nfa::Next next = !needNext ? Nfa::Next::Unknown : variant ? Nfa::Next::Word : Nfa::Next::NonWord;
            m_nfa.closure(nullptr, 0, true, ctx, next, m_unknown);
            for (uint32_t s : m_unknown.consuming) {
                const Nfa::State &st = m_nfa.states[s];
                m_nfa.classSets[st.arg].forEach([&](uint32_t c) {
                    if (!needNext || m_nfa.classIsWord[c] == variant)
                        steps[c].push_back(st.out);
                });
            }
        }
        for (auto &v : steps) {
            std::sort(v.begin(), v.end());
            v.erase(std::unique(v.begin(), v.end()), v.end());
        }
    }
}

uint32_t SubsetConstruction::defaultTarget(bool hasStart, int ctx, uint32_t cls)
{
    uint32_t &slot = m_defaultTargets[(size_t(hasStart) * 3 + size_t(ctx)) * m_numClasses + cls];
    if (slot == kNone) {
        const int nextCtx = m_nfa.classIsWord[cls] ? Dfa::AfterWord : Dfa::AfterNonWord;
        slot = intern(hasStart ? m_startStep[size_t(ctx)][cls] : m_empty, nextCtx, m_empty, !m_anchored);
    }
    return slot;
}

void SubsetConstruction::process(uint32_t d, RawDfa &out)
{
    const DState state = m_states[d];
    const uint32_t *kernel = m_kernelPool.data() + state.kBegin;
    const bool needNext = state.kMask & (Nfa::MaskWord | Nfa::MaskFileEnd);

    m_nfa.closure(kernel, state.kLen, false, state.ctx, Nfa::Next::Unknown, m_unknown);
    const std::vector<uint32_t> &now = m_unknown.matches;
    m_prevWord.clear();
    m_prevNonWord.clear();
    m_eofOnly.clear();
    if (needNext) {
        m_nfa.closure(kernel, state.kLen, false, state.ctx, Nfa::Next::Word, m_word);
        m_nfa.closure(kernel, state.kLen, false, state.ctx, Nfa::Next::NonWord, m_nonWord);
        m_nfa.closure(kernel, state.kLen, false, state.ctx, Nfa::Next::Eof, m_eof);
        std::set_difference(m_word.matches.begin(), m_word.matches.end(), now.begin(), now.end(),
                            std::back_inserter(m_prevWord));
        std::set_difference(m_nonWord.matches.begin(), m_nonWord.matches.end(), now.begin(), now.end(),
                            std::back_inserter(m_prevNonWord));
        std::set_difference(m_eof.matches.begin(), m_eof.matches.end(), now.begin(), now.end(),
                            std::back_inserter(m_eofOnly));
    }

    m_entries.clear();
    for (uint32_t p : now)
        m_entries.push_back(Dfa::entry(p, Dfa::Now));
    for (uint32_t i = 0; i < state.pLen; ++i)
        m_entries.push_back(Dfa::entry(m_patternPool[state.pBegin + i], Dfa::Prev));
    for (uint32_t p : m_eofOnly)
        m_entries.push_back(Dfa::entry(p, Dfa::Eof));
    std::sort(m_entries.begin(), m_entries.end());
    out.accepts.insert(out.accepts.end(), m_entries.begin(), m_entries.end());
    out.acceptBegin.push_back(uint32_t(out.accepts.size()));

    // Bucket the kernel's steps per class; with next-byte assertions, word and non-word classes step from
    // their own closures.
    auto bucketFrom = [&](const Nfa::Closure &cl, int variant) {
        for (uint32_t s : cl.consuming) {
            const Nfa::State &st = m_nfa.states[s];
            m_nfa.classSets[st.arg].forEach([&](uint32_t c) {
                if (variant >= 0 && m_nfa.classIsWord[c] != variant)
                    return;
                m_buckets[c].push_back(st.out);
                if (!m_isTouched[c]) {
                    m_isTouched[c] = 1;
                    m_touched.push_back(c);
                }
            });
        }
    };
    if (needNext) {
        bucketFrom(m_word, 1);
        bucketFrom(m_nonWord, 0);
    } else {
        bucketFrom(m_unknown, -1);
    }

    const size_t rowBegin = out.trans.size();
    out.trans.resize(rowBegin + m_numClasses);
    const bool hasStart = state.hasStart;
    for (uint32_t c = 0; c < m_numClasses; ++c) {
        const std::vector<uint32_t> &prev = !needNext ? m_empty : m_nfa.classIsWord[c] ? m_prevWord : m_prevNonWord;
        uint32_t target;
        if (!m_isTouched[c] && prev.empty()) {
            target = defaultTarget(hasStart, state.ctx, c);
        } else {
            std::vector<uint32_t> &b = m_buckets[c];
            std::sort(b.begin(), b.end());
            b.erase(std::unique(b.begin(), b.end()), b.end());
            if (hasStart) {
                const std::vector<uint32_t> &s0 = m_startStep[state.ctx][c];
                m_kernel.clear();
                std::set_union(b.begin(), b.end(), s0.begin(), s0.end(), std::back_inserter(m_kernel));
            } else {
                m_kernel.assign(b.begin(), b.end());
            }
            target = intern(m_kernel, m_nfa.classIsWord[c] ? Dfa::AfterWord : Dfa::AfterNonWord, prev, !m_anchored);
        }
        out.trans[rowBegin + c] = target;
        if (m_exceeded)
            break;
    }
    for (uint32_t c : m_touched) {
        m_buckets[c].clear();
        m_isTouched[c] = 0;
    }
    m_touched.clear();
}

bool SubsetConstruction::run(RawDfa &out)
{
    out = RawDfa();
    out.numClasses = m_numClasses;
    m_buckets.assign(m_numClasses, {});
    m_isTouched.assign(m_numClasses, 0);
    m_defaultTargets.assign(size_t(6) * m_numClasses, kNone);
    precomputeStartSteps();

    for (int ctx = 0; ctx < 3; ++ctx)
        out.start[size_t(ctx)] = intern(m_empty, ctx, m_empty, true);
    out.acceptBegin.push_back(0);
    for (uint32_t d = 0; d < m_states.size() && !m_exceeded; ++d)
        process(d, out);
    if (m_exceeded)
        return false;
    out.numStates = uint32_t(m_states.size());
    return true;
}

/// Hopcroft's partition refinement, starting from the partition by exact accept lists.
RawDfa minimize(const RawDfa &in)
{
    const uint32_t n = in.numStates;
    const uint32_t numClasses = in.numClasses;

    std::vector<uint32_t> elems(n);
    std::iota(elems.begin(), elems.end(), 0);
    auto acceptLess = [&](uint32_t a, uint32_t b) {
        return std::lexicographical_compare(in.accepts.begin() + in.acceptBegin[a],
                                            in.accepts.begin() + in.acceptBegin[a + 1],
                                            in.accepts.begin() + in.acceptBegin[b],
                                            in.accepts.begin() + in.acceptBegin[b + 1]);
    };
    std::stable_sort(elems.begin(), elems.end(), acceptLess);

    std::vector<uint32_t> loc(n), blockOf(n), first, end, marked;
    first.reserve(n);
    end.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
        if (i == 0 || acceptLess(elems[i - 1], elems[i])) {
            if (i)
                end.push_back(i);
            first.push_back(i);
        }
        loc[elems[i]] = i;
        blockOf[elems[i]] = uint32_t(first.size() - 1);
    }
    end.push_back(n);
    marked.assign(first.size(), 0);

    // Inverse transitions, grouped by (target, class).
    std::vector<uint32_t> invBegin(size_t(n) * numClasses + 1, 0);
    for (uint32_t s = 0; s < n; ++s) {
        const uint32_t *row = in.trans.data() + size_t(s) * numClasses;
        for (uint32_t c = 0; c < numClasses; ++c)
            ++invBegin[size_t(row[c]) * numClasses + c + 1];
    }
    for (size_t i = 1; i < invBegin.size(); ++i)
        invBegin[i] += invBegin[i - 1];
    std::vector<uint32_t> invSource(in.trans.size());
    for (uint32_t s = 0; s < n; ++s) {
        // invBegin[key] serves as the fill cursor of the list before key, and ends as its begin.
        const uint32_t *row = in.trans.data() + size_t(s) * numClasses;
        for (uint32_t c = 0; c < numClasses; ++c)
            invSource[invBegin[size_t(row[c]) * numClasses + c]++] = s;
    }
    for (size_t i = invBegin.size() - 1; i > 0; --i)
        invBegin[i] = invBegin[i - 1];
    invBegin[0] = 0;

    std::vector<uint8_t> inWork(size_t(n) * numClasses, 0);
    std::vector<uint64_t> work;
    auto push = [&](uint32_t block, uint32_t c) {
        uint8_t &flag = inWork[size_t(block) * numClasses + c];
        if (!flag) {
            flag = 1;
            work.push_back(uint64_t(block) << 32 | c);
        }
    };
    // Every initial block but the largest is a splitter: the largest is the union of the others' complement.
    uint32_t largest = 0;
    for (uint32_t b = 0; b < first.size(); ++b)
        if (end[b] - first[b] > end[largest] - first[largest])
            largest = b;
    for (uint32_t b = 0; b < first.size(); ++b)
        if (b != largest)
            for (uint32_t c = 0; c < numClasses; ++c)
                push(b, c);

    std::vector<uint32_t> splitter, touched;
    while (!work.empty()) {
        const uint32_t block = uint32_t(work.back() >> 32);
        const uint32_t c = uint32_t(work.back());
        work.pop_back();
        inWork[size_t(block) * numClasses + c] = 0;

        splitter.assign(elems.begin() + first[block], elems.begin() + end[block]);
        for (uint32_t t : splitter) {
            const size_t key = size_t(t) * numClasses + c;
            for (uint32_t i = invBegin[key]; i < invBegin[key + 1]; ++i) {
                const uint32_t s = invSource[i];
                const uint32_t x = blockOf[s];
                const uint32_t pos = first[x] + marked[x];
                if (loc[s] < pos)
                    continue; // already marked
                const uint32_t other = elems[pos];
                std::swap(elems[pos], elems[loc[s]]);
                loc[other] = loc[s];
                loc[s] = pos;
                if (marked[x]++ == 0)
                    touched.push_back(x);
            }
        }
        for (uint32_t x : touched) {
            const uint32_t m = marked[x];
            marked[x] = 0;
            const uint32_t size = end[x] - first[x];
            if (m == size)
                continue;
            // The smaller part becomes the new block, so each state is relabelled O(log n) times.
            const uint32_t y = uint32_t(first.size());
            if (m <= size - m) {
                first.push_back(first[x]);
                end.push_back(first[x] + m);
                first[x] += m;
            } else {
                first.push_back(first[x] + m);
                end.push_back(end[x]);
                end[x] = first[x] + m;
            }
            marked.push_back(0);
            for (uint32_t i = first[y]; i < end[y]; ++i)
                blockOf[elems[i]] = y;
            // Hopcroft: where x was pending it stays pending and y joins it; elsewhere the smaller half
            // suffices. y is the smaller half, so both cases push y.
            for (uint32_t a = 0; a < numClasses; ++a)
                push(y, a);
        }
        touched.clear();
    }

    // Number the blocks in order of their smallest original state, which keeps start states first.
    std::vector<uint32_t> newId(first.size(), kNone), representative;
    for (uint32_t s = 0; s < n; ++s) {
        uint32_t &id = newId[blockOf[s]];
        if (id == kNone) {
            id = uint32_t(representative.size());
            representative.push_back(s);
        }
    }
    RawDfa out;
    out.numStates = uint32_t(representative.size());
    out.numClasses = numClasses;
    out.trans.reserve(size_t(out.numStates) * numClasses);
    out.acceptBegin.push_back(0);
    for (uint32_t r : representative) {
        for (uint32_t c = 0; c < numClasses; ++c)
            out.trans.push_back(newId[blockOf[in.trans[size_t(r) * numClasses + c]]]);
        out.accepts.insert(out.accepts.end(), in.accepts.begin() + in.acceptBegin[r],
                           in.accepts.begin() + in.acceptBegin[r + 1]);
        out.acceptBegin.push_back(uint32_t(out.accepts.size()));
    }
    for (size_t i = 0; i < 3; ++i)
        out.start[i] = newId[blockOf[in.start[i]]];
    return out;
}

Dfa toDfa(const RawDfa &raw, const Nfa &nfa, const std::vector<DfaBuilder::Input> &patterns)
{
    Dfa dfa;
    const uint32_t numClasses = raw.numClasses;
    dfa.numStates = raw.numStates;
    dfa.numClasses = numClasses;
    dfa.byteClass = nfa.byteClass;
    dfa.transitions.resize(raw.trans.size());
    for (size_t i = 0; i < raw.trans.size(); ++i) {
        const uint32_t t = raw.trans[i];
        dfa.transitions[i] = t * numClasses | (raw.hasReportedEntries(t) ? Dfa::kAcceptFlag : 0);
    }
    for (size_t i = 0; i < 3; ++i)
        dfa.start[i] = raw.start[i] * numClasses;
    dfa.acceptIndex = raw.acceptBegin;
    dfa.acceptEntries.resize(raw.accepts.size());
    for (size_t i = 0; i < raw.accepts.size(); ++i) {
        const uint32_t e = raw.accepts[i];
        dfa.acceptEntries[i] = Dfa::entry(uint32_t(patterns[Dfa::entryPattern(e)].patternId), Dfa::entryKind(e));
    }
    for (uint32_t s = 0; s < raw.numStates && dfa.dead == Dfa::kNoDeadState; ++s) {
        if (raw.acceptBegin[s] != raw.acceptBegin[s + 1])
            continue;
        const uint32_t *row = raw.trans.data() + size_t(s) * numClasses;
        if (std::all_of(row, row + numClasses, [s](uint32_t t) { return t == s; }))
            dfa.dead = s * numClasses;
    }
    return dfa;
}

DfaBuilder::Result buildImpl(const std::vector<DfaBuilder::Input> &patterns, int maxStates, bool anchored,
                             bool minimized)
{
    DfaBuilder::Result result;
    std::vector<const Regex *> regexes;
    regexes.reserve(patterns.size());
    for (const DfaBuilder::Input &in : patterns)
        regexes.push_back(in.regex);
    Nfa nfa;
    if (!nfa.build(regexes)) {
        result.exceededBudget = true;
        return result;
    }
    // Premultiplied ids must stay below the accept flag: numStates * numClasses < 2^31.
    const uint32_t limit = std::min<uint32_t>(uint32_t(std::max(maxStates, 1)), Dfa::kStateMask / nfa.numClasses);
    SubsetConstruction subset(nfa, anchored, limit);
    RawDfa raw;
    if (!subset.run(raw)) {
        result.exceededBudget = true;
        result.statesBeforeMinimization = int(limit) + 1;
        return result;
    }
    result.statesBeforeMinimization = int(raw.numStates);
    result.dfa = toDfa(minimized ? minimize(raw) : raw, nfa, patterns);
    return result;
}

} // namespace

DfaBuilder::Result DfaBuilder::build(const std::vector<Input> &patterns, int maxStates, bool anchored)
{
    return buildImpl(patterns, maxStates, anchored, true);
}

DfaBuilder::Result buildUnminimizedDfa(const std::vector<DfaBuilder::Input> &patterns, int maxStates, bool anchored)
{
    return buildImpl(patterns, maxStates, anchored, false);
}

} // namespace Hitscope
