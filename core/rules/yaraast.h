// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <QByteArray>

namespace Hitscope {

/// YARA's base64 alphabet, where a rule names none.
inline constexpr const char *kYaraBase64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Whether Debian's yara 4.2.3 has a module of this name (importing another one is an error there). `tests` is
/// the module YARA's own test suite reads; Debian builds it in.
inline bool isYaraModule(const QByteArray &name)
{
    for (const char *m : { "pe", "elf", "math", "hash", "dotnet", "time", "console", "magic", "macho", "dex", "cuckoo",
                           "tests" })
        if (name == m)
            return true;
    return false;
}

/**
 * One node of a parsed YARA condition, as YaraParser builds it: the shape of the source, nothing resolved.
 * YaraConditionCompiler gives it meaning (types, strings, rules, externals) with YARA 4.2.3's checks.
 */
struct YaraExpr
{
    enum class Kind : uint8_t {
        True,
        False,
        Integer,     ///< integer
        Float,       ///< real
        Text,        ///< text: a string literal's bytes
        Regex,       ///< text: the pattern; regexNocase, regexDotAll
        Filesize,
        Entrypoint,
        StringFound, ///< text = "$a": `$a`, `$a at children[0]`, `$a in children[0]` (a Range)
        StringAt,
        StringIn,
        StringCount, ///< `#a`, `#a in children[0]`
        StringCountIn,
        StringOffset, ///< `@a`, `@a[children[0]]`
        StringLength, ///< `!a`, `!a[children[0]]`
        IntFunction, ///< text = "uint16be" ...; children[0] = offset
        Identifier,  ///< text
        Field,       ///< children[0] . text
        Index,       ///< children[0] [ children[1] ]
        Call,        ///< children[0] ( children[1..] )
        Not,
        Defined,
        And,
        Or,
        Minus,       ///< unary -
        BitNot,
        Binary,      ///< text = operator ("+", "\\", "==", "contains", "matches", ...); children[0], children[1]
        Of,          ///< children: quantifier, set, [range]
        PercentOf,   ///< children: percentage, set
        ForIn,       ///< children: quantifier, iterable, body; names = the variables
        ForOf,       ///< children: quantifier, set, body
        Range,       ///< children: low, high
        Enumeration, ///< children: the integers
        StringSet,   ///< names = "$a", "$b*" ...
        Them,
        RuleSet,     ///< names = rule names, "name*" for a prefix
        All,         ///< quantifiers
        Any,
        None,
    };

    Kind kind = Kind::True;
    QByteArray text;
    int64_t integer = 0;
    double real = 0;
    bool regexNocase = false;
    bool regexDotAll = false;
    int line = 0; ///< 1-based, in the file the token came from
    std::vector<QByteArray> names;
    std::vector<std::unique_ptr<YaraExpr>> children;

    const YaraExpr *child(size_t i) const { return i < children.size() ? children[i].get() : nullptr; }
    /// The source as it reads, rebuilt from the tree (for messages).
    QByteArray describe() const;
};

using YaraExprPtr = std::unique_ptr<YaraExpr>;

/// A string of a rule's strings section, as written.
struct YaraStringDecl
{
    enum class Kind : uint8_t { Text, Hex, Regex };
    /// YARA's modifiers, one bit each (a modifier given twice is an error, as in YARA).
    enum Modifier : uint32_t {
        Wide = 1,
        Ascii = 2,
        Nocase = 4,
        Fullword = 8,
        Private = 16,
        Xor = 32,
        Base64 = 64,
        Base64Wide = 128,
    };

    QByteArray id; ///< "$a", or "$" when anonymous
    Kind kind = Kind::Text;
    QByteArray value; ///< text: its bytes, escapes resolved; hex: the body inside the braces; regex: the pattern
    QByteArray source; ///< as written (for messages and previews)
    bool regexNocase = false; ///< the /i suffix
    bool regexDotAll = false; ///< the /s suffix
    uint32_t modifiers = 0;
    int xorMin = 0;
    int xorMax = 0;
    QByteArray alphabet; ///< base64 alphabet given in the rule, empty for the default one
    int line = 0;

    bool has(Modifier m) const { return (modifiers & m) != 0; }
};

/// A meta entry: `name = "text"`, `name = 12`, `name = true`.
struct YaraMeta
{
    enum class Type : uint8_t { String, Integer, Boolean };
    QByteArray id;
    Type type = Type::String;
    QByteArray text;
    int64_t integer = 0;
};

/// One rule as parsed. `file` and `line` say where its `rule` keyword is.
struct YaraRuleDecl
{
    QByteArray name;
    bool isPrivate = false;
    bool isGlobal = false;
    std::vector<QByteArray> tags;
    std::vector<YaraMeta> metas;
    std::vector<YaraStringDecl> strings;
    YaraExprPtr condition;
    int file = 0; ///< index into the parser's file names
    int line = 0;
};

} // namespace Hitscope
