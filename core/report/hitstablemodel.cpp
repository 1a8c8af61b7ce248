// SPDX-License-Identifier: GPL-3.0-or-later
#include "hitstablemodel.h"

#include <algorithm>
#include <utility>

#include <QFile>
#include <QThreadPool>

namespace Hitscope {

namespace {

// Match data as yara prints it: printable ASCII as is, other bytes as \xNN.
QString printable(const QByteArray &data)
{
    static const char hex[] = "0123456789ABCDEF";
    QString out;
    out.reserve(data.size());
    for (const char ch : data) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 32 && c <= 126) {
            out += QLatin1Char(char(c));
        } else {
            out += QLatin1String("\\x");
            out += QLatin1Char(hex[c >> 4]);
            out += QLatin1Char(hex[c & 15]);
        }
    }
    return out;
}

} // namespace

HitsTableModel::HitsTableModel(QObject *parent)
    : QAbstractTableModel(parent)
{
    qRegisterMetaType<HitRow>();
    qRegisterMetaType<QVector<HitRow>>();
}

int HitsTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_visible;
}

int HitsTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant HitsTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const HitRow &h = hit(index.row());
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case FileColumn:
            return QFile::decodeName(h.path);
        case RuleColumn:
            return h.rule;
        case StringColumn:
            return h.string;
        case OffsetColumn:
            return QStringLiteral("0x%1").arg(h.offset, 0, 16);
        case LengthColumn:
            return QString::number(h.length);
        case PreviewColumn:
            return printable(h.preview);
        }
        break;
    case Qt::ToolTipRole:
        switch (column) {
        case FileColumn:
            return QFile::decodeName(h.path);
        case OffsetColumn:
            return tr("Offset %1 (0x%2)").arg(h.offset).arg(h.offset, 0, 16);
        case PreviewColumn:
            return h.length > h.preview.size()
                ? tr("%1 (first %2 of %3 bytes)").arg(printable(h.preview)).arg(h.preview.size()).arg(h.length)
                : printable(h.preview);
        }
        break;
    case Qt::TextAlignmentRole:
        if (column == OffsetColumn || column == LengthColumn)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        break;
    case SortRole:
    case RawRole:
        switch (column) {
        case FileColumn:
            return role == SortRole ? QVariant(QFile::decodeName(h.path)) : QVariant(h.path);
        case RuleColumn:
            return h.rule;
        case StringColumn:
            return h.string;
        case OffsetColumn:
            return qint64(h.offset);
        case LengthColumn:
            return qint64(h.length);
        case PreviewColumn:
            return h.preview;
        }
        break;
    }
    return {};
}

QVariant HitsTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case FileColumn:
        return tr("File");
    case RuleColumn:
        return tr("Rule");
    case StringColumn:
        return tr("String");
    case OffsetColumn:
        return tr("Offset");
    case LengthColumn:
        return tr("Length");
    case PreviewColumn:
        return tr("Preview");
    }
    return {};
}

const HitRow &HitsTableModel::hit(int row) const
{
    Q_ASSERT(row >= 0 && row < m_total);
    int b = m_lastBatch;
    if (b >= m_batchStart.size() || row < m_batchStart[b] || row >= m_batchStart[b] + m_batches[b].size()) {
        b = int(std::upper_bound(m_batchStart.cbegin(), m_batchStart.cend(), row) - m_batchStart.cbegin()) - 1;
        m_lastBatch = b;
    }
    return m_batches[b][row - m_batchStart[b]];
}

bool HitsTableModel::canFetchMore(const QModelIndex &parent) const
{
    return !parent.isValid() && m_visible < m_total;
}

void HitsTableModel::fetchMore(const QModelIndex &parent)
{
    // Not from a rowsInserted() handler (QAbstractItemModelTester does that): the insert would nest in ours.
    if (parent.isValid() || m_inserting)
        return;
    m_limit = std::max(m_limit, m_visible + FetchChunk);
    reveal(std::min(m_total, m_limit));
}

void HitsTableModel::appendHits(const QVector<HitRow> &rows)
{
    if (rows.isEmpty())
        return;
    // A shared copy, not a row-by-row one: one batch of a regex scan can bring a million hits, and copying
    // them (then freeing the sender's vector) blocked the GUI thread for seconds.
    m_batchStart.push_back(m_total);
    m_batches.push_back(rows);
    m_total += int(rows.size());
    // Rows past what views asked for wait for fetchMore(): a million hits never reach a view at once.
    reveal(std::min(m_total, m_limit));
    Q_EMIT totalChanged(m_total);
}

void HitsTableModel::reveal(int upTo)
{
    if (upTo <= m_visible)
        return;
    m_inserting = true;
    beginInsertRows({}, m_visible, upTo - 1);
    m_visible = upTo;
    endInsertRows();
    m_inserting = false;
}

void HitsTableModel::clear()
{
    beginResetModel();
    // Freeing millions of rows (a string and a preview each) takes a second: not on the GUI thread. The rows
    // hold only implicitly shared Qt values, whose reference counts are atomic.
    if (m_total > FetchChunk)
        QThreadPool::globalInstance()->start([old = std::exchange(m_batches, {})]() mutable { old.clear(); });
    else
        m_batches.clear();
    m_batchStart.clear();
    m_lastBatch = 0;
    m_total = 0;
    m_visible = 0;
    m_limit = FetchChunk;
    endResetModel();
    Q_EMIT totalChanged(0);
}

} // namespace Hitscope
