// SPDX-License-Identifier: GPL-3.0-or-later
#include "rulesetpanel.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QListWidget>
#include <QPushButton>
#include <QStyle>
#include <QVBoxLayout>

namespace Hitscope {

namespace {

QString kindOf(const QString &path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("tsv"))
        return RuleSetPanel::tr("regex list");
    if (suffix == QLatin1String("yar") || suffix == QLatin1String("yara"))
        return RuleSetPanel::tr("YARA rules");
    return RuleSetPanel::tr("literal list");
}

} // namespace

RuleSetPanel::RuleSetPanel(QWidget *parent)
    : QWidget(parent)
{
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("ruleList"));
    m_list->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_list->setTextElideMode(Qt::ElideMiddle);
    connect(m_list, &QListWidget::itemChanged, this, &RuleSetPanel::ruleFilesChanged);

    auto *add = new QPushButton(style()->standardIcon(QStyle::SP_FileDialogNewFolder), tr("Add rules…"), this);
    m_remove = new QPushButton(tr("Remove"), this);
    m_remove->setEnabled(false);
    connect(add, &QPushButton::clicked, this, &RuleSetPanel::onAddRules);
    connect(m_remove, &QPushButton::clicked, this, &RuleSetPanel::onRemoveSelected);
    connect(m_list, &QListWidget::itemSelectionChanged, this,
            [this] { m_remove->setEnabled(!m_list->selectedItems().isEmpty()); });

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(add);
    buttons->addStretch();
    buttons->addWidget(m_remove);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_list, 1);
    layout->addLayout(buttons);
}

int RuleSetPanel::addRuleFiles(const QStringList &files)
{
    const QStringList known = ruleFiles();
    int added = 0;
    for (const QString &f : files) {
        const QString path = QDir::cleanPath(QFileInfo(f).absoluteFilePath());
        if (path.isEmpty() || known.contains(path))
            continue;
        auto *item = new QListWidgetItem(QFileInfo(path).fileName() + QStringLiteral("  (") + kindOf(path)
                                             + QLatin1Char(')'),
                                         m_list);
        item->setData(Qt::UserRole, path);
        item->setToolTip(QDir::toNativeSeparators(path));
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Checked);
        ++added;
    }
    if (added)
        Q_EMIT ruleFilesChanged();
    return added;
}

QStringList RuleSetPanel::ruleFiles() const
{
    QStringList out;
    for (int i = 0; i < m_list->count(); ++i)
        out.push_back(m_list->item(i)->data(Qt::UserRole).toString());
    return out;
}

QStringList RuleSetPanel::enabledRuleFiles() const
{
    QStringList out;
    for (int i = 0; i < m_list->count(); ++i) {
        if (m_list->item(i)->checkState() == Qt::Checked)
            out.push_back(m_list->item(i)->data(Qt::UserRole).toString());
    }
    return out;
}

void RuleSetPanel::setEnabledAt(int row, bool enabled)
{
    if (QListWidgetItem *item = m_list->item(row))
        item->setCheckState(enabled ? Qt::Checked : Qt::Unchecked);
}

void RuleSetPanel::onAddRules()
{
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Add rule files"), {}, tr("Rule files (*.txt *.tsv *.yar *.yara);;All files (*)"));
    addRuleFiles(files);
}

void RuleSetPanel::onRemoveSelected()
{
    const QList<QListWidgetItem *> items = m_list->selectedItems();
    if (items.isEmpty())
        return;
    for (QListWidgetItem *item : items)
        delete item;
    Q_EMIT ruleFilesChanged();
}

} // namespace Hitscope
