// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArrayList>
#include <QPointer>
#include <QWidget>

#include "hexview.h"
#include "moduleview.h"
#include "report/filereport.h"

class QAction;
class QLabel;
class QLineEdit;
class QModelIndex;
class QSortFilterProxyModel;
class QSpinBox;
class QSplitter;
class QTableView;
class QTableWidget;
class QTabWidget;
class QTimer;

namespace Hitscope {

class FilesTableModel;
class HitsTableModel;

/**
 * Triage: one row per file that matched, with its score, rules and tags, sorted by score; a filter on path,
 * rule and tag and a minimum score. The selected file's hits, YARA module data and bytes show beside the list.
 * Exports what the list shows (filtered, in its order) as HTML, JSON or CSV.
 */
class FilesView : public QWidget
{
    Q_OBJECT
public:
    /// The verdicts' hit rows are rows of `hits`, the scan's hit table.
    FilesView(FilesTableModel *files, HitsTableModel *hits, QWidget *parent = nullptr);

    QTableView *table() const { return m_table; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QTableWidget *hitsTable() const { return m_hits; }
    QTabWidget *details() const { return m_details; }
    /// The detail views of the current file (null before a file is selected).
    ModuleView *moduleView() const { return m_moduleView; }
    HexView *hexView() const { return m_hexView; }
    QAction *exportAction() const { return m_exportAction; }

    /// Applies at once (typing applies after a pause).
    void setFilter(const QString &text);
    void setMinimumScore(int score);
    /// The files selected in the list, in its order.
    QByteArrayList selectedPaths() const;
    /// The files the list shows (after the filter), in its order: what an export writes.
    QVector<FileVerdict> shownFiles() const;
    /// What the report says about the scan (set when a scan ends).
    void setScan(const FileReport::Scan &scan) { m_scan = scan; }
    /// Writes shownFiles() to `path` in the format its suffix names.
    bool exportTo(const QString &path, QString *error) const;

Q_SIGNALS:
    void selectionChanged(const QByteArrayList &paths);
    /// The user asked to export (the window asks where, then calls exportTo()).
    void exportRequested();

private:
    void setupTable();
    void setupDetails();
    void applyFilter();
    void updateCount();
    void showFile(const QModelIndex &proxyIndex);
    void showModules();
    void showBytes(int hitRow);
    void clearDetails();

    FilesTableModel *m_model = nullptr;
    HitsTableModel *m_hitModel = nullptr;
    QSortFilterProxyModel *m_proxy = nullptr;
    QTableView *m_table = nullptr;
    QLineEdit *m_filter = nullptr;
    QSpinBox *m_minScore = nullptr;
    QLabel *m_count = nullptr;
    QTimer *m_debounce = nullptr;
    QAction *m_exportAction = nullptr;
    QSplitter *m_splitter = nullptr;
    QTabWidget *m_details = nullptr;
    QTableWidget *m_hits = nullptr;
    QWidget *m_modulePage = nullptr;
    QWidget *m_bytesPage = nullptr;
    QPointer<ModuleView> m_moduleView;
    QPointer<HexView> m_hexView;
    int m_shownFileRow = -1; ///< source row of the file in the details
    FileReport::Scan m_scan;
};

} // namespace Hitscope
