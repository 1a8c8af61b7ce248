// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <QByteArray>

#include "automata/dfa.h"
#include "automata/dfabuilder.h"
#include "pattern/regex.h"

namespace TestUtil {

/// Patterns and their global ids, as automata are built from them; the regexes outlive the inputs.
struct PatternGroup
{
    std::vector<Hitscope::Regex> regexes;
    std::vector<int> ids;

    std::vector<Hitscope::DfaBuilder::Input> inputs() const;
    /// One line per pattern (its id and describeRegex()) for failure messages.
    QByteArray describe() const;
};

/// One report of a DFA walk: a match of `pattern` ends at `end` (offset of its last byte).
struct DfaHit
{
    int pattern = 0;
    int64_t end = 0;

    friend auto operator<=>(const DfaHit &, const DfaHit &) = default;
};

/// The start context for a scan beginning at `begin` of `text`, from the byte before it.
Hitscope::Dfa::StartContext startContext(const QByteArray &text, qsizetype begin);

/**
 * Walks `dfa` over text[begin, size) exactly as dfa.h describes, as a reference for the engines: the start
 * state from the byte before `begin`, Now and Prev entries on flagged transitions, Eof entries of the final
 * state at the end of the text. Hits come in report order, duplicates kept (there should be none).
 */
std::vector<DfaHit> scanDfa(const Hitscope::Dfa &dfa, const QByteArray &text, qsizetype begin = 0);

/// Checks the table invariants of dfa.h; returns an empty string when they hold, else what is wrong.
QByteArray checkDfaTables(const Hitscope::Dfa &dfa);

} // namespace TestUtil
