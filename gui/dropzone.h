// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QFrame>
#include <QStringList>

class QLabel;
class QListWidget;
class QPushButton;

namespace Hitscope {

/// Where the user puts what to scan: folders and files dropped from a file manager (text/uri-list) or picked
/// with Add folder / Add files. Keeps the list of targets, without duplicates.
class DropZone : public QFrame
{
    Q_OBJECT
public:
    explicit DropZone(QWidget *parent = nullptr);

    QStringList paths() const;
    /// Adds local paths (absolute, cleaned); ignores ones already listed. Returns how many were added.
    int addPaths(const QStringList &paths);
    void clear();

public Q_SLOTS:
    void onAddFolder();
    void onAddFiles();

Q_SIGNALS:
    void pathsChanged(const QStringList &paths);

protected:
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dragMoveEvent(QDragMoveEvent *event) override;
    void dragLeaveEvent(QDragLeaveEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void setHighlighted(bool on);
    void updateHint();
    void removeSelected();

    QListWidget *m_list = nullptr;
    QLabel *m_hint = nullptr;
    QPushButton *m_remove = nullptr;
};

} // namespace Hitscope
