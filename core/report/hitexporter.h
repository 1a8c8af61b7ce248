// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <functional>

#include <QByteArray>
#include <QCoreApplication>
#include <QString>
#include <QVector>

#include "engine/batchtelemetry.h"
#include "report/hitrow.h"

namespace Hitscope {

class HitsTableModel;

/**
 * Writes the hits and per-batch telemetry of a scan to files: JSON lines (the records of the CLI's --json and
 * --telemetry) or CSV (RFC 4180, a header row). QtCore only, so the CLI or tests can use it without widgets.
 */
class HitExporter
{
    Q_DECLARE_TR_FUNCTIONS(HitExporter)

public:
    enum class Format { JsonLines, Csv };

    /// The format a file name asks for: .json/.jsonl → JSON lines, .csv → CSV; false for any other suffix.
    static bool formatForPath(const QString &path, Format *format);

    /// One {"type":"hit",...} object per line, in the CLI's field order.
    static QByteArray hitsToJsonLines(const QVector<HitRow> &rows);
    /// Header file,rule,string,offset,length, then one row per hit.
    static QByteArray hitsToCsv(const QVector<HitRow> &rows);
    /// BatchTelemetry::toJson(), one object per line.
    static QByteArray telemetryToJsonLines(const QVector<BatchTelemetry> &batches);
    /// The keys of BatchTelemetry::toJson() as the header (in that object's key order), one row per batch.
    static QByteArray telemetryToCsv(const QVector<BatchTelemetry> &batches);

    /// Every hit of the model, including rows not yet handed to views.
    static QVector<HitRow> rowsOf(const HitsTableModel &model);

    /// Writes to `path` in the format its suffix names. On failure returns false and sets `error` to a
    /// sentence naming the path.
    static bool writeHits(const QString &path, const QVector<HitRow> &rows, QString *error);
    /// The same for the hits as a model holds them (HitsTableModel::batches()), a chunk of rows at a time:
    /// memory stays bounded for millions of hits, `progress` (may be empty) gets the rows written after each
    /// chunk, and `cancelled` (may be null) stops the export between chunks, leaving any earlier file of that
    /// name as it was (false, with `error` saying so). QtCore only: runs on any thread.
    static bool writeHits(const QString &path, const QVector<QVector<HitRow>> &batches, QString *error,
                          const std::function<void(qint64)> &progress, const std::atomic_bool *cancelled);
    static bool writeTelemetry(const QString &path, const QVector<BatchTelemetry> &batches, QString *error);

    /// One CSV field, quoted when it holds a comma, quote, CR or LF (RFC 4180 §2.6–2.7).
    static QByteArray csvField(const QByteArray &field);
};

} // namespace Hitscope
