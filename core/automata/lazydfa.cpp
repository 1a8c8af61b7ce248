// SPDX-License-Identifier: GPL-3.0-or-later
#include "lazydfa.h"

#include <algorithm>

#include "automata/subsetconstruction.h"

namespace Hitscope {

LazyDfa::LazyDfa(const std::vector<DfaBuilder::Input> &patterns)
{
    std::vector<const Regex *> regexes;
    regexes.reserve(patterns.size());
    for (const DfaBuilder::Input &in : patterns) {
        regexes.push_back(in.regex);
        m_patternIds.push_back(in.patternId);
    }
    m_valid = !regexes.empty() && m_nfa.build(regexes);
}

LazyDfa::~LazyDfa() = default;

LazyDfa::Cache::Cache(const LazyDfa &dfa, size_t maxBytes)
    : m_dfa(dfa)
    , m_subset(std::make_unique<SubsetConstruction>(dfa.m_nfa, false, UINT32_MAX - 1))
    , m_numClasses(dfa.m_nfa.numClasses)
    , m_byteClass(dfa.m_nfa.byteClass.data())
{
    // A state costs its row and a few words; a cache holds at least a few rows' worth so that a walk
    // always makes progress between resets.
    m_maxStates = std::max<size_t>(8 * size_t(m_numClasses) + 16, maxBytes / (size_t(m_numClasses) * 4 + 16));
    m_subset->begin();
    grow(m_subset->numStates());
    for (int ctx = 0; ctx < 3; ++ctx)
        ensureRow(m_subset->startState(ctx));
}

LazyDfa::Cache::~Cache() = default;

uint32_t LazyDfa::Cache::start(int ctx) const
{
    return m_subset->startState(ctx);
}

bool LazyDfa::Cache::idle(uint32_t s) const
{
    return m_subset->idle(s);
}

size_t LazyDfa::Cache::bytes() const
{
    return m_trans.capacity() * 4 + m_entries.capacity() * 4 + m_entryBegin.capacity() * 8
        + m_rowDone.capacity() * 2;
}

void LazyDfa::Cache::grow(uint32_t states)
{
    m_trans.resize(size_t(states) * m_numClasses, kUnknown);
    m_rowDone.resize(states, 0);
    m_reports.resize(states, 0);
    m_entryBegin.resize(states, 0);
    m_entryEnd.resize(states, 0);
}

void LazyDfa::Cache::ensureRow(uint32_t s)
{
    if (m_rowDone[s])
        return;
    uint32_t *row = m_trans.data() + size_t(s) * m_numClasses;
    m_subset->processRow(s, row, m_scratch);
    for (uint32_t c = 0; c < m_numClasses; ++c)
        row[c] |= kPending;
    m_rowDone[s] = 1;
    m_entryBegin[s] = uint32_t(m_entries.size());
    bool reports = false;
    for (uint32_t e : m_scratch) {
        const Dfa::AcceptKind kind = Dfa::entryKind(e);
        reports = reports || kind != Dfa::Eof;
        m_entries.push_back(Dfa::entry(uint32_t(m_dfa.m_patternIds[Dfa::entryPattern(e)]), kind));
    }
    m_entryEnd[s] = uint32_t(m_entries.size());
    m_reports[s] = reports;
    grow(m_subset->numStates()); // the row interned its targets
}

uint32_t LazyDfa::Cache::room(uint32_t s)
{
    if (m_subset->numStates() + m_numClasses <= m_maxStates)
        return s;
    // Full: forget every state but this one and the starts, and go on from it.
    s = m_subset->reset(s);
    ++m_resets;
    const uint32_t n = m_subset->numStates();
    m_trans.assign(size_t(n) * m_numClasses, kUnknown);
    m_rowDone.assign(n, 0);
    m_reports.assign(n, 0);
    m_entryBegin.assign(n, 0);
    m_entryEnd.assign(n, 0);
    m_entries.clear();
    for (int ctx = 0; ctx < 3; ++ctx)
        ensureRow(m_subset->startState(ctx));
    return s;
}

uint32_t LazyDfa::Cache::compute(uint32_t s, uint8_t b)
{
    // Every state handed out has its row (and so its entries): s has, its target may not.
    uint32_t *slot = &m_trans[size_t(s) * m_numClasses + m_byteClass[b]];
    uint32_t t = *slot & ~kPending;
    if (!m_rowDone[t]) {
        const size_t before = m_resets;
        t = room(t);
        ensureRow(t);
        // A reset forgot s and its row, slot included.
        slot = m_resets == before ? &m_trans[size_t(s) * m_numClasses + m_byteClass[b]] : nullptr;
    }
    if (slot)
        *slot = t | (m_reports[t] ? kReports : 0);
    return t;
}

} // namespace Hitscope
