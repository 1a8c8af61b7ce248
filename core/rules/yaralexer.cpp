// SPDX-License-Identifier: GPL-3.0-or-later
#include "rules/yaralexer.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace Hitscope {

namespace {

// YARA's YR_LEX_BUF_SIZE: longer strings and regexes are errors there.
constexpr qsizetype kMaxLiteral = 8192;
// lexer.l: "identifier too long" beyond this.
constexpr qsizetype kMaxIdentifier = 128;

const char *const kKeywords[] = {
    "private", "global", "rule", "meta", "strings", "ascii", "wide", "xor", "base64", "base64wide", "fullword",
    "nocase", "condition", "true", "false", "not", "and", "or", "at", "in", "of", "them", "for", "all", "any",
    "none", "entrypoint", "filesize", "matches", "contains", "startswith", "endswith", "icontains", "istartswith",
    "iendswith", "iequals", "import", "defined",
};

bool isLetter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

bool isIdentChar(char c)
{
    return isLetter(c) || isDigit(c) || c == '_';
}

bool isHexDigit(char c)
{
    return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool isIntFunction(const QByteArray &w)
{
    QByteArray s = w;
    if (s.startsWith('u'))
        s.remove(0, 1);
    if (s.endsWith("be"))
        s.chop(2);
    return s == "int8" || s == "int16" || s == "int32";
}

class Lexer
{
public:
    Lexer(const QByteArray &data, int file)
        : m_data(data)
        , m_file(file)
    {
    }

    std::vector<YaraToken> run()
    {
        while (true) {
            skipSpaceAndComments();
            if (m_pos >= m_data.size())
                break;
            lexOne();
        }
        YaraToken end = start(YaraToken::Kind::End);
        m_tokens.push_back(end);
        return std::move(m_tokens);
    }

private:
    char at(qsizetype i) const { return i < m_data.size() ? m_data[i] : '\0'; }

    void advance(qsizetype n = 1)
    {
        for (qsizetype k = 0; k < n && m_pos < m_data.size(); ++k) {
            if (m_data[m_pos] == '\n') {
                ++m_line;
                m_lineStart = m_pos + 1;
            }
            ++m_pos;
        }
    }

    YaraToken start(YaraToken::Kind kind) const
    {
        YaraToken t;
        t.kind = kind;
        t.file = m_file;
        t.line = m_line;
        t.column = int(m_pos - m_lineStart) + 1;
        return t;
    }

    void error(YaraToken t, const char *message)
    {
        t.kind = YaraToken::Kind::Error;
        t.text = message;
        m_tokens.push_back(std::move(t));
    }

    void skipSpaceAndComments()
    {
        while (m_pos < m_data.size()) {
            const char c = m_data[m_pos];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                advance();
            } else if (c == '/' && at(m_pos + 1) == '/') {
                while (m_pos < m_data.size() && m_data[m_pos] != '\n')
                    advance();
            } else if (c == '/' && at(m_pos + 1) == '*') {
                advance(2);
                while (m_pos < m_data.size() && !(m_data[m_pos] == '*' && at(m_pos + 1) == '/'))
                    advance();
                advance(2);
            } else {
                break;
            }
        }
    }

    void lexOne()
    {
        const char c = m_data[m_pos];
        if (isLetter(c) || c == '_')
            return word();
        if (isDigit(c))
            return number();
        if (c == '$' || c == '#' || c == '@' || (c == '!' && at(m_pos + 1) != '='))
            return stringReference(c);
        if (c == '"')
            return text();
        if (c == '/')
            return regex();
        if (c == '{' && hexString())
            return;
        static const char *const pairs[] = { "..", "<=", ">=", "==", "!=", "<<", ">>" };
        for (const char *p : pairs) {
            if (c == p[0] && at(m_pos + 1) == p[1]) {
                YaraToken t = start(YaraToken::Kind::Punct);
                t.text = p;
                advance(2);
                m_tokens.push_back(std::move(t));
                return;
            }
        }
        YaraToken t = start(YaraToken::Kind::Punct);
        advance();
        if (uint8_t(c) >= 32 && uint8_t(c) < 127) {
            t.text = QByteArray(1, c);
            m_tokens.push_back(std::move(t));
        } else {
            error(std::move(t), "non-ascii character");
        }
    }

    void word()
    {
        YaraToken t = start(YaraToken::Kind::Identifier);
        const qsizetype begin = m_pos;
        qsizetype end = m_pos;
        while (end < m_data.size() && isIdentChar(m_data[end]))
            ++end;
        t.text = m_data.mid(begin, end - begin);
        // `include[ \t]+"` is one token in lexer.l, longer than the identifier `include`.
        if (t.text == "include") {
            qsizetype k = end;
            while (k < m_data.size() && (m_data[k] == ' ' || m_data[k] == '\t'))
                ++k;
            if (k > end && at(k) == '"') {
                const qsizetype close = m_data.indexOf('"', k + 1);
                advance(k + 1 - m_pos);
                if (close < 0) {
                    advance(m_data.size() - m_pos);
                    return error(std::move(t), "unterminated include");
                }
                t.kind = YaraToken::Kind::Include;
                t.text = m_data.mid(k + 1, close - k - 1);
                advance(close + 1 - m_pos);
                m_tokens.push_back(std::move(t));
                return;
            }
        }
        advance(end - begin);
        for (const char *k : kKeywords) {
            if (t.text == k) {
                t.kind = YaraToken::Kind::Keyword;
                m_tokens.push_back(std::move(t));
                return;
            }
        }
        if (isIntFunction(t.text)) {
            t.kind = YaraToken::Kind::IntFunction;
        } else if (t.text.size() > kMaxIdentifier) {
            return error(std::move(t), "identifier too long");
        }
        m_tokens.push_back(std::move(t));
    }

    void number()
    {
        YaraToken t = start(YaraToken::Kind::Number);
        const qsizetype begin = m_pos;
        int base = 10;
        qsizetype digits = m_pos;
        qsizetype end = m_pos;
        if (m_data[m_pos] == '0' && at(m_pos + 1) == 'x' && isHexDigit(at(m_pos + 2))) {
            base = 16;
            digits = end = m_pos + 2;
            while (end < m_data.size() && isHexDigit(m_data[end]))
                ++end;
        } else if (m_data[m_pos] == '0' && at(m_pos + 1) == 'o' && at(m_pos + 2) >= '0' && at(m_pos + 2) <= '7') {
            base = 8;
            digits = end = m_pos + 2;
            while (end < m_data.size() && m_data[end] >= '0' && m_data[end] <= '7')
                ++end;
        } else {
            while (end < m_data.size() && isDigit(m_data[end]))
                ++end;
            if (at(end) == '.' && isDigit(at(end + 1))) {
                ++end;
                while (end < m_data.size() && isDigit(m_data[end]))
                    ++end;
                t.kind = YaraToken::Kind::Float;
                t.text = m_data.mid(begin, end - begin);
                t.real = std::atof(t.text.constData());
                advance(end - begin);
                m_tokens.push_back(std::move(t));
                return;
            }
        }
        const QByteArray body = m_data.mid(digits, end - digits);
        int64_t multiplier = 1;
        if (base == 10 && (at(end) == 'K' || at(end) == 'M') && at(end + 1) == 'B') {
            multiplier = at(end) == 'K' ? 1024 : 1048576;
            end += 2;
        }
        t.text = m_data.mid(begin, end - begin);
        advance(end - begin);
        errno = 0;
        const long long v = std::strtoll(body.constData(), nullptr, base);
        if ((v == LLONG_MAX && errno == ERANGE) || v > LLONG_MAX / multiplier)
            return error(std::move(t), "integer overflow");
        t.integer = int64_t(v) * multiplier;
        m_tokens.push_back(std::move(t));
    }

    void stringReference(char sigil)
    {
        YaraToken t = start(sigil == '$' ? YaraToken::Kind::StringId
                            : sigil == '#' ? YaraToken::Kind::StringCount
                            : sigil == '@' ? YaraToken::Kind::StringOffset
                                           : YaraToken::Kind::StringLength);
        qsizetype end = m_pos + 1;
        while (end < m_data.size() && isIdentChar(m_data[end]))
            ++end;
        if (sigil == '$' && at(end) == '*') {
            ++end;
            t.kind = YaraToken::Kind::StringIdWildcard;
        }
        t.text = m_data.mid(m_pos, end - m_pos);
        advance(end - m_pos);
        m_tokens.push_back(std::move(t));
    }

    static int hexValue(char c)
    {
        if (isDigit(c))
            return c - '0';
        if (c >= 'a' && c <= 'f')
            return c - 'a' + 10;
        return c - 'A' + 10;
    }

    void text()
    {
        YaraToken t = start(YaraToken::Kind::Text);
        advance();
        QByteArray out;
        while (true) {
            if (m_pos >= m_data.size() || m_data[m_pos] == '\n')
                return error(std::move(t), "unterminated string");
            const char c = m_data[m_pos];
            if (c == '"') {
                advance();
                break;
            }
            if (c != '\\') {
                out += c;
                advance();
            } else {
                const char e = at(m_pos + 1);
                if (e == 't' || e == 'r' || e == 'n' || e == '"' || e == '\\') {
                    out += e == 't' ? '\t' : e == 'r' ? '\r' : e == 'n' ? '\n' : e;
                    advance(2);
                } else if (e == 'x' && isHexDigit(at(m_pos + 2)) && isHexDigit(at(m_pos + 3))) {
                    out += char(hexValue(at(m_pos + 2)) * 16 + hexValue(at(m_pos + 3)));
                    advance(4);
                } else {
                    skipRestOfLiteral('"');
                    return error(std::move(t), "illegal escape sequence");
                }
            }
            if (out.size() > kMaxLiteral) {
                skipRestOfLiteral('"');
                return error(std::move(t), "string too long");
            }
        }
        t.text = std::move(out);
        m_tokens.push_back(std::move(t));
    }

    /// After an error inside a string or regex: on to its end, or the end of the line.
    void skipRestOfLiteral(char close)
    {
        while (m_pos < m_data.size() && m_data[m_pos] != '\n' && m_data[m_pos] != close) {
            if (m_data[m_pos] == '\\')
                advance();
            advance();
        }
        if (m_pos < m_data.size() && m_data[m_pos] == close)
            advance();
    }

    void regex()
    {
        YaraToken t = start(YaraToken::Kind::Regex);
        advance();
        QByteArray out;
        while (true) {
            if (m_pos >= m_data.size() || m_data[m_pos] == '\n')
                return error(std::move(t), "unterminated regular expression");
            const char c = m_data[m_pos];
            if (c == '/') {
                advance();
                break;
            }
            if (c == '\\') {
                const char e = at(m_pos + 1);
                if (e == '\n' || m_pos + 1 >= m_data.size())
                    return error(std::move(t), "unterminated regular expression");
                if (e == '/') {
                    out += '/';
                } else {
                    out += c;
                    out += e;
                }
                advance(2);
            } else {
                out += c;
                advance();
            }
            if (out.size() > kMaxLiteral) {
                skipRestOfLiteral('/');
                return error(std::move(t), "regular expression too long");
            }
        }
        if (at(m_pos) == 'i') {
            t.nocase = true;
            advance();
        }
        if (at(m_pos) == 's') {
            t.dotAll = true;
            advance();
        }
        if (out.isEmpty())
            return error(std::move(t), "empty regular expression");
        t.text = std::move(out);
        m_tokens.push_back(std::move(t));
    }

    /// lexer.l's hex string: '{', then hex digits, spaces, "-|?[]()" and comments, then '}'. False (nothing
    /// consumed) when the text after the brace is something else: the brace is then punctuation.
    bool hexString()
    {
        qsizetype k = m_pos + 1;
        bool any = false;
        while (k < m_data.size()) {
            const char c = m_data[k];
            if (c == '}')
                break;
            if (isHexDigit(c) || std::strchr(" -|?[]()\n\r\t", c)) {
                ++k;
            } else if (c == '/' && at(k + 1) == '*') {
                const qsizetype close = m_data.indexOf("*/", k + 2);
                if (close < 0)
                    return false;
                k = close + 2;
            } else if (c == '/' && at(k + 1) == '/') {
                while (k < m_data.size() && m_data[k] != '\n')
                    ++k;
            } else {
                return false;
            }
            any = true;
        }
        if (k >= m_data.size() || !any)
            return false;
        YaraToken t = start(YaraToken::Kind::Hex);
        t.text = m_data.mid(m_pos + 1, k - m_pos - 1);
        advance(k + 1 - m_pos);
        m_tokens.push_back(std::move(t));
        return true;
    }

    const QByteArray &m_data;
    int m_file = 0;
    qsizetype m_pos = 0;
    int m_line = 1;
    qsizetype m_lineStart = 0;
    std::vector<YaraToken> m_tokens;
};

} // namespace

std::vector<YaraToken> YaraLexer::tokenize(const QByteArray &data, int file)
{
    return Lexer(data, file).run();
}

} // namespace Hitscope
