// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "automata/dfa.h"
#include "rules/ruleset.h"

namespace Hitscope {

/**
 * Recovers where a match starts, given the pattern and the offset of its last byte. The start reported is
 * the leftmost one (the longest match ending there), as Hyperscan's SOM_LEFTMOST does. Fixed-length
 * patterns need no scan; others run the reversed pattern's DFA backwards from the end.
 * Thread-safe: reversed DFAs are built lazily, once per pattern.
 */
class StartFinder
{
public:
    /// Reads the byte at a file offset (0 <= offset < fileSize).
    using ByteAt = std::function<uint8_t(int64_t offset)>;

    explicit StartFinder(const RuleSet &rules);
    ~StartFinder();

    /// Returns the start offset; `fileSize` decides `$`, and the bytes at end+1 decide a trailing \b.
    int64_t leftmostStart(int patternId, int64_t end, int64_t fileSize, const ByteAt &byteAt) const;

private:
    const RuleSet &m_rules;
    mutable std::mutex m_mutex;
    mutable std::vector<std::unique_ptr<Dfa>> m_reversed;
    std::vector<int> m_fixedLength; // -1 when variable
};

} // namespace Hitscope
