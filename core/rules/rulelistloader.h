// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

#include "rules/ruleset.h"

namespace Hitscope {

/**
 * Loads the rule files users give: literal lists (.txt, one literal per line, byte for byte; `#` starts a
 * comment line; `hex: 4D 5A ?? 00` lines for bytes with wildcards) and regex lists (.tsv,
 * `flags<TAB>name<TAB>regex`, flags `-` or letters `i` caseless, `s` dot-all). Each line is one rule: list
 * rules are named `<file stem>:<line>`, regex rules by their name column. A bad line becomes a Rejection with
 * file, line and reason; the other lines still load. YARA files are loaded elsewhere (issue 5).
 */
class RuleListLoader
{
public:
    enum class Format { Auto, Literals, Regexes };

    /// Loads one file; `format` Auto decides from the suffix (.tsv: regexes, anything else: literals).
    static RuleSet load(const QString &path, Format format = Format::Auto);
    /// Same, from bytes already read; `path` is used for names and messages.
    static RuleSet loadFromData(const QString &path, const QByteArray &data, Format format = Format::Auto);
};

} // namespace Hitscope
