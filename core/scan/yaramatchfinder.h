// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <limits>
#include <vector>

#include "automata/startfinder.h"
#include "engine/hit.h"
#include "rules/ruleset.h"

namespace Hitscope {

/**
 * Turns the match ends the engines report for a YARA string into the matches YARA reports: one per start
 * offset, the one YARA's matcher prefers (YaraString::matcher), filtered by fullword and fixed offsets.
 * Every start of a match ending at e lies between e's leftmost start (StartFinder) and e - minLength + 1,
 * so only those offsets are tried.
 */
class YaraMatchFinder
{
public:
    explicit YaraMatchFinder(const StartFinder &starts);

    /// `ends` ascending, of one pattern in one file; appends to `out` its matches, or any `limit` of them where
    /// it has more (for a condition that only counts them). Thread-safe.
    void find(const YaraString &yara, int pattern, const std::vector<int64_t> &ends, int64_t fileSize,
              const StartFinder::ByteAt &byteAt, bool verify, std::vector<Hit> &out,
              size_t limit = std::numeric_limits<size_t>::max()) const;

    /// Whether every match YARA reports for the string is at most PriorityMatcher::kScanLimit bytes long (not so
    /// for chained hex strings): then no start lies further back than that from its end, and a string's ends
    /// may be resolved in pieces cut wherever two lie further apart.
    static bool lengthLimited(const YaraString &yara);

private:
    const StartFinder &m_starts;
};

} // namespace Hitscope
