// SPDX-License-Identifier: GPL-3.0-or-later
#include "rulesummarymodel.h"

#include <algorithm>

#include <QLocale>

namespace Hitscope {

RuleSummaryModel::RuleSummaryModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

int RuleSummaryModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int RuleSummaryModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant RuleSummaryModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &r = m_rows[index.row()];
    const qint64 count = index.column() == FilesColumn ? qint64(r.files.size()) : r.hits;
    switch (role) {
    case Qt::DisplayRole:
        if (index.column() == RuleColumn)
            return r.rule;
        return QLocale().toString(count);
    case SortRole:
        if (index.column() == RuleColumn)
            return r.rule;
        return count;
    case Qt::TextAlignmentRole:
        if (index.column() != RuleColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default:
        return {};
    }
}

QVariant RuleSummaryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case RuleColumn:
        return tr("Rule");
    case FilesColumn:
        return tr("Files");
    case HitsColumn:
        return tr("Hits");
    default:
        return {};
    }
}

void RuleSummaryModel::appendHits(const QVector<Hitscope::HitRow> &rows)
{
    if (rows.isEmpty())
        return;
    const int oldCount = int(m_rows.size());
    int firstChanged = oldCount;
    int lastChanged = -1;
    // Rules new in this batch are gathered first so they arrive in one beginInsertRows, like the hits table.
    QVector<Row> added;
    QHash<QString, int> addedIndex;
    // A batch can hold a million hits: hashing each hit's rule name and path cost seconds on the GUI thread.
    // Hits share their rule's name (one string per rule in the scan's rule set), so the name's storage finds
    // the row; only a name not seen in this call is hashed. The pointers are valid while `rows` lives, and the
    // same storage and size mean the same name.
    QHash<const QChar *, int> slotOfName; // row, or ~(index into `added`)
    const QChar *lastName = nullptr;
    qsizetype lastNameSize = -1;
    int slot = 0;
    for (const HitRow &h : rows) {
        if (h.rule.constData() != lastName || h.rule.size() != lastNameSize) {
            lastName = h.rule.constData();
            lastNameSize = h.rule.size();
            const auto known = slotOfName.constFind(lastName);
            if (known != slotOfName.cend()) {
                slot = known.value();
            } else {
                const auto it = m_rowOfRule.constFind(h.rule);
                if (it != m_rowOfRule.cend()) {
                    slot = it.value();
                } else {
                    const auto a = addedIndex.constFind(h.rule);
                    if (a != addedIndex.cend()) {
                        slot = ~a.value();
                    } else {
                        addedIndex.insert(h.rule, int(added.size()));
                        slot = ~int(added.size());
                        added.push_back(Row {h.rule, {}, 0, {}});
                    }
                }
                slotOfName.insert(lastName, slot);
            }
            if (slot >= 0) {
                firstChanged = std::min(firstChanged, slot);
                lastChanged = std::max(lastChanged, slot);
            }
        }
        Row &row = slot >= 0 ? m_rows[slot] : added[~slot];
        // A file's hits arrive together: insert its path once per run of hits, not once per hit.
        if (h.path.constData() != row.lastPath.constData() && h.path != row.lastPath) {
            row.files.insert(h.path);
            row.lastPath = h.path;
        }
        ++row.hits;
    }
    // One range for the changed rows: a batch touches few rules, and views repaint only what is visible.
    if (lastChanged >= 0)
        Q_EMIT dataChanged(index(firstChanged, FilesColumn), index(lastChanged, HitsColumn));
    if (!added.isEmpty()) {
        beginInsertRows({}, oldCount, oldCount + int(added.size()) - 1);
        for (Row &r : added) {
            m_rowOfRule.insert(r.rule, int(m_rows.size()));
            m_rows.push_back(std::move(r));
        }
        endInsertRows();
    }
}

void RuleSummaryModel::clear()
{
    beginResetModel();
    m_rows.clear();
    m_rowOfRule.clear();
    endResetModel();
}

} // namespace Hitscope
