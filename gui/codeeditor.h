// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <map>

#include <QPlainTextEdit>

namespace Hitscope {

/// A plain-text editor for rule files: a fixed-width font, no wrapping, a gutter with line numbers, the current
/// line shaded, and marks on lines with problems (a wavy underline and a dot in the gutter, the reason as the
/// gutter's tool tip).
class CodeEditor : public QPlainTextEdit
{
    Q_OBJECT
public:
    enum class Mark { Warning, Error };
    /// Set on the underline's character format of a marked line, so tests need not compare colours.
    static constexpr int MarkProperty = QTextFormat::UserProperty + 2;

    explicit CodeEditor(QWidget *parent = nullptr);

    /// Replaces every mark: per 1-based line, the worst mark and its reasons (one per line of text).
    void setLineMarks(const std::map<int, std::pair<Mark, QString>> &marks);
    const std::map<int, std::pair<Mark, QString>> &lineMarks() const { return m_marks; }
    /// Moves the cursor to the start of 1-based `line`, shows it and gives the editor the focus.
    void goToLine(int line);
    int currentLine() const;
    int gutterWidth() const;

Q_SIGNALS:
    /// The editor's palette changed (a theme switch): colours drawn from it must be chosen again.
    void paletteChanged();

protected:
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    class Gutter;

    void paintGutter(QPaintEvent *event);
    QString gutterToolTip(int y) const;
    void updateExtraSelections();

    Gutter *m_gutter = nullptr;
    std::map<int, std::pair<Mark, QString>> m_marks;
};

} // namespace Hitscope
