// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

#include "scan/ruleprofile.h"

class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace Hitscope {

class RuleProfileModel;

/**
 * The rules' profile of the last scan (ScanJob::profileReady): what each rule cost, slowest first, sortable by
 * any column, the reasons in full in their tooltip. A line above the table says when the engine's time could not
 * be split per rule (a GPU scan).
 */
class ProfileView : public QWidget
{
    Q_OBJECT
public:
    explicit ProfileView(QWidget *parent = nullptr);

    QTableView *table() const { return m_table; }
    RuleProfileModel *model() const { return m_model; }

public Q_SLOTS:
    void setProfile(const Hitscope::RuleProfile &profile);
    /// When a new scan starts.
    void clear();

private:
    RuleProfileModel *m_model = nullptr;
    QSortFilterProxyModel *m_proxy = nullptr;
    QTableView *m_table = nullptr;
    QLabel *m_note = nullptr;
};

} // namespace Hitscope
