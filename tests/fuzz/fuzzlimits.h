// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QByteArray>

#include "automata/nfa.h"
#include "automata/regexparser.h"

namespace HitscopeFuzz {

// PriorityMatcher unrolls counted repeats, so nested ones multiply: /((a{1000}){1000}){1000}/, 25 bytes, asks
// for 10^9 instructions and exhausts memory in the constructor (docs/fuzzing.md, "Found"). Until that is bounded
// in core, inputs with such a regex are skipped, so that fuzzing goes on past it and the CI run cannot trip on
// it; the fuzzer still reaches everything below this size.
constexpr uint64_t kMaxRegexStates = 100'000;

inline bool regexTooLarge(const QByteArray &pattern, const Hitscope::RegexFlags &flags)
{
    const Hitscope::RegexParser::Result parsed = Hitscope::RegexParser::parse(pattern, flags);
    return parsed.error.isEmpty() && Hitscope::Nfa::estimateStates(parsed.regex) > kMaxRegexStates;
}

} // namespace HitscopeFuzz
