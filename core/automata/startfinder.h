// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "automata/dfa.h"
#include "pattern/byteat.h"
#include "rules/ruleset.h"

namespace Hitscope {

/**
 * Recovers where a match starts, given the pattern and the offset of its last byte. The start reported is
 * the leftmost one (the longest match ending there), as Hyperscan's SOM_LEFTMOST does. Fixed-length
 * patterns need no scan (unless verified); others run the reversed pattern's DFA backwards from the end.
 * Thread-safe: reversed DFAs are built lazily, once per pattern.
 */
class StartFinder
{
public:
    /// Reads the byte at a file offset (0 <= offset < fileSize).
    using ByteAt = Hitscope::ByteAt;

    explicit StartFinder(const RuleSet &rules);
    ~StartFinder();

    /// Returns the start offset, or -1 when no match of the pattern ends at `end` (a fixed-length pattern
    /// is trusted to match there: use leftmostStarts with `verify` to check it too). `fileSize` decides `$`,
    /// and the bytes at end+1 decide a trailing \b.
    int64_t leftmostStart(int patternId, int64_t end, int64_t fileSize, const ByteAt &byteAt) const;

    /**
     * leftmostStart for many ends of one pattern in one file: starts[i] belongs to ends[i], -1 where no match
     * ends there. With `ends` ascending this costs about one walk over the bytes they span, not one walk per
     * end (any order gives the same answers, only slower): a walk stops where it meets the path of an
     * earlier one (the reversed DFA is deterministic, so the same state at the same offset has the same
     * outcome), and runs through counted repeats such as {80,} are skipped whole. Memory stays bounded
     * (under 5 MiB for the largest batches). `verify`: fixed-length patterns are walked too, so that every
     * answer is exact; for patterns whose DFA over-approximates their ends (PatternInfo::verify).
     */
    void leftmostStarts(int patternId, const std::vector<int64_t> &ends, int64_t fileSize, const ByteAt &byteAt,
                        std::vector<int64_t> &starts, bool verify = false) const;

private:
    struct Reversed;
    const Reversed &reversed(int patternId) const;

    const RuleSet &m_rules;
    mutable std::mutex m_mutex;
    mutable std::vector<std::unique_ptr<Reversed>> m_reversed;
    std::vector<int> m_fixedLength; // -1 when variable
};

} // namespace Hitscope
