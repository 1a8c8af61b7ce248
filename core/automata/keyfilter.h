// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "automata/sequencescreen.h"

namespace Hitscope {

/**
 * The GPU's half of the atom prefilter: in which 64-byte blocks of a batch a sequence of the screens (every entry
 * AtomPrefilter::addEntry takes: the screened patterns' sequences and the atoms of the windowed ones) may end.
 * Each sequence gets one key, up to eight neighbouring positions where its bytes are rarest (a nocase letter or
 * a nibble gives several exact keys), and with it the span of ends its sequences can have from where the key
 * starts. The kernel (shaders/keyscreen.comp) looks up every byte position of the batch: one- and two-byte keys
 * in exact bit tables, longer ones in a bitmap of the hash of their first three or four bytes and, where its bit
 * is set, in an exact hash table; it marks the blocks of the ends the keys found allow. A match holds its
 * sequence's key, so the host's exact screens look only at ends in marked blocks: thousands of sequences cost
 * one pass on the GPU, and the host's work follows where keys occur, not the size of the batch.
 *
 * The words are the kernel's tables, in one buffer; keyscreen.comp documents the layout.
 */
class KeyFilter
{
public:
    using Sequence = SequenceScreen::Sequence;
    static constexpr int kBlockShift = 6;
    /// The hash bitmap of the longer keys: 2^17 bits, in shared memory with the one- and two-byte tables (24 KiB
    /// of the 32 KiB lavapipe offers).
    static constexpr int kBitmapLog2 = 17;
    static constexpr int kHeaderWords = 8;
    static constexpr int kSharedWords = 8 + 2048 + (1 << kBitmapLog2) / 32;
    static constexpr int kMaxKeyLength = 8;
    /// At most this many exact keys of three or more positions per sequence (else a shorter key).
    static constexpr size_t kMaxVariants = 64;

    void add(const Sequence &sequence);
    void build();
    bool empty() const { return m_sequences == 0; }
    size_t sequences() const { return m_sequences; }
    /// Exact keys of each length (one to kMaxKeyLength positions).
    size_t keysOfLength(int length) const
    {
        return length >= 1 && length <= kMaxKeyLength ? m_keyCount[size_t(length - 1)] : 0;
    }
    const std::vector<uint32_t> &words() const { return m_words; }
    /// A hash of words(), set by build(): the GPU engine's test for tables it has uploaded.
    uint64_t fingerprint() const { return m_fingerprint; }
    /// The longest sequence.
    int longest() const { return m_longest; }
    /// The most slots one probe of the hash tables reads (the longest run of occupied slots, and the free one
    /// after it): keys of five to eight positions that share their first four bytes share a home slot.
    int longestProbe() const { return m_longestProbe; }
    /// Sequences by length, for how far before an end the host's screens must look: class c holds lengths up to
    /// lengthOfClass(c). The kernel marks each block with the classes of the sequences that may end there.
    static constexpr int kClasses = 4;
    static int lengthOfClass(int c) { return 32 << (2 * c); }
    static uint32_t classOf(int length)
    {
        int c = 0;
        while (c + 1 < kClasses && length > lengthOfClass(c))
            ++c;
        return 1u << c;
    }
    /// What the kernel finds at data[0], with `available` bytes readable there: whether some key starts there,
    /// the span [*first, *last] (from data[0]) of the ends its sequences can have, and their classes (the tests
    /// compare).
    bool keyAt(const uint8_t *data, int64_t available, int *first, int *last, uint32_t *classes) const;

    /// Two bits of the bitmap per key (a Bloom filter): a quarter of one bit's false candidates, each of which
    /// costs a probe of global memory.
    static uint32_t tripleBit(uint32_t key) { return (key * 0xC2B2AE35u) >> (32 - kBitmapLog2); }
    static uint32_t tripleBit2(uint32_t key) { return (key * 0x165667B1u) >> (32 - kBitmapLog2); }
    static uint32_t quadBit(uint32_t key) { return (key * 0x9E3779B1u) >> (32 - kBitmapLog2); }
    static uint32_t quadBit2(uint32_t key) { return (key * 0x2545F491u) >> (32 - kBitmapLog2); }
    static uint32_t tripleSlot(uint32_t key, int shift) { return (key * 0x27D4EB2Fu) >> shift; }
    static uint32_t quadSlot(uint32_t key, int shift) { return (key * 0x85EBCA6Bu) >> shift; }

private:
    /// An exact key: its bytes (little-endian, first four and the rest), its length, and the span of ends.
    struct Key
    {
        uint32_t first = 0, rest = 0;
        int length = 0;
        int minEnd = 0, maxEnd = 0;
        uint32_t classes = 0;
    };
    std::vector<Key> m_keys; // before build()
    std::vector<uint32_t> m_words;
    size_t m_sequences = 0;
    std::array<size_t, kMaxKeyLength> m_keyCount {};
    int m_longest = 0;
    int m_longestProbe = 1;
    uint64_t m_fingerprint = 0;
};

} // namespace Hitscope
