// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QAbstractTableModel>
#include <QVector>

#include "report/hitrow.h"

namespace Hitscope {

/**
 * The hits of a scan as a table: rows are appended batch by batch (one beginInsertRows per append, never a
 * reset during a scan) and served to views in chunks through canFetchMore()/fetchMore(), so a million hits
 * do not freeze the GUI. Lives in core: it uses QtCore only.
 *
 * An append keeps the batch's vector as it came (implicitly shared, no per-row copy), so its cost does not grow
 * with the number of hits in the batch; clear() frees the old rows on a pool thread.
 */
class HitsTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Columns { FileColumn, RuleColumn, StringColumn, OffsetColumn, LengthColumn, PreviewColumn, NUM_COLUMNS };
    /// SortRole: the value to sort by (qint64 for Offset and Length, QString for texts, the bytes for Preview).
    /// RawRole: the value as stored (the path and preview as QByteArray, numbers as qint64).
    enum Roles { SortRole = Qt::UserRole, RawRole };
    /// Rows handed to views per fetchMore().
    static constexpr int FetchChunk = 10000;

    explicit HitsTableModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;

    /// Any row received so far, shown or not yet fetched (0 <= row < totalHits()).
    const HitRow &hit(int row) const;
    int totalHits() const { return m_total; }
    /// Every row received so far, as appended (implicitly shared: no row is copied), for HitExporter.
    QVector<QVector<HitRow>> batches() const { return m_batches; }

public Q_SLOTS:
    void appendHits(const QVector<Hitscope::HitRow> &rows);
    /// Only when a new scan starts.
    void clear();

Q_SIGNALS:
    /// totalHits() changed; rowsInserted() does not say so once views stop fetching.
    void totalChanged(int total);

private:
    void reveal(int upTo);

    QVector<QVector<HitRow>> m_batches; // as appended; never empty vectors
    QVector<int> m_batchStart; // row number of each batch's first row, ascending
    mutable int m_lastBatch = 0; // where the last hit() lookup landed: views ask for neighbouring rows
    int m_total = 0;
    int m_visible = 0; // rows handed to views so far
    bool m_inserting = false; // inside reveal(): fetchMore() from a rowsInserted() handler must not nest
    int m_limit = FetchChunk; // rows views have asked for: appends reveal rows up to here, fetchMore() raises it
};

} // namespace Hitscope
