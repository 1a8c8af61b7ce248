// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>

#include <QString>

#include "rules/ruleset.h"
#include "rules/yaraast.h"

namespace Hitscope {

/**
 * Turns one string of a YARA rule (text with its modifiers, hex string, regex) into the automaton pattern
 * the engines run and the YaraString that decides, as YARA 4.2 does, which one match is reported per start.
 */
class YaraStringCompiler
{
public:
    struct Result
    {
        Regex dfa; ///< what the engines scan for: every YARA match is a match of it
        std::shared_ptr<YaraString> yara;
        QString error; ///< why the string (and so its rule) cannot run; empty on success
        QString warning; ///< what yara warns of (the string still runs)
    };

    static Result compile(const YaraStringDecl &string);

    /// A hex string's body ("4D 5A ?? [2-4] (01 | 02 03)"); `chained` tells whether YARA splits it into
    /// chained pieces (a jump longer than 200 bytes, or unbounded, at the top level).
    static bool parseHex(const QByteArray &text, Regex &out, bool *chained, QString *error);
};

} // namespace Hitscope
