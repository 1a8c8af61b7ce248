// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QAbstractTableModel>
#include <QVector>

#include "report/fileverdict.h"

namespace Hitscope {

/**
 * The files of a scan that matched, one row each, for triage: score, path, rules, tags, hits and size. Rows are
 * appended batch by batch (one beginInsertRows per append). Lives in core: it uses QtCore only.
 */
class FilesTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Columns { ScoreColumn, FileColumn, RulesColumn, TagsColumn, HitsColumn, SizeColumn, NUM_COLUMNS };
    /// SortRole: numbers for Score, Rules (their count), Hits and Size; texts otherwise.
    /// FilterRole: the path, the rules and the tags in one string, what the view's filter searches.
    enum Roles { SortRole = Qt::UserRole, FilterRole };

    explicit FilesTableModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    const FileVerdict &verdict(int row) const { return m_rows[row]; }
    const QVector<FileVerdict> &verdicts() const { return m_rows; }

public Q_SLOTS:
    void appendFiles(const QVector<Hitscope::FileVerdict> &files);
    /// Only when a new scan starts.
    void clear();

private:
    QVector<FileVerdict> m_rows;
};

} // namespace Hitscope
