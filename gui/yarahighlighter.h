// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>

#include <QPalette>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace Hitscope {

/**
 * Colours YARA 4.2 rules: keywords, string modifiers, text strings and their escapes, hex strings, regexes,
 * comments (block comments and hex strings carry on across lines through the block state), string identifiers
 * ($a #a @a !a), numbers and module names. The colours come from a palette, lighter on a dark base, so that dark
 * themes read; give the editor's palette again when it changes.
 */
class YaraHighlighter : public QSyntaxHighlighter
{
    Q_OBJECT
public:
    enum class Token { Keyword, Modifier, Text, Escape, Hex, Regex, Comment, StringId, Number, Module, NUM_TOKENS };

    explicit YaraHighlighter(QTextDocument *document, const QPalette &palette = {});

    void setPalette(const QPalette &palette);
    QTextCharFormat format(Token token) const { return m_formats[size_t(token)]; }

protected:
    void highlightBlock(const QString &text) override;

private:
    enum State { Normal = 0, InComment, InHex, InHexComment };

    int comment(const QString &text, int i, State &state);
    int hexString(const QString &text, int i, State &state);
    int textString(const QString &text, int i);
    int regex(const QString &text, int i);
    int word(const QString &text, int i, bool afterValue);
    int number(const QString &text, int i);
    void set(int start, int length, Token token) { setFormat(start, length, format(token)); }

    std::array<QTextCharFormat, size_t(Token::NUM_TOKENS)> m_formats;
};

} // namespace Hitscope
