// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include <QByteArray>
#include <QMetaType>
#include <QString>

#include "automata/regex.h"

namespace Hitscope {

/// One searchable string of a rule: a literal, a hex string or a regex, already parsed into a Regex.
struct Pattern
{
    QString id;          ///< "$" for list rules, "$a" for YARA strings
    QByteArray source;   ///< the text as written (for messages and previews)
    Regex regex;         ///< what the automata compile
    int ruleIndex = -1;  ///< index into RuleSet::rules
    bool isPrivate = false;
};

/// A rule: a name, where it came from, and the patterns it owns. List rules match when any pattern hits.
struct Rule
{
    QString name;
    QString sourceFile;
    int line = 0; ///< 1-based
    std::vector<int> patterns; ///< indices into RuleSet::patterns
};

/// A rule or line that was not accepted, with the reason. The rest of its file still runs.
struct Rejection
{
    QString file;
    int line = 0; ///< 1-based, 0 when the whole file is concerned
    QString rule; ///< rule name when known
    QString reason;

    QString toString() const;
};

/// Everything loaded from the rule files given by the user.
struct RuleSet
{
    std::vector<Rule> rules;
    std::vector<Pattern> patterns;
    std::vector<Rejection> rejections;

    /// Appends another set, renumbering its rule and pattern indices.
    void append(RuleSet other);
};

} // namespace Hitscope

Q_DECLARE_METATYPE(Hitscope::Rejection)
