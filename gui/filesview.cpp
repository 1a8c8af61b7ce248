// SPDX-License-Identifier: GPL-3.0-or-later
#include "filesview.h"

#include <algorithm>

#include <QAction>
#include <QBrush>
#include <QColor>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include "hexview.h"
#include "moduleview.h"
#include "report/filestablemodel.h"
#include "report/hitstablemodel.h"
#include "resulttable.h"

namespace Hitscope {

namespace {

/// The list's filter: the text anywhere in a file's path, rules or tags, and a minimum score.
class FilesFilter : public QSortFilterProxyModel
{
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

    void setMinimumScore(int score)
    {
        m_minScore = score;
        invalidateRowsFilter();
    }

    QVariant data(const QModelIndex &index, int role) const override
    {
        // Red for a file to look at first, amber for one to look at: the colours of a triage list, light
        // enough that the number stays readable in light and dark themes.
        if (role == Qt::BackgroundRole && index.column() == FilesTableModel::ScoreColumn) {
            const int score = index.data(FilesTableModel::SortRole).toInt();
            if (score >= 75)
                return QBrush(QColor(220, 50, 47, 90));
            if (score >= 50)
                return QBrush(QColor(230, 160, 20, 80));
            return {};
        }
        return QSortFilterProxyModel::data(index, role);
    }

protected:
    bool filterAcceptsRow(int row, const QModelIndex &parent) const override
    {
        const QModelIndex index = sourceModel()->index(row, FilesTableModel::ScoreColumn, parent);
        if (index.data(FilesTableModel::SortRole).toInt() < m_minScore)
            return false;
        return QSortFilterProxyModel::filterAcceptsRow(row, parent);
    }

private:
    int m_minScore = 0;
};

/// More hits than this in one file: the list shows the first ones and says how many there are.
constexpr int kHitsShown = 10000;

} // namespace

FilesView::FilesView(FilesTableModel *files, HitsTableModel *hits, QWidget *parent)
    : QWidget(parent)
    , m_model(files)
    , m_hitModel(hits)
{
    setupTable();
    setupDetails();

    m_splitter = new QSplitter(Qt::Horizontal, this);
    m_splitter->setObjectName(QStringLiteral("filesSplitter"));
    m_splitter->addWidget(m_table);
    m_splitter->addWidget(m_details);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 2);

    auto *exportButton = new QToolButton(this);
    exportButton->setDefaultAction(m_exportAction);
    auto *bar = new QHBoxLayout;
    bar->addWidget(m_filter, 1);
    bar->addWidget(new QLabel(tr("Score ≥"), this));
    bar->addWidget(m_minScore);
    bar->addWidget(m_count);
    bar->addWidget(exportButton);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_splitter, 1);

    connect(m_model, &QAbstractItemModel::rowsInserted, this, &FilesView::updateCount);
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        clearDetails();
        updateCount();
        // A reset clears the selection without a selectionChanged(): the rule editor would test old files.
        Q_EMIT selectionChanged({});
    });
    updateCount();
}

void FilesView::setupTable()
{
    m_proxy = new FilesFilter(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(FilesTableModel::SortRole);
    m_proxy->setFilterRole(FilesTableModel::FilterRole);
    m_proxy->setFilterKeyColumn(0);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    // New files take their place in the sorted list as they arrive.
    m_proxy->setDynamicSortFilter(true);

    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("filesFilter"));
    m_filter->setPlaceholderText(tr("Filter files: path, rule, tag…"));
    m_filter->setClearButtonEnabled(true);
    m_minScore = new QSpinBox(this);
    m_minScore->setObjectName(QStringLiteral("filesMinScore"));
    m_minScore->setRange(0, 100);
    m_minScore->setToolTip(tr("Show only files whose score is at least this (a rule's meta score or severity; "
                              "%1 for a rule that has neither)")
                               .arg(FileVerdict::kDefaultRuleScore));
    m_count = new QLabel(this);
    m_count->setForegroundRole(QPalette::PlaceholderText);
    m_debounce = new QTimer(this);
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(300);
    connect(m_filter, &QLineEdit::textChanged, m_debounce, qOverload<>(&QTimer::start));
    connect(m_debounce, &QTimer::timeout, this, &FilesView::applyFilter);
    connect(m_minScore, &QSpinBox::valueChanged, this, &FilesView::setMinimumScore);

    m_exportAction = new QAction(tr("Export…"), this);
    m_exportAction->setToolTip(tr("Save the files listed, with their hits, as an HTML report, JSON or CSV"));
    connect(m_exportAction, &QAction::triggered, this, &FilesView::exportRequested);

    m_table = makeResultTable(QStringLiteral("filesTable"), m_proxy, this);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(FilesTableModel::ScoreColumn, Qt::DescendingOrder);
    m_table->setColumnWidth(FilesTableModel::ScoreColumn, 56);
    m_table->setColumnWidth(FilesTableModel::FileColumn, 300);
    m_table->setColumnWidth(FilesTableModel::RulesColumn, 200);
    m_table->setColumnWidth(FilesTableModel::TagsColumn, 120);
    m_table->setColumnWidth(FilesTableModel::HitsColumn, 60);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        showFile(m_table->selectionModel()->currentIndex());
        Q_EMIT selectionChanged(selectedPaths());
    });
}

void FilesView::setupDetails()
{
    m_hits = new QTableWidget(0, 4, this);
    m_hits->setObjectName(QStringLiteral("fileHitsTable"));
    m_hits->setHorizontalHeaderLabels({ tr("Rule"), tr("String"), tr("Offset"), tr("Length") });
    m_hits->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_hits->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_hits->setSelectionMode(QAbstractItemView::SingleSelection);
    m_hits->verticalHeader()->hide();
    m_hits->verticalHeader()->setDefaultSectionSize(m_hits->fontMetrics().height() + 6);
    m_hits->horizontalHeader()->setStretchLastSection(true);
    // The bytes follow the hit chosen here.
    connect(m_hits, &QTableWidget::currentCellChanged, this, [this](int row) {
        if (row >= 0 && m_shownFileRow >= 0)
            showBytes(m_model->verdict(m_shownFileRow).firstHit + row);
    });
    m_modulePage = new QWidget(this);
    new QVBoxLayout(m_modulePage);
    m_bytesPage = new QWidget(this);
    new QVBoxLayout(m_bytesPage);
    m_details = new QTabWidget(this);
    m_details->setObjectName(QStringLiteral("fileDetails"));
    m_details->setDocumentMode(true);
    m_details->addTab(m_hits, tr("Hits"));
    m_details->addTab(m_modulePage, tr("Module data"));
    m_details->addTab(m_bytesPage, tr("Bytes"));
    connect(m_details, &QTabWidget::currentChanged, this, &FilesView::showModules);
}

void FilesView::setFilter(const QString &text)
{
    m_filter->setText(text);
    m_debounce->stop();
    applyFilter();
}

void FilesView::setMinimumScore(int score)
{
    if (m_minScore->value() != score) {
        m_minScore->setValue(score); // comes back here through valueChanged
        return;
    }
    static_cast<FilesFilter *>(m_proxy)->setMinimumScore(score);
    updateCount();
}

void FilesView::applyFilter()
{
    m_proxy->setFilterFixedString(m_filter->text());
    updateCount();
}

void FilesView::updateCount()
{
    const int all = m_model->rowCount();
    const int shown = m_proxy->rowCount();
    const QLocale locale;
    m_count->setText(shown == all ? tr("%n file(s)", nullptr, all)
                                  : tr("%1 of %2 files").arg(locale.toString(shown), locale.toString(all)));
    m_exportAction->setEnabled(shown > 0);
}

QByteArrayList FilesView::selectedPaths() const
{
    QByteArrayList out;
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    QList<int> proxyRows;
    for (const QModelIndex &i : rows)
        proxyRows.push_back(i.row());
    std::sort(proxyRows.begin(), proxyRows.end());
    for (int r : proxyRows)
        out.push_back(m_model->verdict(m_proxy->mapToSource(m_proxy->index(r, 0)).row()).path);
    return out;
}

QVector<FileVerdict> FilesView::shownFiles() const
{
    QVector<FileVerdict> out;
    out.reserve(m_proxy->rowCount());
    for (int r = 0; r < m_proxy->rowCount(); ++r)
        out.push_back(m_model->verdict(m_proxy->mapToSource(m_proxy->index(r, 0)).row()));
    return out;
}

bool FilesView::exportTo(const QString &path, QString *error) const
{
    return FileReport::write(path, shownFiles(), FileReport::lookupIn(m_hitModel->batches()), m_scan, error);
}

void FilesView::clearDetails()
{
    m_shownFileRow = -1;
    m_hits->setRowCount(0);
    delete m_moduleView;
    delete m_hexView;
}

void FilesView::showFile(const QModelIndex &proxyIndex)
{
    const int row = proxyIndex.isValid() ? m_proxy->mapToSource(proxyIndex).row() : -1;
    if (row == m_shownFileRow)
        return;
    clearDetails();
    if (row < 0)
        return;
    m_shownFileRow = row;
    const FileVerdict &v = m_model->verdict(row);
    const int shown = std::min(v.hitCount, kHitsShown);
    m_hits->setRowCount(shown);
    for (int i = 0; i < shown; ++i) {
        const HitRow &h = m_hitModel->hit(v.firstHit + i);
        auto *offset = new QTableWidgetItem(QStringLiteral("0x%1").arg(h.offset, 0, 16));
        offset->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        auto *length = new QTableWidgetItem(QString::number(h.length));
        length->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_hits->setItem(i, 0, new QTableWidgetItem(h.rule));
        m_hits->setItem(i, 1, new QTableWidgetItem(h.string));
        m_hits->setItem(i, 2, offset);
        m_hits->setItem(i, 3, length);
    }
    m_hits->setToolTip(shown < v.hitCount ? tr("The first %1 of %2 hits: the export lists them all.")
                                                .arg(QLocale().toString(shown), QLocale().toString(v.hitCount))
                                          : QString());
    showModules();
    if (shown > 0)
        m_hits->setCurrentCell(0, 0);
    else
        showBytes(-1);
}

void FilesView::showModules()
{
    // Read only while the tab is open: libyara walks every byte of the file.
    if (m_moduleView || m_shownFileRow < 0 || m_details->currentWidget() != m_modulePage)
        return;
    m_moduleView = new ModuleView(m_model->verdict(m_shownFileRow).path, m_modulePage);
    m_moduleView->setEmbedded();
    m_modulePage->layout()->addWidget(m_moduleView);
}

void FilesView::showBytes(int hitRow)
{
    delete m_hexView;
    if (m_shownFileRow < 0)
        return;
    const FileVerdict &v = m_model->verdict(m_shownFileRow);
    const HitRow *hit = hitRow >= 0 ? &m_hitModel->hit(hitRow) : nullptr;
    m_hexView = new HexView(v.path, hit ? hit->offset : 0, hit ? hit->length : 0, m_bytesPage);
    m_hexView->setEmbedded();
    m_bytesPage->layout()->addWidget(m_hexView);
}

} // namespace Hitscope
