// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "automata/sequencescreen.h"

namespace Hitscope {

/**
 * The GPU's half of the atom prefilter: which 64-byte blocks of a batch may hold a sequence of the screens
 * (every entry AtomPrefilter::addEntry takes: the screened patterns' sequences and the atoms of the windowed
 * ones). Each sequence gets one key, one to four neighbouring positions where its bytes are rarest (a nocase
 * letter or a nibble gives several exact keys). The kernel (shaders/keyscreen.comp) looks up every byte position
 * of the batch: one-byte and two-byte keys in exact bit tables, three- and four-byte keys in a bitmap of their
 * hashes and, where its bit is set, in an exact hash table; a block where a key starts is marked. A match holds
 * its sequence's key, so the host's exact screens need look only at the ends the marked blocks allow (a key's
 * start plus the longest sequence): thousands of sequences cost one pass on the GPU, and the host's work is
 * in proportion to where keys occur, not to the batch.
 *
 * The words are the kernel's tables, in one buffer; keyscreen.comp documents the layout.
 */
class KeyFilter
{
public:
    using Sequence = SequenceScreen::Sequence;
    static constexpr int kBlockShift = 6;
    /// The hash bitmap of three- and four-byte keys: 2^17 bits, in shared memory with the one- and two-byte
    /// tables (24 KiB of the 32 KiB lavapipe offers).
    static constexpr int kBitmapLog2 = 17;
    static constexpr int kHeaderWords = 8;
    static constexpr int kSharedWords = 8 + 2048 + (1 << kBitmapLog2) / 32;
    /// At most this many exact keys of three or four positions per sequence (else a shorter key).
    static constexpr size_t kMaxVariants = 64;

    void add(const Sequence &sequence);
    void build();
    bool empty() const { return m_sequences == 0; }
    size_t sequences() const { return m_sequences; }
    /// Exact keys of each length (one to four positions).
    size_t keysOfLength(int length) const { return length >= 1 && length <= 4 ? m_keyCount[size_t(length - 1)] : 0; }
    const std::vector<uint32_t> &words() const { return m_words; }
    /// The longest sequence: a key starting at s marks ends in [s, s + longest - 1].
    int longest() const { return m_longest; }
    /// What the kernel decides at data[0], with `available` bytes readable there (tests compare the two).
    bool keyAt(const uint8_t *data, int64_t available) const;

    static uint32_t quadBit(uint32_t key) { return (key * 0x9E3779B1u) >> (32 - kBitmapLog2); }
    static uint32_t tripleBit(uint32_t key) { return (key * 0xC2B2AE35u) >> (32 - kBitmapLog2); }
    static uint32_t quadSlot(uint32_t key, int shift) { return (key * 0x85EBCA6Bu) >> shift; }
    static uint32_t tripleSlot(uint32_t key, int shift) { return (key * 0x27D4EB2Fu) >> shift; }

private:
    std::vector<uint32_t> m_quads, m_triples, m_pairs, m_bytes; // exact keys before build()
    std::vector<uint32_t> m_words;
    size_t m_sequences = 0;
    std::array<size_t, 4> m_keyCount {};
    int m_longest = 0;
};

} // namespace Hitscope
