// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>

#include "automata/atomprefilter.h"
#include "engine/filebatch.h"

namespace Hitscope {

/**
 * Where the atoms of prefiltered groups occur, per group and block of the haystack. A group's DFA then runs
 * over each marked block widened by the group's longest match on both sides: that covers the window of
 * every atom occurrence in the block, so it finds every match. Blocks rather than exact windows: marking is
 * a store, where exact windows would need millions of atom hits sorted (runs of zero bytes, say). The blocks
 * are small, so that an atom found once walks little more than its own window; a bit each, so that the
 * unmarked stretches are passed over a word at a time.
 *
 * The bits are kept from batch to batch and only the groups a batch marked are cleared for the next: a
 * collection's thousand groups need megabytes of bits per batch, and fresh zeroed memory each time cost a
 * fifth of a scan in page faults and memset.
 */
class AtomMarks
{
public:
    static constexpr int kBlockShift = 6;

    /// Clears what the previous batch marked and makes room for `batch`. Not concurrent with marking.
    void begin(const AtomPrefilter &pre, const FileBatch &batch, size_t groups)
    {
        for (size_t g = 0; g < m_groups; ++g) {
            if (!m_any[g].load(std::memory_order_relaxed))
                continue;
            for (size_t w = g * m_words; w < (g + 1) * m_words; ++w)
                m_bits[w].store(0, std::memory_order_relaxed);
            m_any[g].store(0, std::memory_order_relaxed);
        }
        m_pre = &pre;
        m_batch = &batch;
        m_groups = groups;
        m_words = (size_t(batch.used >> kBlockShift) + 1 + 63) / 64;
        if (groups * m_words > m_bitCapacity) {
            m_bitCapacity = groups * m_words;
            m_bits.reset(new std::atomic<uint64_t>[m_bitCapacity]());
        }
        if (groups > m_anyCapacity) {
            m_anyCapacity = groups;
            m_any.reset(new std::atomic<uint8_t>[m_anyCapacity]());
        }
    }

    /// Occurrences of atom `atom` (an index into AtomPrefilter::atomGroup) ending at file offsets
    /// [firstEnd, lastEnd] (a run of a repeated byte; one occurrence when equal).
    void mark(uint32_t batchFile, int64_t firstEnd, int64_t lastEnd, uint32_t atom)
    {
        const BatchFile &bf = m_batch->files[batchFile];
        const int64_t length = m_pre->atomLength[atom];
        const int64_t h0 = bf.dataOffset + (std::max(firstEnd - length + 1, bf.holdBegin) - bf.holdBegin);
        const int64_t h1 = bf.dataOffset + (std::max(lastEnd - length + 1, bf.holdBegin) - bf.holdBegin);
        for (int64_t h = h0; h <= h1; h = ((h >> kBlockShift) + 1) << kBlockShift)
            markAt(m_pre->atomGroup[atom], h);
    }

    /// An occurrence of one of `group`'s atoms starting at haystack offset h.
    void markAt(int group, int64_t h)
    {
        const size_t block = size_t(h >> kBlockShift);
        std::atomic<uint64_t> &word = m_bits[size_t(group) * m_words + block / 64];
        const uint64_t bit = uint64_t(1) << (block % 64);
        // Atoms come in runs (a line of dashes, zero bytes): most marks find their bit set already.
        if (!(word.load(std::memory_order_relaxed) & bit)) {
            word.fetch_or(bit, std::memory_order_relaxed);
            if (!m_any[size_t(group)].load(std::memory_order_relaxed))
                m_any[size_t(group)].store(1, std::memory_order_relaxed);
        }
    }

    /// Whether any block of `group` is marked.
    bool any(int group) const { return m_any[size_t(group)].load(std::memory_order_relaxed); }

    /// The first marked block of `group` in [from, to], or -1.
    int64_t nextMarked(int group, int64_t from, int64_t to) const
    {
        const std::atomic<uint64_t> *bits = &m_bits[size_t(group) * m_words];
        for (int64_t b = from; b <= to;) {
            const uint64_t w = bits[size_t(b) / 64].load(std::memory_order_relaxed) >> (b % 64);
            if (w != 0) {
                b += std::countr_zero(w);
                return b <= to ? b : -1;
            }
            b = (b / 64 + 1) * 64;
        }
        return -1;
    }

private:
    const AtomPrefilter *m_pre = nullptr;
    const FileBatch *m_batch = nullptr;
    size_t m_groups = 0;
    size_t m_words = 0; ///< per group
    std::unique_ptr<std::atomic<uint64_t>[]> m_bits;
    size_t m_bitCapacity = 0;
    std::unique_ptr<std::atomic<uint8_t>[]> m_any; ///< per group
    size_t m_anyCapacity = 0;
};

} // namespace Hitscope
