// SPDX-License-Identifier: GPL-3.0-or-later
#include "hexview.h"

#include <algorithm>

#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTextBlock>
#include <QTextCursor>
#include <QVBoxLayout>

namespace Hitscope {

namespace {

constexpr int kOffsetWidth = 8; // hex digits of the offset column
constexpr int kGap = 2; // spaces after the offset column and before the ASCII column

} // namespace

int HexView::hexColumn(int i)
{
    // An extra space after the 8th byte, as hexdump -C does, so the eye finds the middle of a row.
    return kOffsetWidth + kGap + i * 3 + (i >= BytesPerRow / 2 ? 1 : 0);
}

int HexView::asciiColumn()
{
    return hexColumn(BytesPerRow - 1) + 2 + kGap + 1; // + 1: the opening '|'
}

HexView::HexView(const QByteArray &path, qint64 offset, qint64 length, QWidget *parent)
    : QDialog(parent)
    , m_matchOffset(offset)
    , m_matchLength(length)
{
    const QString name = QFile::decodeName(path);
    setWindowTitle(tr("%1 at offset %2 (0x%3)")
                       .arg(QFileInfo(name).fileName())
                       .arg(offset)
                       .arg(offset, 0, 16));
    m_label = new QLabel(QDir::toNativeSeparators(name), this);
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_label->setWordWrap(true);
    m_text = new QPlainTextEdit(this);
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_label);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_buttons);
    const int charWidth = m_text->fontMetrics().horizontalAdvance(QLatin1Char('0'));
    resize(charWidth * (asciiColumn() + BytesPerRow + 6), 520);

    QFile file(name);
    if (!file.open(QIODevice::ReadOnly)) {
        showError(tr("Cannot read %1: %2").arg(QDir::toNativeSeparators(name), file.errorString()));
        return;
    }
    // Rows start at multiples of 16 so the offset column reads like hexdump's.
    const qint64 start = std::max<qint64>(0, offset - ContextBefore) & ~qint64(BytesPerRow - 1);
    if (!file.seek(start)) {
        showError(tr("Cannot read %1 at offset %2: %3")
                      .arg(QDir::toNativeSeparators(name))
                      .arg(start)
                      .arg(file.errorString()));
        return;
    }
    const QByteArray bytes = file.read(WindowBytes);
    if (bytes.isEmpty() || start + bytes.size() <= offset) {
        // The file shrank or changed since the scan: say so rather than highlight the wrong bytes.
        showError(file.error() != QFileDevice::NoError
                      ? tr("Cannot read %1: %2").arg(QDir::toNativeSeparators(name), file.errorString())
                      : tr("%1 is now shorter than offset %2: it changed after the scan.")
                            .arg(QDir::toNativeSeparators(name))
                            .arg(offset));
        return;
    }
    m_start = start;
    render(bytes, offset, length);
}

void HexView::showError(const QString &message)
{
    qWarning().noquote() << message;
    m_text->setPlainText(message);
    m_text->setLineWrapMode(QPlainTextEdit::WidgetWidth);
}

void HexView::render(const QByteArray &bytes, qint64 offset, qint64 length)
{
    QString text;
    const int rows = int((bytes.size() + BytesPerRow - 1) / BytesPerRow);
    for (int r = 0; r < rows; ++r) {
        QString line = QStringLiteral("%1").arg(m_start + r * BytesPerRow, kOffsetWidth, 16, QLatin1Char('0'));
        line.resize(asciiColumn() - 1, QLatin1Char(' '));
        line += QLatin1Char('|');
        for (int i = 0; i < BytesPerRow; ++i) {
            const qsizetype at = qsizetype(r) * BytesPerRow + i;
            if (at >= bytes.size())
                break;
            const uchar b = uchar(bytes[at]);
            line.replace(hexColumn(i), 2, QStringLiteral("%1").arg(b, 2, 16, QLatin1Char('0')));
            line += (b >= 0x20 && b < 0x7f) ? QLatin1Char(char(b)) : QLatin1Char('.');
        }
        line += QLatin1Char('|');
        if (r)
            text += QLatin1Char('\n');
        text += line;
    }
    m_text->setPlainText(text);

    // Formats go into the document (not extra selections) so they survive the view's own selections.
    QTextCharFormat match;
    match.setBackground(QColor(255, 214, 102));
    match.setProperty(MatchProperty, true);
    QTextCursor cursor(m_text->document());
    const qint64 first = std::max<qint64>(offset, m_start) - m_start;
    const qint64 last = std::min<qint64>(offset + std::max<qint64>(length, 1), m_start + bytes.size()) - m_start;
    for (qint64 at = first; at < last; ++at) {
        const QTextBlock block = m_text->document()->findBlockByNumber(int(at / BytesPerRow));
        const int i = int(at % BytesPerRow);
        cursor.setPosition(block.position() + hexColumn(i));
        cursor.setPosition(block.position() + hexColumn(i) + 2, QTextCursor::KeepAnchor);
        cursor.mergeCharFormat(match);
        cursor.setPosition(block.position() + asciiColumn() + i);
        cursor.setPosition(block.position() + asciiColumn() + i + 1, QTextCursor::KeepAnchor);
        cursor.mergeCharFormat(match);
    }
    // Bring the match into view rather than the top of the window.
    cursor.setPosition(m_text->document()->findBlockByNumber(int(first / BytesPerRow)).position());
    m_text->setTextCursor(cursor);
    m_text->centerCursor();
}

void HexView::setEmbedded()
{
    setWindowFlags(Qt::Widget);
    m_buttons->hide();
    m_embedded = true;
}

void HexView::reject()
{
    if (!m_embedded)
        QDialog::reject();
}

} // namespace Hitscope
