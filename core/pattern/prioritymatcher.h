// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "pattern/byteat.h"
#include "pattern/regex.h"

namespace Hitscope {

/**
 * Finds the one match YARA reports at a given start: the DFAs find every end of every match, but YARA keeps
 * one match per start offset, chosen like a backtracking engine would (alternatives in order, greedy or
 * lazy repeats), or the shortest one for hex strings YARA splits into chained pieces. A Pike VM over the
 * pattern, anchored at the start; it only runs where the DFAs found a match, so its speed matters less
 * than its exactness.
 *
 * YARA's limits are kept: a match is at most kScanLimit bytes long, and \b holds at the start of the file
 * and where the scan window ends.
 */
class PriorityMatcher
{
public:
    enum class Choice : uint8_t { Priority, Shortest };
    /// YARA's YR_RE_SCAN_LIMIT.
    static constexpr int kScanLimit = 4096;
    /// Reads the byte at a file offset (0 <= offset < fileSize).
    using ByteAt = Hitscope::ByteAt;

    /// The most instructions a matcher may have: counted repeats are written out, so nested ones multiply
    /// (((a{1000}){1000}){1000} would need 10^9, which the fuzzer found).
    static constexpr uint64_t kMaxProgram = uint64_t(1) << 21;
    /// Whether `regex` stays under kMaxProgram; build a matcher only when it does.
    static bool fits(const Regex &regex);

    explicit PriorityMatcher(const Regex &regex, Choice choice = Choice::Priority);

    /// The length of the match YARA reports at `start`, or -1 when none starts there.
    int64_t match(int64_t start, int64_t fileSize, const ByteAt &byteAt) const;

    size_t programSize() const { return m_program.size(); }
    /// Whether a match is at most kScanLimit bytes long (not so for chained hex strings).
    bool lengthLimited() const { return m_choice == Choice::Priority; }

private:
    enum class Op : uint8_t { Bytes, Split, Jump, Assert, Match };
    struct Inst
    {
        Op op = Op::Match;
        Assertion assertion = Assertion::FileStart;
        int set = -1; ///< Bytes: index into m_sets
        int x = -1;   ///< Jump target; Split: the preferred branch
        int y = -1;   ///< Split: the other branch
    };

    int emit(Inst inst);
    void compile(const Regex &regex, int node);
    void compileRepeat(const Regex &regex, const Regex::Node &n);
    void addThread(std::vector<int> &list, std::vector<uint32_t> &seen, uint32_t generation, int pc,
                   int64_t pos, int64_t windowEnd, int64_t fileSize, const ByteAt &byteAt) const;

    std::vector<Inst> m_program;
    std::vector<ByteSet> m_sets;
    Choice m_choice;
    // The bytes a match can start with, and whether one can be empty: most starts tried are refused by the
    // first byte (a URL regex is tried at every offset between the leftmost start and its end).
    ByteSet m_first;
    bool m_emptyMatch = false;
};

} // namespace Hitscope
