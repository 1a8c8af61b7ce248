// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "automata/sequencescreen.h"

namespace Hitscope {

/**
 * Finds fixed-length sequences whose fixed bytes all stand alone between wildcards (packer signatures such as
 * `EB ?? ?? ... EB ?? ... 77 ?? ... B3`): they have no key of neighbouring positions for HashScreen, no atom
 * good enough for windows, and a DFA whose states multiply with every ??. Each is looked for by its rarest
 * single byte (memchr), then its second rarest, then position by position, as YARA verifies at an atom.
 */
class SparseScreen
{
public:
    using Sequence = SequenceScreen::Sequence;
    using Match = SequenceScreen::Match;

    /// Whether a sequence has two positions of one byte each.
    static bool suits(const Sequence &sequence);
    /// Adds a sequence that suits() (and returns false for one that does not); its matches carry `tag`.
    bool add(const Sequence &sequence, uint32_t tag);
    bool empty() const { return m_entries.empty(); }
    size_t size() const { return m_entries.size(); }
    /// Appends to `out` every match in data[0, n) whose end lies in [from, to), in no particular order.
    void scan(const uint8_t *data, int64_t n, int64_t from, int64_t to, std::vector<Match> &out) const;

private:
    struct Entry
    {
        uint32_t tag = 0;
        int length = 0;
        int first = 0;  ///< the rarest single-byte position
        int second = 0; ///< the next rarest
        uint8_t secondByte = 0;
        std::vector<std::array<uint64_t, 4>> bits; ///< per position: its bytes
    };
    std::vector<Entry> m_entries;
    /// Per byte: the entries whose rarest position holds it.
    std::array<std::vector<uint32_t>, 256> m_byFirst;
    std::vector<uint8_t> m_firstBytes; ///< the bytes that have entries
    int m_maxLength = 0;
};

} // namespace Hitscope
