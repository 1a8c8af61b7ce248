// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QAbstractTableModel>
#include <QHash>
#include <QSet>
#include <QVector>

#include "report/hitrow.h"

namespace Hitscope {

/**
 * Hits per rule: one row per rule that matched, with the number of distinct files and of hits. Updated from
 * the same batches as HitsTableModel (appendHits): new rules are inserted at the end, changed rows get
 * dataChanged, and the model is reset only by clear() when a new scan starts, so views keep their selection
 * and sort while a scan runs.
 */
class RuleSummaryModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Columns { RuleColumn, FilesColumn, HitsColumn, NUM_COLUMNS };
    /// SortRole: the rule name, or the count as qint64.
    enum Roles { SortRole = Qt::UserRole };

    explicit RuleSummaryModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// The row of `rule`, or -1 when it has no hits.
    int rowOf(const QString &rule) const { return m_rowOfRule.value(rule, -1); }
    QString rule(int row) const { return m_rows[row].rule; }
    qint64 files(int row) const { return m_rows[row].files.size(); }
    qint64 hits(int row) const { return m_rows[row].hits; }

public Q_SLOTS:
    void appendHits(const QVector<Hitscope::HitRow> &rows);
    /// Only when a new scan starts.
    void clear();

private:
    struct Row
    {
        QString rule;
        QSet<QByteArray> files;
        qint64 hits = 0;
        QByteArray lastPath; // the file of this rule's latest hit, already in `files`
    };

    QVector<Row> m_rows;
    QHash<QString, int> m_rowOfRule;
};

} // namespace Hitscope
