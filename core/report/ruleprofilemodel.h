// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QAbstractTableModel>

#include "scan/ruleprofile.h"

namespace Hitscope {

/**
 * A scan's rule profile (ScanJob::profileReady) as a table: a row per rule in the profile's order (slowest
 * first, which the rank column keeps whatever the view's sort), the times in milliseconds, hits, files and the
 * reasons joined (each on a line of its own in the tooltip). Set once per scan: the model is reset then.
 */
class RuleProfileModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Columns {
        RankColumn,
        RuleColumn,
        LocationColumn,
        EngineColumn,
        ConditionColumn,
        ResolveColumn,
        TotalColumn,
        HitsColumn,
        FilesColumn,
        ReasonsColumn,
        NUM_COLUMNS
    };
    /// SortRole: the raw value (a number, or the text); the engine time -1 where it could not be measured.
    enum Roles { SortRole = Qt::UserRole };

    explicit RuleProfileModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    const RuleProfile &profile() const { return m_profile; }

public Q_SLOTS:
    void setProfile(const Hitscope::RuleProfile &profile);
    void clear();

private:
    QVariant display(const RuleProfileRow &row, int rank, int column) const;
    QVariant sortValue(const RuleProfileRow &row, int rank, int column) const;

    RuleProfile m_profile;
};

} // namespace Hitscope
