// SPDX-License-Identifier: GPL-3.0-or-later
#include "hitexporter.h"

#include <cmath>
#include <string>

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include "report/hitstablemodel.h"
#include "report/recordwriter.h"

namespace Hitscope {

namespace {

QByteArray jsonValueToCsv(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Bool:
        return v.toBool() ? QByteArrayLiteral("true") : QByteArrayLiteral("false");
    case QJsonValue::Double: {
        // Integral values print without an exponent, as QJsonDocument writes them in the JSON lines.
        const double d = v.toDouble();
        if (std::isfinite(d) && std::abs(d) < 9007199254740992.0 && d == std::trunc(d))
            return QByteArray::number(qint64(d));
        return QByteArray::number(d, 'g', 17);
    }
    case QJsonValue::String:
        return HitExporter::csvField(v.toString().toUtf8());
    default:
        return {};
    }
}

// toJson() builds a QJsonObject, whose keys iterate sorted; the CLI writes them in that same order.
QStringList telemetryKeys()
{
    return BatchTelemetry().toJson().keys();
}

bool writeFile(const QString &path, const QByteArray &data, QString *error)
{
    // QSaveFile: a failed export leaves an earlier file of the same name intact.
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error)
            *error = HitExporter::tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        return false;
    }
    if (file.write(data) != data.size() || !file.commit()) {
        if (error)
            *error = HitExporter::tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        return false;
    }
    return true;
}

// A hit as the CLI's --json writes it (the one writer of the record).
void appendJsonLine(std::string &b, const HitRow &r)
{
    RecordWriter::hit(b, r.path, r.rule, r.string, r.offset, r.length);
}

// RFC 4180 lines end in CRLF.
const char kCsvHeader[] = "file,rule,string,offset,length\r\n";

void appendCsvLine(QByteArray &out, const HitRow &r)
{
    out += HitExporter::csvField(r.path) + ',' + HitExporter::csvField(r.rule.toUtf8()) + ','
        + HitExporter::csvField(r.string.toUtf8()) + ',' + QByteArray::number(qint64(r.offset)) + ','
        + QByteArray::number(qint64(r.length)) + "\r\n";
}

QString unknownSuffix(const QString &path)
{
    return HitExporter::tr("Cannot write %1: choose a file name ending in .json, .jsonl or .csv")
        .arg(QDir::toNativeSeparators(path));
}

} // namespace

bool HitExporter::formatForPath(const QString &path, Format *format)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("json") || suffix == QLatin1String("jsonl")) {
        *format = Format::JsonLines;
        return true;
    }
    if (suffix == QLatin1String("csv")) {
        *format = Format::Csv;
        return true;
    }
    return false;
}

QByteArray HitExporter::hitsToJsonLines(const QVector<HitRow> &rows)
{
    std::string b;
    for (const HitRow &r : rows)
        appendJsonLine(b, r);
    return QByteArray(b.data(), qsizetype(b.size()));
}

QByteArray HitExporter::csvField(const QByteArray &field)
{
    if (!field.contains(',') && !field.contains('"') && !field.contains('\n') && !field.contains('\r'))
        return field;
    QByteArray quoted = field;
    quoted.replace('"', QByteArrayLiteral("\"\""));
    return '"' + quoted + '"';
}

QByteArray HitExporter::hitsToCsv(const QVector<HitRow> &rows)
{
    QByteArray out(kCsvHeader);
    for (const HitRow &r : rows)
        appendCsvLine(out, r);
    return out;
}

QByteArray HitExporter::telemetryToJsonLines(const QVector<BatchTelemetry> &batches)
{
    QByteArray out;
    for (const BatchTelemetry &t : batches)
        out += QJsonDocument(t.toJson()).toJson(QJsonDocument::Compact) + '\n';
    return out;
}

QByteArray HitExporter::telemetryToCsv(const QVector<BatchTelemetry> &batches)
{
    const QStringList keys = telemetryKeys();
    QByteArray out = keys.join(QLatin1Char(',')).toUtf8() + "\r\n";
    for (const BatchTelemetry &t : batches) {
        const QJsonObject o = t.toJson();
        QByteArrayList fields;
        fields.reserve(keys.size());
        for (const QString &key : keys)
            fields.push_back(jsonValueToCsv(o.value(key)));
        out += fields.join(',') + "\r\n";
    }
    return out;
}

QVector<HitRow> HitExporter::rowsOf(const HitsTableModel &model)
{
    QVector<HitRow> rows;
    rows.reserve(model.totalHits());
    for (int i = 0; i < model.totalHits(); ++i)
        rows.push_back(model.hit(i));
    return rows;
}

bool HitExporter::writeHits(const QString &path, const QVector<HitRow> &rows, QString *error)
{
    return writeHits(path, { rows }, error, {}, nullptr);
}

bool HitExporter::writeHits(const QString &path, const QVector<QVector<HitRow>> &batches, QString *error,
                             const std::function<void(qint64)> &progress, const std::atomic_bool *cancelled)
{
    Format format;
    if (!formatForPath(path, &format)) {
        if (error)
            *error = unknownSuffix(path);
        return false;
    }
    QSaveFile file(path);
    auto fail = [&](const QString &why) {
        file.cancelWriting();
        if (error)
            *error = why;
        return false;
    };
    if (!file.open(QIODevice::WriteOnly))
        return fail(tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
    constexpr qsizetype kChunkRows = 1 << 16;
    qint64 written = 0;
    std::string json;
    QByteArray csv;
    if (format == Format::Csv)
        csv = kCsvHeader;
    auto flush = [&] {
        const qint64 size = format == Format::Csv ? csv.size() : qint64(json.size());
        const bool ok = file.write(format == Format::Csv ? csv.constData() : json.data(), size) == size;
        csv.clear();
        json.clear();
        return ok;
    };
    for (const QVector<HitRow> &batch : batches) {
        for (qsizetype begin = 0; begin < batch.size(); begin += kChunkRows) {
            if (cancelled && cancelled->load())
                return fail(tr("Export to %1 cancelled; nothing was written.").arg(QDir::toNativeSeparators(path)));
            const qsizetype end = std::min(batch.size(), begin + kChunkRows);
            for (qsizetype i = begin; i < end; ++i) {
                if (format == Format::Csv)
                    appendCsvLine(csv, batch[i]);
                else
                    appendJsonLine(json, batch[i]);
            }
            if (!flush())
                return fail(tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
            written += end - begin;
            if (progress)
                progress(written);
        }
    }
    if (!flush())
        return fail(tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
    if (cancelled && cancelled->load())
        return fail(tr("Export to %1 cancelled; nothing was written.").arg(QDir::toNativeSeparators(path)));
    if (!file.commit())
        return fail(tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString()));
    return true;
}

bool HitExporter::writeTelemetry(const QString &path, const QVector<BatchTelemetry> &batches, QString *error)
{
    Format format;
    if (!formatForPath(path, &format)) {
        if (error)
            *error = unknownSuffix(path);
        return false;
    }
    return writeFile(path, format == Format::Csv ? telemetryToCsv(batches) : telemetryToJsonLines(batches), error);
}

} // namespace Hitscope
