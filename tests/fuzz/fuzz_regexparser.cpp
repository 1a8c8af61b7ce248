// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target for the regex parser and the matcher built from what it parses. Input: one flags byte, then the
// pattern; after a NUL byte, the bytes to match it against (else the pattern is matched against itself).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <QByteArray>
#include <QString>

#include "pattern/nfa.h"
#include "pattern/prioritymatcher.h"
#include "pattern/regex.h"
#include "pattern/regexparser.h"

#include "fuzzlimits.h"

using namespace Hitscope;

namespace {

constexpr size_t kMaxInput = 64 * 1024;
constexpr int kMaxStarts = 8;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > kMaxInput)
        return -1;
    const uint8_t flagBits = data[0];
    RegexFlags flags;
    flags.caseless = flagBits & 1;
    flags.dotAll = flagBits & 2;
    flags.posixClasses = flagBits & 4;
    const auto choice = (flagBits & 8) ? PriorityMatcher::Choice::Shortest : PriorityMatcher::Choice::Priority;

    const char *rest = reinterpret_cast<const char *>(data + 1);
    const size_t restSize = size - 1;
    const auto *nul = static_cast<const char *>(std::find(rest, rest + restSize, '\0'));
    const size_t patternSize = size_t(nul - rest);
    // Copies: patterns reach the parser in QByteArrays that end with a NUL, the fuzzer's buffer has none.
    const QByteArray pattern(rest, qsizetype(patternSize));
    const QByteArray subject = patternSize < restSize ? QByteArray(nul + 1, qsizetype(restSize - patternSize - 1))
                                                      : pattern;

    const RegexParser::Result parsed = RegexParser::parse(pattern, flags);
    if (!parsed.error.isEmpty())
        return 0;
    const Regex &regex = parsed.regex;
    if (!regex.isValid())
        __builtin_trap(); // no error, so the parser must have produced a tree
    const int minLength = regex.minLength();
    const int maxLength = regex.maxLength();
    if (maxLength >= 0 && maxLength < minLength)
        __builtin_trap();
    (void)regex.hash(0);
    const Regex reversed = regex.reversed();
    if (reversed.minLength() != minLength || reversed.maxLength() != maxLength)
        __builtin_trap();

    if (Nfa::estimateStates(regex) > HitscopeFuzz::kMaxRegexStates)
        return -1; // see HitscopeFuzz::kMaxRegexStates
    const PriorityMatcher matcher(regex, choice);
    const int64_t fileSize = subject.size();
    const auto *bytes = reinterpret_cast<const uint8_t *>(subject.constData());
    // The matcher may only read inside the file: anything else traps, so that the fuzzer reports it.
    const ByteAt byteAt(bytes, 0, fileSize, [](int64_t) -> uint8_t { __builtin_trap(); });
    const int64_t step = std::max<int64_t>(1, fileSize / kMaxStarts);
    for (int64_t start = 0; start <= fileSize; start += step) {
        const int64_t length = matcher.match(start, fileSize, byteAt);
        if (length < -1 || length > fileSize - start)
            __builtin_trap();
        if (length >= 0 && choice == PriorityMatcher::Choice::Priority && length > PriorityMatcher::kScanLimit)
            __builtin_trap();
        if (length >= 0 && (length < minLength || (maxLength >= 0 && length > maxLength)))
            __builtin_trap();
    }
    return 0;
}
