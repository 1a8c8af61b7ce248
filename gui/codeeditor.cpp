// SPDX-License-Identifier: GPL-3.0-or-later
#include "codeeditor.h"

#include <QFontDatabase>
#include <QHelpEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QTextBlock>
#include <QToolTip>

namespace Hitscope {

namespace {

QColor markColor(CodeEditor::Mark mark)
{
    // Fixed hues rather than palette roles: no role means "error", and these read on light and dark bases.
    return mark == CodeEditor::Mark::Error ? QColor(0xe0, 0x30, 0x30) : QColor(0xe0, 0x90, 0x10);
}

} // namespace

/// The line numbers left of the text; it draws nothing itself, the editor paints it (it knows the blocks).
class CodeEditor::Gutter : public QWidget
{
public:
    explicit Gutter(CodeEditor *editor)
        : QWidget(editor)
        , m_editor(editor)
    {
    }

    QSize sizeHint() const override { return { m_editor->gutterWidth(), 0 }; }

protected:
    void paintEvent(QPaintEvent *event) override { m_editor->paintGutter(event); }
    bool event(QEvent *event) override
    {
        if (event->type() == QEvent::ToolTip) {
            auto *help = static_cast<QHelpEvent *>(event);
            const QString tip = m_editor->gutterToolTip(help->pos().y());
            if (tip.isEmpty())
                QToolTip::hideText();
            else
                QToolTip::showText(help->globalPos(), tip, this);
            return true;
        }
        return QWidget::event(event);
    }

private:
    CodeEditor *m_editor;
};

CodeEditor::CodeEditor(QWidget *parent)
    : QPlainTextEdit(parent)
    , m_gutter(new Gutter(this))
{
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setTabStopDistance(fontMetrics().horizontalAdvance(QLatin1Char(' ')) * 4);
    connect(this, &QPlainTextEdit::blockCountChanged, this, [this] { setViewportMargins(gutterWidth(), 0, 0, 0); });
    connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect &rect, int dy) {
        if (dy)
            m_gutter->scroll(0, dy);
        else
            m_gutter->update(0, rect.y(), m_gutter->width(), rect.height());
    });
    connect(this, &QPlainTextEdit::cursorPositionChanged, this, &CodeEditor::updateExtraSelections);
    setViewportMargins(gutterWidth(), 0, 0, 0);
    updateExtraSelections();
}

int CodeEditor::gutterWidth() const
{
    int digits = 1;
    for (int n = std::max(1, blockCount()); n >= 10; n /= 10)
        ++digits;
    const int charWidth = fontMetrics().horizontalAdvance(QLatin1Char('9'));
    // Room for the mark's dot left of the numbers.
    return charWidth * (digits + 2) + 6;
}

int CodeEditor::currentLine() const
{
    return textCursor().blockNumber() + 1;
}

void CodeEditor::goToLine(int line)
{
    const QTextBlock block = document()->findBlockByNumber(std::max(0, line - 1));
    if (!block.isValid())
        return;
    QTextCursor cursor(block);
    setTextCursor(cursor);
    centerCursor();
    setFocus(Qt::OtherFocusReason);
}

void CodeEditor::setLineMarks(const std::map<int, std::pair<Mark, QString>> &marks)
{
    m_marks = marks;
    updateExtraSelections();
    m_gutter->update();
}

void CodeEditor::updateExtraSelections()
{
    QList<QTextEdit::ExtraSelection> selections;
    if (!isReadOnly()) {
        QTextEdit::ExtraSelection current;
        QColor shade = palette().color(QPalette::Highlight);
        shade.setAlpha(28);
        current.format.setBackground(shade);
        current.format.setProperty(QTextFormat::FullWidthSelection, true);
        current.cursor = textCursor();
        current.cursor.clearSelection();
        selections.push_back(current);
    }
    for (const auto &[line, mark] : m_marks) {
        const QTextBlock block = document()->findBlockByNumber(line - 1);
        if (!block.isValid())
            continue;
        // From the first character that is not a space to the end: an underline under indentation says nothing.
        const QString text = block.text();
        int start = 0;
        while (start < text.size() && text.at(start).isSpace())
            ++start;
        QTextEdit::ExtraSelection selection;
        selection.cursor = QTextCursor(block);
        selection.cursor.setPosition(block.position() + (start < text.size() ? start : 0));
        selection.cursor.setPosition(block.position() + int(text.size()), QTextCursor::KeepAnchor);
        if (!selection.cursor.hasSelection()) // an empty line: underline where the text would be
            selection.cursor.movePosition(QTextCursor::NextCharacter, QTextCursor::KeepAnchor);
        selection.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
        selection.format.setUnderlineColor(markColor(mark.first));
        selection.format.setProperty(MarkProperty, int(mark.first));
        selections.push_back(selection);
    }
    setExtraSelections(selections);
}

void CodeEditor::resizeEvent(QResizeEvent *event)
{
    QPlainTextEdit::resizeEvent(event);
    const QRect r = contentsRect();
    m_gutter->setGeometry(QRect(r.left(), r.top(), gutterWidth(), r.height()));
}

void CodeEditor::changeEvent(QEvent *event)
{
    QPlainTextEdit::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ReadOnlyChange)
        updateExtraSelections();
    if (event->type() == QEvent::PaletteChange)
        Q_EMIT paletteChanged();
    if (event->type() == QEvent::FontChange) {
        setTabStopDistance(fontMetrics().horizontalAdvance(QLatin1Char(' ')) * 4);
        setViewportMargins(gutterWidth(), 0, 0, 0);
    }
}

void CodeEditor::paintGutter(QPaintEvent *event)
{
    QPainter painter(m_gutter);
    painter.fillRect(event->rect(), palette().color(QPalette::Window));
    const int current = textCursor().blockNumber();
    const int lineHeight = fontMetrics().height();
    const int dot = std::max(4, lineHeight / 2 - 1);
    QTextBlock block = firstVisibleBlock();
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    while (block.isValid() && top <= event->rect().bottom()) {
        const int bottom = top + qRound(blockBoundingRect(block).height());
        if (block.isVisible() && bottom >= event->rect().top()) {
            const int number = block.blockNumber() + 1;
            const auto mark = m_marks.find(number);
            if (mark != m_marks.end()) {
                painter.setRenderHint(QPainter::Antialiasing);
                painter.setPen(Qt::NoPen);
                painter.setBrush(markColor(mark->second.first));
                painter.drawEllipse(QRect(3, top + (lineHeight - dot) / 2, dot, dot));
            }
            painter.setPen(palette().color(block.blockNumber() == current ? QPalette::WindowText
                                                                          : QPalette::PlaceholderText));
            painter.drawText(0, top, m_gutter->width() - 4, lineHeight, Qt::AlignRight | Qt::AlignVCenter,
                             QString::number(number));
        }
        block = block.next();
        top = bottom;
    }
}

QString CodeEditor::gutterToolTip(int y) const
{
    QTextBlock block = firstVisibleBlock();
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    while (block.isValid() && top <= y) {
        const int bottom = top + qRound(blockBoundingRect(block).height());
        if (y < bottom) {
            const auto mark = m_marks.find(block.blockNumber() + 1);
            return mark == m_marks.end() ? QString() : mark->second.second;
        }
        block = block.next();
        top = bottom;
    }
    return {};
}

} // namespace Hitscope
