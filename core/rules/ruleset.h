// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>
#include <vector>

#include <QByteArray>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include "pattern/prioritymatcher.h"
#include "pattern/regex.h"
#include "rules/condition.h"

namespace Hitscope {

/**
 * What YARA strings need beyond their automaton: YARA reports one match per start offset, chosen by
 * priority (PriorityMatcher), where list rules report every match end.
 */
struct YaraString
{
    /// Decides the match at a start; `wideMatcher` (regexes that are both ascii and wide) is tried where
    /// `matcher` finds none, as YARA tries the wide form after the ASCII one.
    std::shared_ptr<const PriorityMatcher> matcher;
    std::shared_ptr<const PriorityMatcher> wideMatcher;
    bool matcherIsWide = false; ///< a regex with only the wide modifier
    int textLength = 0;         ///< text strings: a match of twice this length is the wide form
    bool fullword = false;      ///< no alphanumeric byte (or wide character) may touch the match
    bool hex = false;           ///< a hex string: printed as hex bytes
    /// > 0 when every match has this length and Pattern::regex is exact: the start is end - n + 1.
    int fixedLength = 0;
    int minLength = 1;
    /// >= 0: the condition only asks for a match at this offset, and YARA reports no other.
    int64_t fixedOffset = -1;
    /// An xor string: its bytes before the key, once per form (ASCII, wide with the zero bytes), matched XORed
    /// with every key of xorKeys. The XOR of neighbouring bytes does not depend on the key: the CPU engine's
    /// prefilter looks for that instead of for one atom per key (AtomPrefilter::XorAtom).
    std::vector<QByteArray> xorForms;
    std::pair<int, int> xorKeys { 0, 0 };
};

/// One searchable string of a rule: a literal, a hex string or a regex, already parsed into a Regex.
struct Pattern
{
    QString id;          ///< "$" for list rules, "$a" for YARA strings
    QByteArray source;   ///< the text as written (for messages and previews)
    Regex regex;         ///< what the automata compile
    int ruleIndex = -1;  ///< index into RuleSet::rules
    bool isPrivate = false;
    std::shared_ptr<const YaraString> yara; ///< null for list rules
};

/// A rule: a name, where it came from, and the patterns it owns. List rules match when any pattern hits;
/// YARA rules when their condition holds.
struct Rule
{
    QString name;
    QString sourceFile;
    int line = 0; ///< 1-based
    std::vector<int> patterns; ///< indices into RuleSet::patterns (a YARA rule's strings, in order)
    ConditionPtr condition;    ///< YARA rules only
    QString ns;                ///< YARA namespace
    QStringList tags;
    bool isPrivate = false;    ///< evaluated, referable, never reported
    bool isGlobal = false;     ///< when false for a file, no rule of its namespace matches that file
    /// How bad a match is, 0-100, from the meta `score` or `severity` (signature-base and elastic write these);
    /// -1 when the rule has neither, and for list rules.
    int score = -1;

    bool isYara() const { return condition != nullptr; }
};

/// A rule or line that was not accepted, with the reason. The rest of its file still runs.
struct Rejection
{
    QString file;
    int line = 0; ///< 1-based, 0 when the whole file is concerned
    QString rule; ///< rule name when known
    QString reason;
    /// The line of the error itself in `file` (a syntax or string error inside the rule that starts at `line`),
    /// for an editor to mark; 0 when it is not known or is in another file.
    int errorLine = 0;

    QString toString() const;
};

/// Something yara warns about in a rule that still runs (an unbounded `.*`, a literal string used as a boolean).
struct RuleWarning
{
    QString file;
    int line = 0; ///< 1-based: the rule's line, where yara prints it
    QString rule;
    QString message;
};

/// Everything loaded from the rule files given by the user.
struct RuleSet
{
    std::vector<Rule> rules;
    std::vector<Pattern> patterns;
    std::vector<Rejection> rejections;
    /// What the user should know that refuses nothing: the format a file of an unusual suffix was read as.
    QStringList notes;
    /// yara's warnings of the notes again, with their place, for an editor to list by line.
    std::vector<RuleWarning> warnings;

    /// Appends another set, renumbering its rule and pattern indices.
    void append(RuleSet other);
};

} // namespace Hitscope

Q_DECLARE_METATYPE(Hitscope::Rejection)
