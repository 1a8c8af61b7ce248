// SPDX-License-Identifier: GPL-3.0-or-later
#include "dropzone.h"

#include <QDir>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileIconProvider>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMimeData>
#include <QPushButton>
#include <QStyle>
#include <QUrl>
#include <QVBoxLayout>

namespace Hitscope {

namespace {

bool hasLocalUrls(const QMimeData *mime)
{
    if (!mime || !mime->hasUrls())
        return false;
    const QList<QUrl> urls = mime->urls();
    return std::any_of(urls.begin(), urls.end(), [](const QUrl &u) { return u.isLocalFile(); });
}

} // namespace

DropZone::DropZone(QWidget *parent)
    : QFrame(parent)
{
    setAcceptDrops(true);
    setObjectName(QStringLiteral("dropZone"));
    setFrameShape(QFrame::StyledPanel);
    setHighlighted(false);

    m_hint = new QLabel(tr("Drop folders or files here"), this);
    m_hint->setAlignment(Qt::AlignCenter);
    m_hint->setForegroundRole(QPalette::PlaceholderText);

    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("targetList"));
    m_list->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_list->setFrameShape(QFrame::NoFrame);
    m_list->setTextElideMode(Qt::ElideMiddle);
    // The list must not swallow drops meant for the zone: the zone handles them.
    m_list->setAcceptDrops(false);
    m_list->viewport()->setAcceptDrops(false);

    auto *addFolder = new QPushButton(style()->standardIcon(QStyle::SP_DirIcon), tr("Add folder…"), this);
    auto *addFiles = new QPushButton(style()->standardIcon(QStyle::SP_FileIcon), tr("Add files…"), this);
    m_remove = new QPushButton(tr("Remove"), this);
    m_remove->setEnabled(false);
    connect(addFolder, &QPushButton::clicked, this, &DropZone::onAddFolder);
    connect(addFiles, &QPushButton::clicked, this, &DropZone::onAddFiles);
    connect(m_remove, &QPushButton::clicked, this, &DropZone::removeSelected);
    connect(m_list, &QListWidget::itemSelectionChanged, this,
            [this] { m_remove->setEnabled(!m_list->selectedItems().isEmpty()); });

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(addFolder);
    buttons->addWidget(addFiles);
    buttons->addStretch();
    buttons->addWidget(m_remove);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(m_hint);
    layout->addWidget(m_list, 1);
    layout->addLayout(buttons);
    updateHint();
}

QStringList DropZone::paths() const
{
    QStringList out;
    out.reserve(m_list->count());
    for (int i = 0; i < m_list->count(); ++i)
        out.push_back(m_list->item(i)->data(Qt::UserRole).toString());
    return out;
}

int DropZone::addPaths(const QStringList &paths)
{
    QStringList known = this->paths();
    static const QFileIconProvider icons;
    int added = 0;
    for (const QString &p : paths) {
        const QString path = QDir::cleanPath(QFileInfo(p).absoluteFilePath());
        if (path.isEmpty() || known.contains(path))
            continue;
        known.push_back(path);
        const QFileInfo info(path);
        auto *item = new QListWidgetItem(icons.icon(info), QDir::toNativeSeparators(path), m_list);
        item->setData(Qt::UserRole, path);
        item->setToolTip(QDir::toNativeSeparators(path));
        ++added;
    }
    if (added) {
        updateHint();
        Q_EMIT pathsChanged(this->paths());
    }
    return added;
}

void DropZone::clear()
{
    m_list->clear();
    updateHint();
    Q_EMIT pathsChanged({});
}

void DropZone::onAddFolder()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Add a folder to scan"));
    if (!dir.isEmpty())
        addPaths({dir});
}

void DropZone::onAddFiles()
{
    const QStringList files = QFileDialog::getOpenFileNames(this, tr("Add files to scan"));
    if (!files.isEmpty())
        addPaths(files);
}

void DropZone::dragEnterEvent(QDragEnterEvent *event)
{
    if (hasLocalUrls(event->mimeData())) {
        event->acceptProposedAction();
        setHighlighted(true);
    } else {
        event->ignore();
    }
}

void DropZone::dragMoveEvent(QDragMoveEvent *event)
{
    if (hasLocalUrls(event->mimeData()))
        event->acceptProposedAction();
    else
        event->ignore();
}

void DropZone::dragLeaveEvent(QDragLeaveEvent *event)
{
    setHighlighted(false);
    QFrame::dragLeaveEvent(event);
}

void DropZone::dropEvent(QDropEvent *event)
{
    setHighlighted(false);
    if (!hasLocalUrls(event->mimeData())) {
        event->ignore();
        return;
    }
    QStringList local;
    const QList<QUrl> urls = event->mimeData()->urls();
    for (const QUrl &url : urls) {
        if (url.isLocalFile())
            local.push_back(url.toLocalFile());
    }
    // Validation (exists, readable) is the window's job when the scan starts, so a path that is missing now
    // is still listed and reported with its reason then.
    addPaths(local);
    event->acceptProposedAction();
}

void DropZone::setHighlighted(bool on)
{
    setProperty("dragActive", on);
    setStyleSheet(on ? QStringLiteral("#dropZone { border: 2px dashed palette(highlight); border-radius: 6px; }")
                     : QStringLiteral("#dropZone { border: 2px dashed palette(mid); border-radius: 6px; }"));
}

void DropZone::updateHint()
{
    m_hint->setText(m_list->count() ? tr("Drop more folders or files here")
                                    : tr("Drop folders or files here\nor use Add folder / Add files"));
}

void DropZone::removeSelected()
{
    const QList<QListWidgetItem *> items = m_list->selectedItems();
    for (QListWidgetItem *item : items)
        delete item;
    updateHint();
    Q_EMIT pathsChanged(paths());
}

} // namespace Hitscope
