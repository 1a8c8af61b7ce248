// SPDX-License-Identifier: GPL-3.0-or-later
#include "testutildfa.h"

#include <QStringBuilder>

#include "testutilregex.h"

#include "pattern/regex.h"

using Hitscope::Dfa;

namespace TestUtil {

Dfa::StartContext startContext(const QByteArray &text, qsizetype begin)
{
    if (begin <= 0)
        return Dfa::AtFileStart;
    return Hitscope::isWordByte(uint8_t(text[begin - 1])) ? Dfa::AfterWord : Dfa::AfterNonWord;
}

std::vector<DfaHit> scanDfa(const Dfa &dfa, const QByteArray &text, qsizetype begin)
{
    std::vector<DfaHit> hits;
    if (dfa.numStates == 0)
        return hits;
    uint32_t s = dfa.start[size_t(startContext(text, begin))];
    for (qsizetype pos = begin; pos < text.size(); ++pos) {
        const uint32_t e = dfa.transitions[(s & ~Dfa::kAcceptFlag) + dfa.byteClass[uint8_t(text[pos])]];
        s = e;
        if (!(e & Dfa::kAcceptFlag))
            continue;
        const uint32_t state = (e & Dfa::kStateMask) / dfa.numClasses;
        for (uint32_t i = dfa.acceptIndex[state]; i < dfa.acceptIndex[state + 1]; ++i) {
            const uint32_t entry = dfa.acceptEntries[i];
            if (Dfa::entryKind(entry) == Dfa::Now)
                hits.push_back({ int(Dfa::entryPattern(entry)), pos });
            else if (Dfa::entryKind(entry) == Dfa::Prev)
                hits.push_back({ int(Dfa::entryPattern(entry)), pos - 1 });
        }
    }
    if (text.size() > begin) {
        const uint32_t state = (s & Dfa::kStateMask) / dfa.numClasses;
        for (uint32_t i = dfa.acceptIndex[state]; i < dfa.acceptIndex[state + 1]; ++i)
            if (Dfa::entryKind(dfa.acceptEntries[i]) == Dfa::Eof)
                hits.push_back({ int(Dfa::entryPattern(dfa.acceptEntries[i])), text.size() - 1 });
    }
    return hits;
}

QByteArray checkDfaTables(const Dfa &dfa)
{
    const uint64_t n = dfa.numStates;
    const uint64_t c = dfa.numClasses;
    if (n == 0 || c == 0 || c > 256)
        return "empty tables or bad class count";
    if (n * c >= (uint64_t(1) << 31))
        return "numStates * numClasses overflows 31 bits";
    if (dfa.transitions.size() != n * c)
        return "transitions size";
    if (dfa.acceptIndex.size() != n + 1 || dfa.acceptIndex.front() != 0
        || dfa.acceptIndex.back() != dfa.acceptEntries.size())
        return "acceptIndex size or bounds";
    for (size_t s = 0; s < n; ++s)
        if (dfa.acceptIndex[s] > dfa.acceptIndex[s + 1])
            return "acceptIndex not monotonic";
    std::vector<bool> used(c, false);
    for (uint8_t k : dfa.byteClass) {
        if (k >= c)
            return "byte class out of range";
        used[k] = true;
    }
    for (bool u : used)
        if (!u)
            return "a class without bytes";
    auto reports = [&](uint64_t state) {
        for (uint32_t i = dfa.acceptIndex[state]; i < dfa.acceptIndex[state + 1]; ++i)
            if (Dfa::entryKind(dfa.acceptEntries[i]) != Dfa::Eof)
                return true;
        return false;
    };
    for (uint32_t e : dfa.transitions) {
        const uint32_t t = e & Dfa::kStateMask;
        if (t % c != 0 || t / c >= n)
            return "transition target not a premultiplied state";
        if (bool(e & Dfa::kAcceptFlag) != reports(t / c))
            return "accept flag does not match the target's Now/Prev entries";
    }
    for (uint32_t s : dfa.start)
        if ((s & Dfa::kAcceptFlag) || s % c != 0 || s / c >= n)
            return "bad start state";
    for (uint32_t e : dfa.acceptEntries)
        if (Dfa::entryKind(e) > Dfa::Eof)
            return "bad accept kind";
    if (dfa.dead != Dfa::kNoDeadState) {
        if (dfa.dead % c != 0 || dfa.dead / c >= n)
            return "bad dead state";
        const uint64_t d = dfa.dead / c;
        if (dfa.acceptIndex[d] != dfa.acceptIndex[d + 1])
            return "dead state accepts";
        for (uint64_t k = 0; k < c; ++k)
            if (dfa.transitions[d * c + k] != dfa.dead)
                return "dead state leaves itself";
    }
    return {};
}

std::vector<Hitscope::DfaBuilder::Input> PatternGroup::inputs() const
{
    std::vector<Hitscope::DfaBuilder::Input> in;
    for (size_t i = 0; i < regexes.size(); ++i)
        in.push_back({ &regexes[i], ids[i] });
    return in;
}

QByteArray PatternGroup::describe() const
{
    QByteArray s;
    for (size_t i = 0; i < regexes.size(); ++i)
        s += "  #" + QByteArray::number(ids[i]) + " "
            + (regexes[i].isValid() ? describeRegex(regexes[i], regexes[i].root) : QByteArray("<invalid>")) + "\n";
    return s;
}

} // namespace TestUtil
