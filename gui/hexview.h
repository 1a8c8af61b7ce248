// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>
#include <QTextFormat>

class QDialogButtonBox;
class QLabel;
class QPlainTextEdit;

namespace Hitscope {

/// The bytes around one hit, read from the file when the dialog opens: offset, hex and ASCII columns,
/// 16 bytes a row, with the match's bytes highlighted. Shows a message instead when the file cannot be read.
class HexView : public QDialog
{
    Q_OBJECT
public:
    /// Bytes shown before the match (rounded down to a row) and in all.
    static constexpr qint64 ContextBefore = 256;
    static constexpr qint64 WindowBytes = 512;
    static constexpr int BytesPerRow = 16;
    /// Set on the character format of highlighted characters, so tests need not compare colours.
    static constexpr int MatchProperty = QTextFormat::UserProperty + 1;

    HexView(const QByteArray &path, qint64 offset, qint64 length, QWidget *parent = nullptr);
    /// Shown inside another window (the Files view's detail) rather than as a dialog of its own: no Close button.
    void setEmbedded();
    /// A dialog closes on Esc; an embedded view stays.
    void reject() override;

    QPlainTextEdit *text() const { return m_text; }
    /// File offset of the first byte shown; -1 when nothing could be read.
    qint64 windowStart() const { return m_start; }
    /// The match shown: its offset in the file and its length.
    qint64 matchOffset() const { return m_matchOffset; }
    qint64 matchLength() const { return m_matchLength; }
    /// Column where a row's ASCII part starts.
    static int asciiColumn();
    /// Column of byte `i` (0..15) of a row in the hex part.
    static int hexColumn(int i);

private:
    void showError(const QString &message);
    void render(const QByteArray &bytes, qint64 offset, qint64 length);

    QLabel *m_label = nullptr;
    QPlainTextEdit *m_text = nullptr;
    qint64 m_start = -1;
    qint64 m_matchOffset = 0;
    qint64 m_matchLength = 0;
    QDialogButtonBox *m_buttons = nullptr;
    bool m_embedded = false;
};

} // namespace Hitscope
