// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <QByteArray>

namespace Hitscope {

/// One token of a YARA rule file.
struct YaraToken
{
    enum class Kind : uint8_t {
        End,
        Error,          ///< text = the message, as YARA's lexer words it
        Identifier,
        Keyword,        ///< text = the keyword
        StringId,       ///< "$a", "$"
        StringIdWildcard, ///< "$a*", "$*"
        StringCount,    ///< "#a" (text keeps the '#')
        StringOffset,   ///< "@a"
        StringLength,   ///< "!a"
        Number,         ///< integer
        Float,          ///< real
        IntFunction,    ///< "uint16be" ...
        Text,           ///< a quoted string; text = its bytes
        Regex,          ///< text = the pattern; nocase, dotAll
        Hex,            ///< text = the body of a hex string, between its braces
        Include,        ///< text = the path of an `include "path"`
        Punct,          ///< text: "..", "<=", "==", "!=", "<<", ">>" or one character
    };

    Kind kind = Kind::End;
    QByteArray text;
    int64_t integer = 0;
    double real = 0;
    bool nocase = false;
    bool dotAll = false;
    int file = 0;
    int line = 0;   ///< 1-based
    int column = 0; ///< 1-based

    bool is(Kind k, const char *t) const { return kind == k && text == t; }
    bool isPunct(const char *t) const { return is(Kind::Punct, t); }
    bool isKeyword(const char *t) const { return is(Kind::Keyword, t); }
};

/**
 * YARA 4.2.3's lexer (libyara/lexer.l), token for token: the same keywords, number forms (KB/MB, 0x, 0o, floats),
 * string escapes, regexes (a '/' always opens one: division is '\'), hex strings and comments. It never stops:
 * an error becomes an Error token and lexing goes on after it, so that one bad rule costs only itself.
 */
class YaraLexer
{
public:
    static std::vector<YaraToken> tokenize(const QByteArray &data, int file);
};

} // namespace Hitscope
