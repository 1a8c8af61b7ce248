// SPDX-License-Identifier: GPL-3.0-or-later
#include "profileview.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

#include "report/ruleprofilemodel.h"

namespace Hitscope {

namespace {

/// Paths keep their end (the file name and line) when they do not fit.
class ElideLeftDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = Qt::ElideLeft;
    }
};

} // namespace

ProfileView::ProfileView(QWidget *parent)
    : QWidget(parent)
    , m_model(new RuleProfileModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_table(new QTableView(this))
    , m_note(new QLabel(this))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(RuleProfileModel::SortRole);
    m_table->setObjectName(QStringLiteral("profileTable"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->setAlternatingRowColors(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    // One line a rule: the reasons, last, get the room left (in full in the tooltip).
    m_table->setWordWrap(false);
    m_table->setItemDelegateForColumn(RuleProfileModel::LocationColumn, new ElideLeftDelegate(m_table));
    m_table->horizontalHeader()->setStretchLastSection(true);
    // The rank is the slowest-first order of the profile.
    m_table->sortByColumn(RuleProfileModel::RankColumn, Qt::AscendingOrder);

    m_note->setObjectName(QStringLiteral("profileNote"));
    m_note->setWordWrap(true);
    m_note->setText(tr("The GPU's kernels cannot be split per rule: engine times show as \"-\". Scan on the CPU "
                       "engine to measure them; totals count the host's part of the engine, conditions and "
                       "resolving."));
    m_note->hide();

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_note);
    layout->addWidget(m_table);
}

void ProfileView::setProfile(const RuleProfile &profile)
{
    m_model->setProfile(profile);
    m_note->setVisible(!profile.engineSplit);
    m_table->resizeColumnsToContents();
    const int maxLocation = m_table->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 22;
    if (m_table->columnWidth(RuleProfileModel::LocationColumn) > maxLocation)
        m_table->setColumnWidth(RuleProfileModel::LocationColumn, maxLocation);
}

void ProfileView::clear()
{
    m_model->clear();
    m_note->hide();
}

} // namespace Hitscope
