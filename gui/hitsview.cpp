// SPDX-License-Identifier: GPL-3.0-or-later
#include "hitsview.h"

#include <algorithm>

#include <QAction>
#include <QCheckBox>
#include <QClipboard>
#include <QFile>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "report/hitstablemodel.h"
#include "resulttable.h"

namespace Hitscope {

HitsView::HitsView(HitsTableModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
{
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(model);
    m_proxy->setSortRole(HitsTableModel::SortRole);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);

    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("hitsFilter"));
    m_filter->setPlaceholderText(tr("Filter hits: file, rule, string, preview…"));
    m_filter->setClearButtonEnabled(true);
    m_regex = new QCheckBox(tr("Regex"), this);
    m_count = new QLabel(this);
    m_count->setForegroundRole(QPalette::PlaceholderText);

    m_table = makeResultTable(QStringLiteral("hitsTable"), m_proxy, this);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder);
    m_table->setColumnWidth(HitsTableModel::FileColumn, 340);
    m_table->setColumnWidth(HitsTableModel::RuleColumn, 130);
    m_table->setColumnWidth(HitsTableModel::StringColumn, 110);
    m_table->setColumnWidth(HitsTableModel::OffsetColumn, 90);
    m_table->setColumnWidth(HitsTableModel::LengthColumn, 70);

    // What people do with a hit they found: copy it into a report, or look at its bytes.
    m_copyAction = new QAction(tr("&Copy"), this);
    m_copyAction->setShortcut(QKeySequence::Copy);
    m_copyAction->setShortcutContext(Qt::WidgetShortcut);
    connect(m_copyAction, &QAction::triggered, this,
            [this] { QGuiApplication::clipboard()->setText(selectedRowsText()); });
    m_copyPathAction = new QAction(tr("Copy file &path"), this);
    connect(m_copyPathAction, &QAction::triggered, this, [this] {
        const QModelIndex current = m_table->currentIndex();
        if (current.isValid())
            QGuiApplication::clipboard()->setText(
                current.siblingAtColumn(HitsTableModel::FileColumn).data().toString());
    });
    m_showBytesAction = new QAction(tr("Show &bytes…"), this);
    connect(m_showBytesAction, &QAction::triggered, this, [this] {
        const QModelIndex current = m_table->currentIndex();
        if (current.isValid())
            Q_EMIT hitActivated(current);
    });
    m_moduleDataAction = new QAction(tr("&Module data of the file…"), this);
    connect(m_moduleDataAction, &QAction::triggered, this, [this] {
        const QModelIndex current = m_table->currentIndex();
        if (current.isValid())
            Q_EMIT moduleDataRequested(current);
    });
    m_table->addActions({m_copyAction, m_copyPathAction, m_showBytesAction, m_moduleDataAction});
    m_table->setContextMenuPolicy(Qt::ActionsContextMenu);

    // Typing re-filters only once the user pauses: filtering a million rows per keystroke freezes the GUI.
    m_debounce = new QTimer(this);
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(300);
    connect(m_debounce, &QTimer::timeout, this, &HitsView::applyFilter);
    connect(m_filter, &QLineEdit::textChanged, m_debounce, qOverload<>(&QTimer::start));
    connect(m_regex, &QCheckBox::toggled, m_debounce, qOverload<>(&QTimer::start));

    for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(m_proxy, signal, this, &HitsView::updateCount);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, &HitsView::updateCount);
    connect(m_model, &HitsTableModel::totalChanged, this, &HitsView::updateCount);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, &HitsView::updateCount);

    auto *bar = new QHBoxLayout;
    bar->addWidget(m_filter, 1);
    bar->addWidget(m_regex);
    bar->addSpacing(12);
    bar->addWidget(m_count);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_table, 1);
    updateCount();
}

void HitsView::setFilter(const QString &text, bool regex)
{
    m_regex->setChecked(regex);
    m_filter->setText(text);
}

void HitsView::applyFilter()
{
    const QString text = m_filter->text();
    QRegularExpression re(m_regex->isChecked() ? text : QRegularExpression::escape(text),
                          QRegularExpression::CaseInsensitiveOption);
    if (!re.isValid()) {
        m_filter->setToolTip(tr("Invalid regular expression: %1").arg(re.errorString()));
        m_filter->setStyleSheet(QStringLiteral("QLineEdit { border: 1px solid #c0392b; }"));
        return;
    }
    m_filter->setToolTip({});
    m_filter->setStyleSheet({});
    m_proxy->setFilterRegularExpression(re);
    updateCount();
    Q_EMIT filterApplied();
}

QString HitsView::selectedRowsText() const
{
    QModelIndexList rows = m_table->selectionModel()->selectedRows();
    std::sort(rows.begin(), rows.end(), [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    QString text;
    for (const QModelIndex &row : std::as_const(rows)) {
        QStringList cells;
        for (int c = 0; c < HitsTableModel::NUM_COLUMNS; ++c)
            cells.push_back(row.siblingAtColumn(c).data().toString());
        text += cells.join(QLatin1Char('\t')) + QLatin1Char('\n');
    }
    return text;
}

void HitsView::updateCount()
{
    const int total = m_model->totalHits();
    const int shown = m_proxy->rowCount();
    if (m_filter->text().isEmpty())
        m_count->setText(tr("%n hit(s)", nullptr, total));
    else
        m_count->setText(tr("%1 of %n hit(s) loaded match", nullptr, total).arg(shown));
}

} // namespace Hitscope
