// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>

#include "regex.h"

namespace Hitscope {

struct RegexFlags
{
    bool caseless = false; ///< ASCII case folding (`i`)
    bool dotAll = false;   ///< `.` also matches \n (`s`)
    bool posixClasses = true; ///< `[[:alpha:]]` and the like; YARA has none (there it is a class of `[:ahlp`)
};

/**
 * Parses the YARA/PCRE regex subset: literals, escapes (\xNN \n \r \t \f \v \a \0 \\ and escaped
 * metacharacters), \d \w \s \b \B and their negations, classes with ranges and negation (escapes and
 * \d\w\s inside), `.`, alternation, groups `( )` and `(?: )`, `? * + {n} {n,} {n,m}` and lazy forms
 * (same language: hits are report-all), `^` start of file, `$` end of file.
 * Counted repeats are limited to 1000 (as PCRE-like engines do); larger bounds are an error.
 */
class RegexParser
{
public:
    struct Result
    {
        Regex regex;    ///< valid when error is empty
        QString error;  ///< human-readable reason, with the byte offset where it applies
    };

    static Result parse(const QByteArray &pattern, RegexFlags flags = {});
};

} // namespace Hitscope
