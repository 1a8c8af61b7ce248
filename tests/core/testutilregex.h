// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <QByteArray>
#include <QRandomGenerator>

#include "pattern/regex.h"

namespace TestUtil {

/// One report-all hit: `end` is the offset of the match's last byte, `start` the leftmost start ending there.
struct RefMatch
{
    int64_t start = 0;
    int64_t end = 0;

    friend bool operator==(const RefMatch &, const RefMatch &) = default;
};

/**
 * Brute-force oracle over the Regex AST. For every end offset at which some non-empty match ends, returns the
 * leftmost start of such a match; sorted by end. Slow on purpose: meant for texts of a few hundred bytes.
 */
std::vector<RefMatch> referenceMatches(const Hitscope::Regex &re, const QByteArray &text);

/// "(s,e) (s,e) ..." so that QCOMPARE failures show the whole list.
QByteArray formatMatches(const std::vector<RefMatch> &matches);

/// A random AST over `alphabet`: classes, alternation, small and unbounded repeats, rare assertions.
Hitscope::Regex randomRegex(QRandomGenerator &rng, int depth, const QByteArray &alphabet);

/// A random pattern source over `alphabet` that RegexParser accepts (and PCRE would too).
QByteArray randomRegexSource(QRandomGenerator &rng, int depth, const QByteArray &alphabet);

/// A pattern the test knows to be valid, parsed (a bad one ends the test).
Hitscope::Regex parseRegex(const char *pattern, bool caseless = false);

/// A regex node as a short text (sets, Cat(...), Alt(...), repeats) for failure messages.
QByteArray describeRegex(const Hitscope::Regex &re, int node);

/// `len` bytes drawn uniformly from `alphabet`.
QByteArray randomText(QRandomGenerator &rng, int len, const QByteArray &alphabet);

} // namespace TestUtil
