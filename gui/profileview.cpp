// SPDX-License-Identifier: GPL-3.0-or-later
#include "profileview.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "report/ruleprofilemodel.h"

namespace Hitscope {

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
}

void ProfileView::clear()
{
    m_model->clear();
    m_note->hide();
}

} // namespace Hitscope
