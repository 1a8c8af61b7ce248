// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

class QAction;
class QCheckBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QTimer;

namespace Hitscope {

class HitsTableModel;

/// The hits table: HitsTableModel behind a sort/filter proxy; the filter (text, or a regex) applies 300 ms after
/// the last keystroke, over every column, case-insensitively.
class HitsView : public QWidget
{
    Q_OBJECT
public:
    explicit HitsView(HitsTableModel *model, QWidget *parent = nullptr);

    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QTableView *table() const { return m_table; }
    void setFilter(const QString &text, bool regex);
    /// Context menu and Ctrl+C: the selected rows as tab-separated text (file, rule, string, offset, length,
    /// preview), one line each, in the table's order.
    QAction *copyAction() const { return m_copyAction; }
    QAction *copyPathAction() const { return m_copyPathAction; }
    QAction *showBytesAction() const { return m_showBytesAction; }
    QAction *moduleDataAction() const { return m_moduleDataAction; }
    QString selectedRowsText() const;

Q_SIGNALS:
    void filterApplied();
    /// "Show bytes" on the current row (a proxy index), as a double-click.
    void hitActivated(const QModelIndex &index);
    /// The user asked for the YARA module data of the file of the hit at `index` (a proxy index).
    void moduleDataRequested(const QModelIndex &index);

private:
    void applyFilter();
    void updateCount();

    HitsTableModel *m_model = nullptr;
    QSortFilterProxyModel *m_proxy = nullptr;
    QTableView *m_table = nullptr;
    QLineEdit *m_filter = nullptr;
    QCheckBox *m_regex = nullptr;
    QLabel *m_count = nullptr;
    QTimer *m_debounce = nullptr;
    QAction *m_copyAction = nullptr;
    QAction *m_copyPathAction = nullptr;
    QAction *m_showBytesAction = nullptr;
    QAction *m_moduleDataAction = nullptr;
};

} // namespace Hitscope
