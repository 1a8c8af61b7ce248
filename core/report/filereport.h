// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>

#include <QByteArray>
#include <QCoreApplication>
#include <QDateTime>
#include <QIODevice>
#include <QString>
#include <QStringList>
#include <QVector>

#include "report/fileverdict.h"
#include "report/hitrow.h"

namespace Hitscope {

/**
 * The Files view's export: the verdicts of a scan, with each file's hits, as JSON (one document), CSV (one row
 * per file, RFC 4180) or a self-contained HTML report (inline style, no script, no outside resource: it can be
 * mailed or attached to a ticket and opens the same anywhere). QtCore only.
 */
class FileReport
{
    Q_DECLARE_TR_FUNCTIONS(FileReport)

public:
    enum class Format { Json, Csv, Html };

    /// What the report says about the scan it comes from.
    struct Scan
    {
        QStringList ruleFiles;
        QStringList targets;
        QString engine;
        QDateTime finished;
        qint64 filesScanned = 0;
        qint64 bytesScanned = 0;
        /// False when the scan was stopped or failed: the report lists the files matched until then.
        bool complete = true;
    };

    /// Row `row` of the scan's hit table (FileVerdict::firstHit counts there).
    using HitLookup = std::function<const HitRow &(int row)>;
    /// Called after each file written with the number written so far; false stops the export.
    using Step = std::function<bool(qsizetype filesWritten)>;

    /// A lookup into the rows as HitsTableModel::batches() gives them: a snapshot that any thread may read while
    /// the model goes on growing.
    static HitLookup lookupIn(const QVector<QVector<HitRow>> &batches);

    /// The HTML report lists at most this many hits per file; the JSON lists them all.
    static constexpr int kHtmlHitsPerFile = 1000;

    /// .json → JSON, .csv → CSV, .html/.htm → HTML; false for any other suffix.
    static bool formatForPath(const QString &path, Format *format);

    /// Each is written as it is made, a hit at a time: memory does not grow with the number of hits.
    static void writeJson(QIODevice &out, const QVector<FileVerdict> &files, const HitLookup &hit, const Scan &scan,
                          const Step &step = {});
    /// Header path,score,rules,tags,hits,size; rules and tags joined with ';'.
    static void writeCsv(QIODevice &out, const QVector<FileVerdict> &files, const Step &step = {});
    static void writeHtml(QIODevice &out, const QVector<FileVerdict> &files, const HitLookup &hit, const Scan &scan,
                          const Step &step = {});

    /// Writes `files` (in the order given) to `path` in the format its suffix names; an earlier file of that name
    /// stays intact on failure. On failure returns false and sets `error` to a sentence naming the path. Any
    /// thread: `step` (may be empty) follows the files written and stops the export when it returns false (an
    /// error that says so).
    static bool write(const QString &path, const QVector<FileVerdict> &files, const HitLookup &hit, const Scan &scan,
                      QString *error, const Step &step = {});
};

} // namespace Hitscope
