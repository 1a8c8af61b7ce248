// SPDX-License-Identifier: GPL-3.0-or-later
#include "startfinder.h"

#include <algorithm>

#include "automata/dfabuilder.h"
#include "automata/nfa.h"

namespace Hitscope {

namespace {

/// Anchored reversed DFAs stay small for any pattern the catalog accepts; past this, simulate the NFA.
constexpr int kMaxReversedStates = 100000;

/// The context before a backwards scan that starts at `end`: the byte after the match, or the end of the
/// file (which is the start of the reversed text).
int reversedContext(int64_t end, int64_t fileSize, const StartFinder::ByteAt &byteAt)
{
    if (end + 1 >= fileSize)
        return Dfa::AtFileStart;
    return isWordByte(byteAt(end + 1)) ? Dfa::AfterWord : Dfa::AfterNonWord;
}

/// The same search without a DFA: the reversed pattern's NFA, stepped one state set at a time.
int64_t simulateNfa(const Regex &reversed, int64_t end, int64_t fileSize, const StartFinder::ByteAt &byteAt)
{
    Nfa nfa;
    if (!nfa.build({ &reversed }))
        return -1;
    Nfa::Closure closure;
    std::vector<uint32_t> kernel;
    int ctx = reversedContext(end, fileSize, byteAt);
    int64_t best = -1;
    for (int64_t j = end; j >= 0; --j) {
        const uint8_t byte = byteAt(j);
        // Matches of the kernel here end at j + 1, now that the byte after them is known.
        nfa.closure(kernel.data(), kernel.size(), j == end, ctx,
                    isWordByte(byte) ? Nfa::Next::Word : Nfa::Next::NonWord, closure);
        if (!closure.matches.empty())
            best = j + 1;
        kernel.clear();
        const uint32_t cls = nfa.byteClass[byte];
        for (uint32_t s : closure.consuming)
            if (nfa.classSets[nfa.states[s].arg].test(cls))
                kernel.push_back(nfa.states[s].out);
        std::sort(kernel.begin(), kernel.end());
        kernel.erase(std::unique(kernel.begin(), kernel.end()), kernel.end());
        ctx = isWordByte(byte) ? Dfa::AfterWord : Dfa::AfterNonWord;
        if (kernel.empty())
            return best;
    }
    nfa.closure(kernel.data(), kernel.size(), false, ctx, Nfa::Next::Eof, closure);
    return closure.matches.empty() ? best : 0;
}

} // namespace

StartFinder::StartFinder(const RuleSet &rules)
    : m_rules(rules)
    , m_reversed(rules.patterns.size())
{
    m_fixedLength.reserve(rules.patterns.size());
    for (const Pattern &p : rules.patterns) {
        const int minLength = p.regex.isValid() ? p.regex.minLength() : 0;
        const int maxLength = p.regex.isValid() ? p.regex.maxLength() : 0;
        m_fixedLength.push_back(minLength > 0 && minLength == maxLength ? minLength : -1);
    }
}

StartFinder::~StartFinder() = default;

int64_t StartFinder::leftmostStart(int patternId, int64_t end, int64_t fileSize, const ByteAt &byteAt) const
{
    if (patternId < 0 || size_t(patternId) >= m_fixedLength.size() || end < 0 || end >= fileSize)
        return -1;
    if (m_fixedLength[size_t(patternId)] > 0)
        return end - m_fixedLength[size_t(patternId)] + 1;

    const Regex &regex = m_rules.patterns[size_t(patternId)].regex;
    const Dfa *dfa = nullptr;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        std::unique_ptr<Dfa> &slot = m_reversed[size_t(patternId)];
        if (!slot) {
            const Regex reversed = regex.reversed();
            DfaBuilder::Result r = DfaBuilder::build({ { &reversed, patternId } }, kMaxReversedStates, true);
            // An empty Dfa marks a pattern whose reversed DFA is too large: it is simulated instead.
            slot = std::make_unique<Dfa>(r.exceededBudget ? Dfa() : std::move(r.dfa));
        }
        dfa = slot.get();
    }
    if (dfa->numStates == 0)
        return simulateNfa(regex.reversed(), end, fileSize, byteAt);

    // Walk backwards from `end`: a reversed match ending at j is a match starting at j. The smallest start
    // wins; the walk stops once no reversed match can end any more.
    uint32_t s = dfa->start[size_t(reversedContext(end, fileSize, byteAt))];
    int64_t best = -1;
    const uint32_t numClasses = dfa->numClasses;
    for (int64_t j = end; j >= 0; --j) {
        const uint32_t e = dfa->transitions[s + dfa->byteClass[byteAt(j)]];
        s = e & Dfa::kStateMask;
        if (e & Dfa::kAcceptFlag) {
            const uint32_t state = s / numClasses;
            for (uint32_t i = dfa->acceptIndex[state]; i < dfa->acceptIndex[state + 1]; ++i) {
                const Dfa::AcceptKind kind = Dfa::entryKind(dfa->acceptEntries[i]);
                if (kind == Dfa::Now)
                    best = j;
                else if (kind == Dfa::Prev && (best < 0 || best > j + 1))
                    best = j + 1;
            }
        }
        if (s == dfa->dead)
            return best;
    }
    const uint32_t state = s / numClasses;
    for (uint32_t i = dfa->acceptIndex[state]; i < dfa->acceptIndex[state + 1]; ++i)
        if (Dfa::entryKind(dfa->acceptEntries[i]) == Dfa::Eof)
            return 0;
    return best;
}

} // namespace Hitscope
