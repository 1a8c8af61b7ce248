// SPDX-License-Identifier: GPL-3.0-or-later
#include "problemspanel.h"

#include <QDir>
#include <QHeaderView>
#include <QStyle>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace Hitscope {

ProblemsPanel::ProblemsPanel(QWidget *parent)
    : QWidget(parent)
{
    m_tree = new QTreeWidget(this);
    m_tree->setObjectName(QStringLiteral("problemsTree"));
    m_tree->setRootIsDecorated(false);
    m_tree->setUniformRowHeights(true);
    m_tree->setAlternatingRowColors(true);
    m_tree->setSortingEnabled(true);
    m_tree->setHeaderLabels({tr("Kind"), tr("Path"), tr("Reason")});
    m_tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_tree->header()->resizeSection(1, 420);
    m_tree->header()->setStretchLastSection(true);
    m_tree->sortByColumn(-1, Qt::AscendingOrder);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tree);
}

void ProblemsPanel::addProblem(Kind kind, const QString &path, const QString &reason)
{
    QString kindText;
    QStyle::StandardPixmap icon = QStyle::SP_MessageBoxWarning;
    switch (kind) {
    case Kind::File:
        kindText = tr("File");
        break;
    case Kind::Rule:
        kindText = tr("Rule");
        break;
    case Kind::Engine:
        kindText = tr("Engine");
        icon = QStyle::SP_MessageBoxInformation;
        break;
    }
    auto *item = new QTreeWidgetItem(m_tree, {kindText, QDir::toNativeSeparators(path), reason});
    item->setIcon(0, style()->standardIcon(icon));
    item->setToolTip(1, path);
    item->setToolTip(2, reason);
    Q_EMIT countChanged(count());
}

int ProblemsPanel::count() const
{
    return m_tree->topLevelItemCount();
}

void ProblemsPanel::clear()
{
    m_tree->clear();
    Q_EMIT countChanged(0);
}

} // namespace Hitscope
