// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pattern/regex.h"

namespace Hitscope {

/// A set of byte classes as a 256-bit mask (bit i: class i).
struct ClassSet
{
    std::array<uint64_t, 4> w {};
    bool test(uint32_t c) const { return (w[c >> 6] >> (c & 63)) & 1; }
    void set(uint32_t c) { w[c >> 6] |= uint64_t(1) << (c & 63); }
    template<typename F>
    void forEach(F &&f) const
    {
        for (uint32_t i = 0; i < 4; ++i)
            for (uint64_t bits = w[i]; bits; bits &= bits - 1)
                f(i * 64 + uint32_t(__builtin_ctzll(bits)));
    }
};

/**
 * Thompson NFA over byte classes for a set of patterns, the input of the subset construction.
 *
 * Patterns that begin with a run of single-byte sets (every literal, and the literal head of most regexes)
 * share those heads in a trie rooted at the start state, so that thousands of literals give small NFA state
 * sets. The start state is the trie root; each pattern ends in a Match state carrying its index in the
 * input list. Assertions are zero-width edges evaluated during closures against the previous byte's context
 * and, when known, the next byte.
 */
class Nfa
{
public:
    enum class Kind : uint8_t { Epsilon, Consume, Assert, Match };

    /// Assertion kinds reachable from a state through zero-width edges (bits of State::mask).
    enum MaskBit : uint8_t { MaskFileStart = 1, MaskFileEnd = 2, MaskWord = 4 };

    /// What is known about the byte after the current position during a closure.
    enum class Next : uint8_t { Unknown, Word, NonWord, Eof };

    struct State
    {
        Kind kind = Kind::Epsilon;
        Assertion assertion = Assertion::FileStart;
        uint8_t mask = 0;     ///< MaskBit set: assertions reachable without consuming a byte
        uint32_t arg = 0;     ///< Consume: index into classSets; Match: pattern index
        uint32_t out = 0;     ///< Consume, Assert: the next state
        uint32_t edgeBegin = 0; ///< Epsilon: successors edges[edgeBegin, edgeBegin + edgeCount)
        uint32_t edgeCount = 0;
    };

    /// Default cap on NFA states: far above any sensible rule set (10,000 literals need ~500,000).
    static constexpr uint32_t kDefaultMaxStates = 8'000'000;

    /// Builds the NFA of `patterns` (pattern i ends in a Match with arg i). Returns false with `error` set
    /// when the automaton would need more than `maxStates` states (huge counted repeats).
    bool build(const std::vector<const Regex *> &patterns, uint32_t maxStates = kDefaultMaxStates,
               std::string *error = nullptr);

    /// NFA states the pattern needs (saturating), without building it.
    static uint64_t estimateStates(const Regex &regex);

    std::vector<State> states;
    std::vector<uint32_t> edges;
    std::vector<ClassSet> classSets; ///< per Consume state's `arg`
    uint32_t start = 0;
    uint32_t numPatterns = 0;

    uint32_t numClasses = 0;
    std::array<uint8_t, 256> byteClass {};
    std::vector<uint8_t> classIsWord; ///< per class; meaningful when word boundaries are used
    uint8_t usedAssertions = 0;        ///< MaskBit set over all patterns

    /// Records closures without allocation churn; one per thread.
    struct Closure
    {
        std::vector<uint32_t> consuming; ///< Consume states reached
        std::vector<uint32_t> matches;   ///< pattern indices reached, sorted, unique
        std::vector<uint32_t> stamp;
        std::vector<uint32_t> stack;
        uint32_t epoch = 0;
    };

    /// The zero-width closure of `kernel` (plus the start state when `withStart`) in context `ctx`
    /// (a ByteContext for the byte before: pattern/bytecontext.h) with `next` known about the byte after.
    /// Matches are collected from the kernel only (never from the start state: matches are non-empty).
    void closure(const uint32_t *kernel, size_t size, bool withStart, int ctx, Next next, Closure &out) const;

private:
    bool assertionHolds(Assertion a, int ctx, Next next) const;
};

} // namespace Hitscope
