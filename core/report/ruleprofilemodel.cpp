// SPDX-License-Identifier: GPL-3.0-or-later
#include "ruleprofilemodel.h"

#include <QLocale>

namespace Hitscope {

RuleProfileModel::RuleProfileModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

int RuleProfileModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_profile.rows.size());
}

int RuleProfileModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant RuleProfileModel::display(const RuleProfileRow &row, int rank, int column) const
{
    const QLocale locale;
    auto ms = [&](double v) { return locale.toString(v, 'f', 2); };
    switch (column) {
    case RankColumn:
        return locale.toString(rank);
    case RuleColumn:
        return row.name;
    case LocationColumn:
        return QStringLiteral("%1:%2").arg(row.file).arg(row.line);
    case EngineColumn:
        return row.engineMs ? ms(*row.engineMs) : QStringLiteral("-");
    case ConditionColumn:
        return ms(row.conditionMs);
    case ResolveColumn:
        return ms(row.resolveMs);
    case TotalColumn:
        return ms(row.totalMs());
    case HitsColumn:
        return locale.toString(qint64(row.hits));
    case FilesColumn:
        return locale.toString(qint64(row.files));
    case ReasonsColumn:
        return row.reasons.join(QLatin1String("; "));
    default:
        return {};
    }
}

QVariant RuleProfileModel::sortValue(const RuleProfileRow &row, int rank, int column) const
{
    switch (column) {
    case RankColumn:
        return rank;
    case EngineColumn:
        return row.engineMs.value_or(-1.0);
    case ConditionColumn:
        return row.conditionMs;
    case ResolveColumn:
        return row.resolveMs;
    case TotalColumn:
        return row.totalMs();
    case HitsColumn:
        return qint64(row.hits);
    case FilesColumn:
        return qint64(row.files);
    case LocationColumn:
        // By file, then by line as a number.
        return QStringLiteral("%1:%2").arg(row.file).arg(row.line, 10, 10, QLatin1Char('0'));
    default:
        return display(row, rank, column);
    }
}

QVariant RuleProfileModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const RuleProfileRow &row = m_profile.rows[size_t(index.row())];
    const int rank = index.row() + 1;
    switch (role) {
    case Qt::DisplayRole:
        return display(row, rank, index.column());
    case SortRole:
        return sortValue(row, rank, index.column());
    case Qt::ToolTipRole:
        if (index.column() == ReasonsColumn && !row.reasons.isEmpty())
            return row.reasons.join(QLatin1Char('\n'));
        if (index.column() == EngineColumn && !row.engineMs)
            return tr("A GPU's kernels cannot be split per rule: scan on the CPU engine to measure this. The "
                      "total counts the host's part of the engine, %1 ms.")
                .arg(QLocale().toString(row.hostMs, 'f', 2));
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() != RuleColumn && index.column() != LocationColumn && index.column() != ReasonsColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default:
        return {};
    }
}

QVariant RuleProfileModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case RankColumn:
        return tr("Rank");
    case RuleColumn:
        return tr("Rule");
    case LocationColumn:
        return tr("File:line");
    case EngineColumn:
        return tr("Engine ms");
    case ConditionColumn:
        return tr("Condition ms");
    case ResolveColumn:
        return tr("Resolve ms");
    case TotalColumn:
        return tr("Total ms");
    case HitsColumn:
        return tr("Hits");
    case FilesColumn:
        return tr("Files");
    case ReasonsColumn:
        return tr("Reasons");
    default:
        return {};
    }
}

void RuleProfileModel::setProfile(const RuleProfile &profile)
{
    beginResetModel();
    m_profile = profile;
    endResetModel();
}

void RuleProfileModel::clear()
{
    setProfile({});
}

} // namespace Hitscope
