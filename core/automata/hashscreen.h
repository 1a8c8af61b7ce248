// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "automata/sequencescreen.h"

namespace Hitscope {

/**
 * Finds thousands of fixed byte sequences at once, where SequenceScreen's nibble passes (sixteen anchors a
 * pass) would need hundreds of passes. Each sequence has a key: two to four neighbouring positions, chosen
 * where its bytes are rarest, expanded into the exact byte strings they allow (a nocase letter is two, a
 * nibble sixteen; at most kMaxVariants). Every input position is looked up once per key length in a bitmap
 * of the keys' hashes (a few hundred KiB at most, so it stays in L2); a set bit is a candidate, whose exact
 * key is found in a sorted table and whose sequences are then checked position by position. This is the
 * scheme of Hyperscan's FDR and of YARA's atom table, reduced to what a table of atoms needs.
 */
class HashScreen
{
public:
    using Sequence = SequenceScreen::Sequence;
    using Match = SequenceScreen::Match;

    /// At most this many exact strings per key.
    static constexpr int kMaxVariants = 64;
    /// Whether a sequence has a key of two or more positions (else SequenceScreen takes it).
    static bool suits(const Sequence &sequence);
    /// Adds a sequence that suits() (and returns false for one that does not); its matches carry `tag`. Call
    /// build() after the last. `minKeyLength` 4: only a sequence with a key of four positions is taken (each
    /// shorter key length costs every input byte another look-up: worth it only for many such sequences).
    bool add(const Sequence &sequence, uint32_t tag, int minKeyLength = 2);
    void build();
    bool empty() const { return m_sequences.empty(); }
    size_t size() const { return m_sequences.size(); }
    /// Bytes of its tables.
    size_t bytes() const;
    /// Appends to `out` every match in data[0, n) whose end lies in [from, to), in no particular order.
    void scan(const uint8_t *data, int64_t n, int64_t from, int64_t to, std::vector<Match> &out) const;

private:
    struct Entry
    {
        uint32_t tag = 0;
        int length = 0;
        int keyOffset = 0;
        int keyLength = 0;
        /// Eight positions outside the key, most of them single bytes: a candidate's one-load check before
        /// the position-by-position one (keys in code are common, their neighbours less so together).
        int quickOffset = 0;
        uint64_t quickMask = 0, quickValue = 0;
        std::vector<std::array<uint64_t, 4>> bits; ///< per position: its bytes
    };
    /// One key length's tables: a bitmap of key hashes, and the exact keys sorted with their sequences.
    struct Table
    {
        int keyLength = 0;
        int shift = 32;                   ///< hash >> shift indexes the bitmap
        std::vector<uint64_t> bitmap;
        std::vector<uint32_t> keys;       ///< sorted, unique
        /// Open addressing by hash: key << 32 | (key index + 1), 0 empty (the key beside its index: one load).
        std::vector<uint64_t> slots;
        uint32_t slotMask = 0;
        std::vector<uint32_t> firstEntry; ///< per key and one more: its range of `entries`
        std::vector<uint32_t> entries;    ///< sequence indices
        /// Per entry, what its quick check reads, so that a candidate that fails it touches no Entry.
        struct Quick
        {
            uint64_t mask = 0, value = 0;
            int32_t start = 0;  ///< of the sequence, from the key (-keyOffset)
            int32_t offset = 0; ///< of the eight bytes checked, from the sequence's start
            int32_t length = 0;
        };
        std::vector<Quick> quick;
        std::vector<std::pair<uint32_t, uint32_t>> pending; ///< (key, sequence) before build()
        uint32_t mask() const { return keyLength == 4 ? 0xffffffffu : (1u << (8 * keyLength)) - 1; }
    };
    static uint32_t hash(uint32_t key) { return key * 0x9E3779B1u; }
    bool verify(const Entry &e, const uint8_t *p) const;
    void probe(const Table &t, uint32_t key, const uint8_t *data, int64_t n, int64_t p, int64_t from, int64_t to,
               std::vector<Match> &out) const;

    std::vector<Entry> m_sequences;
    std::array<Table, 3> m_tables; ///< key lengths 2, 3, 4
    int m_maxLength = 0;
};

} // namespace Hitscope
