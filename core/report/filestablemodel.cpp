// SPDX-License-Identifier: GPL-3.0-or-later
#include "filestablemodel.h"

#include <QLocale>

namespace Hitscope {

namespace {

QString displayPath(const QByteArray &path)
{
    return QString::fromUtf8(path);
}

} // namespace

FilesTableModel::FilesTableModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

int FilesTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int FilesTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant FilesTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const FileVerdict &v = m_rows[index.row()];
    const int column = index.column();
    if (role == FilterRole)
        return QString(displayPath(v.path) + QLatin1Char('\n') + v.rules.join(QLatin1Char(' ')) + QLatin1Char('\n')
                       + v.tags.join(QLatin1Char(' ')));
    if (role == Qt::TextAlignmentRole)
        return column == ScoreColumn || column == HitsColumn || column == SizeColumn
            ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter))
            : QVariant();
    if (role == Qt::ToolTipRole && column == RulesColumn)
        return v.rules.join(QLatin1Char('\n'));
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    const bool sort = role == SortRole;
    switch (column) {
    case ScoreColumn:
        return v.score;
    case FileColumn:
        return displayPath(v.path);
    case RulesColumn:
        return sort ? QVariant(qint64(v.rules.size())) : QVariant(v.rules.join(QLatin1String(", ")));
    case TagsColumn:
        return v.tags.join(QLatin1String(", "));
    case HitsColumn:
        return sort ? QVariant(qint64(v.hitCount)) : QVariant(QLocale().toString(v.hitCount));
    case SizeColumn:
        return sort ? QVariant(qint64(v.size)) : QVariant(QLocale().formattedDataSize(v.size));
    default:
        return {};
    }
}

QVariant FilesTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ScoreColumn:
        return tr("Score");
    case FileColumn:
        return tr("File");
    case RulesColumn:
        return tr("Rules");
    case TagsColumn:
        return tr("Tags");
    case HitsColumn:
        return tr("Hits");
    case SizeColumn:
        return tr("Size");
    default:
        return {};
    }
}

void FilesTableModel::appendFiles(const QVector<Hitscope::FileVerdict> &files)
{
    if (files.isEmpty())
        return;
    const int first = int(m_rows.size());
    beginInsertRows({}, first, first + int(files.size()) - 1);
    m_rows += files;
    endInsertRows();
}

void FilesTableModel::clear()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

} // namespace Hitscope
