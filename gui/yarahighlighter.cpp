// SPDX-License-Identifier: GPL-3.0-or-later
#include "yarahighlighter.h"

#include <QTextDocument>

namespace Hitscope {

namespace {

// YARA 4.2's keywords as its lexer has them, and the integer functions (keywords there too). The string
// modifiers are coloured apart; `private` is one too after a string's value, else it qualifies a rule.
const QStringList &keywords()
{
    static const QStringList words {
        QStringLiteral("rule"),      QStringLiteral("private"),    QStringLiteral("global"),   QStringLiteral("import"),
        QStringLiteral("include"),   QStringLiteral("meta"),       QStringLiteral("strings"),  QStringLiteral("condition"),
        QStringLiteral("and"),       QStringLiteral("or"),         QStringLiteral("not"),      QStringLiteral("of"),
        QStringLiteral("them"),      QStringLiteral("all"),        QStringLiteral("any"),      QStringLiteral("none"),
        QStringLiteral("for"),       QStringLiteral("in"),         QStringLiteral("at"),       QStringLiteral("filesize"),
        QStringLiteral("entrypoint"), QStringLiteral("true"),      QStringLiteral("false"),    QStringLiteral("contains"),
        QStringLiteral("icontains"), QStringLiteral("startswith"), QStringLiteral("istartswith"),
        QStringLiteral("endswith"),  QStringLiteral("iendswith"),  QStringLiteral("iequals"),  QStringLiteral("matches"),
        QStringLiteral("defined"),   QStringLiteral("int8"),       QStringLiteral("int16"),    QStringLiteral("int32"),
        QStringLiteral("int8be"),    QStringLiteral("int16be"),    QStringLiteral("int32be"),  QStringLiteral("uint8"),
        QStringLiteral("uint16"),    QStringLiteral("uint32"),     QStringLiteral("uint8be"),  QStringLiteral("uint16be"),
        QStringLiteral("uint32be"),
    };
    return words;
}

const QStringList &modifiers()
{
    static const QStringList words { QStringLiteral("nocase"), QStringLiteral("wide"),       QStringLiteral("ascii"),
                                     QStringLiteral("xor"),    QStringLiteral("base64"),     QStringLiteral("base64wide"),
                                     QStringLiteral("fullword") };
    return words;
}

const QStringList &modules()
{
    static const QStringList words { QStringLiteral("pe"),      QStringLiteral("elf"),   QStringLiteral("math"),
                                     QStringLiteral("hash"),    QStringLiteral("dotnet"), QStringLiteral("time"),
                                     QStringLiteral("console"), QStringLiteral("magic"), QStringLiteral("macho"),
                                     QStringLiteral("dex"),     QStringLiteral("cuckoo") };
    return words;
}

bool isIdentChar(QChar c)
{
    return c.isLetterOrNumber() || c == QLatin1Char('_');
}

bool startsWith(const QString &text, int i, const char *two)
{
    return i + 1 < text.size() && text.at(i) == QLatin1Char(two[0]) && text.at(i + 1) == QLatin1Char(two[1]);
}

} // namespace

YaraHighlighter::YaraHighlighter(QTextDocument *document, const QPalette &palette)
    : QSyntaxHighlighter(document)
{
    setPalette(palette);
}

void YaraHighlighter::setPalette(const QPalette &palette)
{
    // One hue per kind of token; dark on a light base, light on a dark one.
    const bool dark = palette.color(QPalette::Base).lightness() < palette.color(QPalette::Text).lightness();
    const auto tone = [dark](int hue) { return QColor::fromHsv(hue, dark ? 110 : 220, dark ? 235 : 150); };
    const auto make = [&](int hue, bool bold = false, bool italic = false) {
        QTextCharFormat f;
        f.setForeground(tone(hue));
        if (bold)
            f.setFontWeight(QFont::Bold);
        f.setFontItalic(italic);
        return f;
    };
    m_formats[size_t(Token::Keyword)] = make(220, true);
    m_formats[size_t(Token::Modifier)] = make(280);
    m_formats[size_t(Token::Text)] = make(120);
    m_formats[size_t(Token::Escape)] = make(160, true);
    m_formats[size_t(Token::Hex)] = make(35);
    m_formats[size_t(Token::Regex)] = make(330);
    m_formats[size_t(Token::StringId)] = make(190, true);
    m_formats[size_t(Token::Number)] = make(10);
    m_formats[size_t(Token::Module)] = make(250, false, true);
    QTextCharFormat comment;
    comment.setForeground(palette.color(QPalette::PlaceholderText));
    comment.setFontItalic(true);
    m_formats[size_t(Token::Comment)] = comment;
    rehighlight();
}

void YaraHighlighter::highlightBlock(const QString &text)
{
    State state = previousBlockState() < 0 ? Normal : State(previousBlockState());
    bool afterEquals = false; // a '{' after '=' opens a hex string, else a rule's body
    bool afterValue = false;  // `private` after a string's value is its modifier
    int i = 0;
    const int n = int(text.size());
    while (i < n) {
        if (state != Normal) {
            i = state == InHex ? hexString(text, i, state) : comment(text, i, state);
            continue;
        }
        const QChar c = text.at(i);
        if (c.isSpace()) {
            ++i;
        } else if (startsWith(text, i, "//")) {
            set(i, n - i, Token::Comment);
            i = n;
        } else if (startsWith(text, i, "/*")) {
            state = InComment;
            set(i, 2, Token::Comment);
            i += 2;
        } else if (c == QLatin1Char('"')) {
            i = textString(text, i);
            afterValue = true;
        } else if (c == QLatin1Char('/')) { // YARA divides with '\': a '/' always opens a regex
            i = regex(text, i);
            afterValue = true;
        } else if (c == QLatin1Char('{') && afterEquals) {
            state = InHex;
            set(i, 1, Token::Hex);
            ++i;
            afterValue = true;
        } else if (QStringLiteral("$#@!").contains(c)
                   && (c == QLatin1Char('$') || (i + 1 < n && isIdentChar(text.at(i + 1))))) {
            int j = i + 1;
            while (j < n && isIdentChar(text.at(j)))
                ++j;
            if (c == QLatin1Char('$') && j < n && text.at(j) == QLatin1Char('*'))
                ++j;
            set(i, j - i, Token::StringId);
            i = j;
        } else if (c.isDigit()) {
            i = number(text, i);
        } else if (c.isLetter() || c == QLatin1Char('_')) {
            i = word(text, i, afterValue);
        } else {
            ++i;
        }
        if (!c.isSpace())
            afterEquals = c == QLatin1Char('=') && (i >= n || text.at(i) != QLatin1Char('='))
                && (i < 2 || !QStringLiteral("=!<>").contains(text.at(i - 2)));
    }
    setCurrentBlockState(state);
}

int YaraHighlighter::comment(const QString &text, int i, State &state)
{
    const int end = int(text.indexOf(QLatin1String("*/"), i));
    const int stop = end < 0 ? int(text.size()) : end + 2;
    set(i, stop - i, Token::Comment);
    if (end >= 0)
        state = state == InHexComment ? InHex : Normal;
    return stop;
}

// Inside a hex string's braces: bytes, wildcards, jumps and alternatives, and comments, up to the '}'.
int YaraHighlighter::hexString(const QString &text, int i, State &state)
{
    const int n = int(text.size());
    while (i < n) {
        if (text.at(i) == QLatin1Char('}')) {
            set(i, 1, Token::Hex);
            state = Normal;
            return i + 1;
        }
        if (startsWith(text, i, "/*")) {
            state = InHexComment;
            set(i, 2, Token::Comment);
            return i + 2;
        }
        if (startsWith(text, i, "//")) {
            set(i, n - i, Token::Comment);
            return n;
        }
        set(i, 1, Token::Hex);
        ++i;
    }
    return n;
}

int YaraHighlighter::textString(const QString &text, int i)
{
    const int n = int(text.size());
    int j = i + 1;
    std::vector<std::pair<int, int>> escapes;
    while (j < n && text.at(j) != QLatin1Char('"')) {
        if (text.at(j) == QLatin1Char('\\') && j + 1 < n) {
            const int length = text.at(j + 1) == QLatin1Char('x') ? std::min(4, n - j) : 2;
            escapes.push_back({ j, length });
            j += length;
        } else {
            ++j;
        }
    }
    const int stop = std::min(n, j + 1);
    set(i, stop - i, Token::Text);
    for (const auto &[start, length] : escapes)
        set(start, length, Token::Escape);
    return stop;
}

int YaraHighlighter::regex(const QString &text, int i)
{
    const int n = int(text.size());
    int j = i + 1;
    while (j < n && text.at(j) != QLatin1Char('/'))
        j += text.at(j) == QLatin1Char('\\') ? 2 : 1;
    j = std::min(n, j + 1);
    while (j < n && (text.at(j) == QLatin1Char('i') || text.at(j) == QLatin1Char('s')))
        ++j;
    set(i, j - i, Token::Regex);
    return j;
}

int YaraHighlighter::word(const QString &text, int i, bool afterValue)
{
    const int n = int(text.size());
    int j = i;
    while (j < n && isIdentChar(text.at(j)))
        ++j;
    const QString w = text.mid(i, j - i);
    if (modifiers().contains(w) || (afterValue && w == QLatin1String("private")))
        set(i, j - i, Token::Modifier);
    else if (keywords().contains(w))
        set(i, j - i, Token::Keyword);
    else if (j < n && text.at(j) == QLatin1Char('.') && modules().contains(w))
        set(i, j - i, Token::Module);
    return j;
}

int YaraHighlighter::number(const QString &text, int i)
{
    const int n = int(text.size());
    int j = i;
    if (startsWith(text, i, "0x") || startsWith(text, i, "0o")) {
        j += 2;
        while (j < n && (text.at(j).isDigit() || QStringLiteral("abcdefABCDEF").contains(text.at(j))))
            ++j;
    } else {
        while (j < n && text.at(j).isDigit())
            ++j;
        // A fraction, not the '..' of a range: (0..filesize).
        if (j + 1 < n && text.at(j) == QLatin1Char('.') && text.at(j + 1).isDigit()) {
            j += 2;
            while (j < n && text.at(j).isDigit())
                ++j;
        }
        if (j + 1 < n && (text.mid(j, 2) == QLatin1String("KB") || text.mid(j, 2) == QLatin1String("MB")))
            j += 2;
    }
    set(i, j - i, Token::Number);
    return j;
}

} // namespace Hitscope
