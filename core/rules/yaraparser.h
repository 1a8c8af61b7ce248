// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include <QByteArray>
#include <QString>

#include "rules/yaraast.h"
#include "rules/yaralexer.h"

namespace Hitscope {

/**
 * YARA 4.2.3's grammar (libyara/grammar.y) as a recursive descent parser over YaraLexer's tokens. It builds the
 * tree only; names, types and YARA's compile-time checks are YaraConditionCompiler's and YaraLoader's.
 *
 * YARA refuses a whole file at its first error. Here an error costs the rule it is in: the parser reports it and
 * goes on at the next `rule` (or `import`) keyword, which the lexer never confuses with the inside of a comment,
 * string or regex. Parsing is one pass, linear in the number of tokens.
 */
class YaraParser
{
public:
    struct Item
    {
        enum class Kind : uint8_t { Rule, Import, Error };
        Kind kind = Kind::Rule;
        YaraRuleDecl rule;   ///< Rule; for Error, the name, file and line of the rule it is in (empty outside)
        QByteArray module;   ///< Import
        int file = 0;        ///< where the import or the error is
        int line = 0;
        QString message;     ///< Error
    };

    static std::vector<Item> parse(const std::vector<YaraToken> &tokens);
};

} // namespace Hitscope
