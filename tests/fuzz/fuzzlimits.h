// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QByteArray>

#include "pattern/nfa.h"
#include "pattern/regexparser.h"

namespace HitscopeFuzz {

// PriorityMatcher unrolls counted repeats, so nested ones multiply: /((a{1000}){1000}){1000}/, 25 bytes, asked
// for 10^9 instructions and exhausted memory in the constructor (docs/fuzzing.md, "Found"). Core now refuses a
// regex over PriorityMatcher::kMaxProgram (2M states); the fuzzers skip regexes over a far smaller size only to
// keep each execution fast (a 2M-state matcher takes seconds to build), and reach everything below it.
constexpr uint64_t kMaxRegexStates = 100'000;

inline bool regexTooLarge(const QByteArray &pattern, const Hitscope::RegexFlags &flags)
{
    const Hitscope::RegexParser::Result parsed = Hitscope::RegexParser::parse(pattern, flags);
    return parsed.error.isEmpty() && Hitscope::Nfa::estimateStates(parsed.regex) > kMaxRegexStates;
}

} // namespace HitscopeFuzz
