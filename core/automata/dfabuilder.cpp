// SPDX-License-Identifier: GPL-3.0-or-later
#include "dfabuilder.h"

#include <algorithm>
#include <numeric>

#include "automata/subsetconstruction.h"
#include "pattern/nfa.h"

namespace Hitscope {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

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
