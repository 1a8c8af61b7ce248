// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "pattern/regex.h"

namespace Hitscope {

/**
 * Finds many fixed byte sequences at once (a set of bytes per position: literals, nocase text, hex strings
 * without jumps, the atoms of other patterns) without walking an automaton over every byte.
 *
 * Each sequence has an anchor: four neighbouring positions of it, chosen where its bytes are rarest. Anchors
 * share eight buckets per pass; a pass looks up each input byte's two nibbles in one table per anchor
 * position (a vector shuffle: 32 or 64 bytes per step), and a byte position whose four look-ups agree on a
 * bucket is a candidate (the Teddy scheme of Hyperscan). Candidates are then checked against every sequence
 * of the bucket, position by position, so that what comes out is exact.
 *
 * With AVX-512 VBMI, one more pass of exact 256-entry tables over most anchors comes first, and the nibble passes
 * of those anchors run only over the 64 bytes where it finds a candidate.
 *
 * A sequence of one byte repeated (sixteen zero bytes) would make a candidate of every byte of a run: such
 * sequences are found as runs instead, and a run reports the whole range of its ends at once.
 */
class SequenceScreen
{
public:
    using Sequence = std::vector<ByteSet>;
    /// Instruction sets of the candidate loop; best() is the widest the CPU runs.
    enum class Isa { Scalar, Avx2, Avx512, Avx512Vbmi };

    struct Match
    {
        uint32_t tag;
        int64_t end; ///< index of the last byte, in the data scanned
    };
    /// Every end in [firstEnd, lastEnd] is a match of the sequence tagged `tag`.
    struct Run
    {
        uint32_t tag;
        int64_t firstEnd;
        int64_t lastEnd;
    };

    /// Every sequence `regex` matches (its language, when it is finite and made of fixed positions: literals,
    /// hex strings without jumps, small alternations), or none when it has more than `maxSequences`, one longer
    /// than `maxLength` (this screen takes kMaxLength at most), an empty one or an assertion.
    static std::vector<Sequence> expand(const Regex &regex, size_t maxSequences, size_t maxLength = kMaxLength);

    /// Adds a sequence of 1 to 64 positions, none empty; its matches carry `tag`. Call build() after the last.
    void add(const Sequence &sequence, uint32_t tag);
    /// Whether the screen finds `sequence` as runs: one byte, four times or more (shorter, its runs are no rarer
    /// than the byte).
    static bool isRun(const Sequence &sequence);
    void build();

    bool empty() const { return m_sequences.empty(); }
    size_t size() const { return m_sequences.size(); }
    int passes() const { return m_plain.passes; }

    /// The widest Isa this CPU runs, and whether it runs `isa`.
    static Isa best();
    static bool supported(Isa isa);

    /// Appends to `out` every match in data[0, n) whose end lies in [from, to), and to `runs` the runs of
    /// repeated-byte sequences whose ends lie there; in no particular order.
    void scan(const uint8_t *data, int64_t n, int64_t from, int64_t to, std::vector<Match> &out,
              std::vector<Run> &runs, Isa isa) const;
    void scan(const uint8_t *data, int64_t n, int64_t from, int64_t to, std::vector<Match> &out,
              std::vector<Run> &runs) const
    {
        scan(data, n, from, to, out, runs, m_isa);
    }

    static constexpr int kMaxLength = 64;
    static constexpr int kAnchorLength = 4;
    static constexpr int kBuckets = 8;

    /// A byte position of a candidate (its anchor's first byte) and the buckets that agreed there, a bit each.
    struct Candidate
    {
        int64_t pos;
        uint16_t pass;
        uint8_t buckets;
    };

private:
    struct Entry
    {
        uint32_t tag = 0;
        int length = 0;
        int anchor = 0;                            ///< offset of the anchor in the sequence
        std::vector<std::array<uint64_t, 4>> bits; ///< per position: its bytes
        int runByte = -1;                          ///< >= 0: the sequence is this byte repeated
        /// The anchor's single-byte positions (little-endian, up to four): a candidate's quick check.
        uint32_t anchorMask = 0;
        uint32_t anchorValue = 0;
    };

    /// Anchors in passes of kBuckets buckets, with their nibble tables.
    struct Layout
    {
        /// Per pass and bucket (pass * kBuckets + bucket): the sequences anchored there.
        std::vector<std::vector<int>> buckets;
        /// Per pass and anchor position, 16 bytes per nibble value: the buckets whose anchors allow it, a bit each.
        std::vector<uint8_t> lo, hi;
        int passes = 0;
    };

    bool verify(const Entry &e, const uint8_t *p) const;
    void verifyCandidates(const Layout &layout, const Candidate *c, size_t count, const uint8_t *data, int64_t n,
                          int64_t from, int64_t to, std::vector<Match> &out) const;
    void findRuns(const uint8_t *data, int64_t n, int64_t from, int64_t to, std::vector<Run> &runs, Isa isa) const;
    /// Units (sequences sharing an anchor), `unitsPerPass` to a pass, appended to `layout`.
    void addPasses(Layout &layout, const std::vector<std::vector<int>> &units, size_t unitsPerPass) const;

    std::vector<Entry> m_sequences;
    std::vector<int> m_runs; ///< sequences found as runs
    Layout m_plain;
    /// For the VBMI loop: the weakest anchors (kBuckets of them, one a bucket) in a first pass, run over every
    /// byte; the others in passes run only over the 64 bytes where one pass of exact tables over them finds a
    /// candidate in one of the buckets the pass's anchors are in (`m_gate`: per anchor position 256 bytes, the
    /// buckets allowing each byte; `m_passGate`: per pass, its gate buckets, two).
    Layout m_gated;
    int m_ungatedPasses = 0;
    std::vector<uint8_t> m_gate;
    std::vector<uint8_t> m_passGate;
    Isa m_isa = Isa::Scalar;
};

} // namespace Hitscope
