// SPDX-License-Identifier: GPL-3.0-or-later
#include "subsetconstruction.h"

#include <algorithm>
#include <iterator>

namespace Hitscope {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

} // namespace

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
    const size_t rowBegin = out.trans.size();
    out.trans.resize(rowBegin + m_numClasses);
    processRow(d, out.trans.data() + rowBegin, m_entries);
    out.accepts.insert(out.accepts.end(), m_entries.begin(), m_entries.end());
    out.acceptBegin.push_back(uint32_t(out.accepts.size()));
}

void SubsetConstruction::processRow(uint32_t d, uint32_t *row, std::vector<uint32_t> &entries)
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

    entries.clear();
    for (uint32_t p : now)
        entries.push_back(Dfa::entry(p, Dfa::Now));
    for (uint32_t i = 0; i < state.pLen; ++i)
        entries.push_back(Dfa::entry(m_patternPool[state.pBegin + i], Dfa::Prev));
    for (uint32_t p : m_eofOnly)
        entries.push_back(Dfa::entry(p, Dfa::Eof));
    std::sort(entries.begin(), entries.end());

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
        row[c] = target;
        if (m_exceeded)
            break;
    }
    for (uint32_t c : m_touched) {
        m_buckets[c].clear();
        m_isTouched[c] = 0;
    }
    m_touched.clear();
}

void SubsetConstruction::begin()
{
    m_buckets.assign(m_numClasses, {});
    m_isTouched.assign(m_numClasses, 0);
    m_defaultTargets.assign(size_t(6) * m_numClasses, kNone);
    precomputeStartSteps();
    for (int ctx = 0; ctx < 3; ++ctx)
        m_starts[size_t(ctx)] = intern(m_empty, ctx, m_empty, true);
}

uint32_t SubsetConstruction::reset(uint32_t keep)
{
    const DState kept = m_states[keep];
    const std::vector<uint32_t> kernel(m_kernelPool.begin() + kept.kBegin, m_kernelPool.begin() + kept.kBegin + kept.kLen);
    const std::vector<uint32_t> prev(m_patternPool.begin() + kept.pBegin, m_patternPool.begin() + kept.pBegin + kept.pLen);
    m_states.clear();
    m_kernelPool.clear();
    m_patternPool.clear();
    m_table.clear();
    m_tableMask = 0;
    m_defaultTargets.assign(size_t(6) * m_numClasses, kNone);
    for (int ctx = 0; ctx < 3; ++ctx)
        m_starts[size_t(ctx)] = intern(m_empty, ctx, m_empty, true);
    return intern(kernel, kept.ctx, prev, kept.hasStart);
}

bool SubsetConstruction::run(RawDfa &out)
{
    out = RawDfa();
    out.numClasses = m_numClasses;
    begin();
    out.start = m_starts;
    out.acceptBegin.push_back(0);
    for (uint32_t d = 0; d < m_states.size() && !m_exceeded; ++d)
        process(d, out);
    if (m_exceeded)
        return false;
    out.numStates = uint32_t(m_states.size());
    return true;
}


} // namespace Hitscope
