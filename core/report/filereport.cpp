// SPDX-License-Identifier: GPL-3.0-or-later
#include "filereport.h"

#include <algorithm>
#include <memory>
#include <vector>

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QSaveFile>

#include "report/hitexporter.h"

namespace Hitscope {

namespace {

QString pathText(const QByteArray &path)
{
    return QString::fromUtf8(path);
}

QJsonObject hitJson(const HitRow &h)
{
    return QJsonObject { { QStringLiteral("rule"), h.rule },
                         { QStringLiteral("string"), h.string },
                         { QStringLiteral("offset"), qint64(h.offset) },
                         { QStringLiteral("length"), qint64(h.length) },
                         { QStringLiteral("preview_hex"), QString::fromLatin1(h.preview.toHex()) } };
}

/// Every member of a file's object but its hits, which are written after them.
QJsonObject fileJson(const FileVerdict &v)
{
    return QJsonObject { { QStringLiteral("path"), pathText(v.path) },
                         { QStringLiteral("size"), qint64(v.size) },
                         { QStringLiteral("score"), v.score },
                         { QStringLiteral("rules"), QJsonArray::fromStringList(v.rules) },
                         { QStringLiteral("tags"), QJsonArray::fromStringList(v.tags) } };
}

/// `object` as compact JSON without its closing brace, for more members to follow.
QByteArray openObject(const QJsonObject &object)
{
    QByteArray text = QJsonDocument(object).toJson(QJsonDocument::Compact);
    text.chop(1);
    return text;
}

QString html(const QString &text)
{
    return text.toHtmlEscaped();
}

/// Printable ASCII as is, every other byte as a dot: what a hex viewer's text column shows.
QString previewText(const QByteArray &bytes)
{
    QString out;
    out.reserve(bytes.size());
    for (char c : bytes)
        out += (c >= 0x20 && c < 0x7f) ? QChar::fromLatin1(c) : QLatin1Char('.');
    return out;
}

const char kStyle[] = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; background: #fff; }
h1 { font-size: 1.4em; margin-bottom: .2em; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3em .6em; border-bottom: 1px solid #ddd; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.s75 { background: #f5c6c5; } td.s50 { background: #fbe3b6; }
code, td.path { font-family: ui-monospace, monospace; word-break: break-all; }
details { margin: .2em 0 .6em; } summary { cursor: pointer; color: #555; }
dl.scan { display: grid; grid-template-columns: max-content auto; gap: .1em 1em; color: #444; }
dl.scan dt { font-weight: 600; }
)";

QString scanHeader(const QVector<FileVerdict> &files, const FileReport::Scan &scan)
{
    const QLocale locale;
    QString out;
    out += QStringLiteral("<dl class=\"scan\">");
    const auto item = [&out](const QString &name, const QString &value) {
        out += QStringLiteral("<dt>%1</dt><dd>%2</dd>").arg(html(name), html(value));
    };
    item(scan.complete ? FileReport::tr("Finished") : FileReport::tr("Stopped"),
         scan.finished.isValid() ? locale.toString(scan.finished, QLocale::LongFormat) : FileReport::tr("running"));
    if (!scan.complete)
        item(FileReport::tr("Note"), FileReport::tr("The scan did not end: these are the files matched until then."));
    item(FileReport::tr("Rule files"), scan.ruleFiles.join(QLatin1String(", ")));
    item(FileReport::tr("Targets"), scan.targets.join(QLatin1String(", ")));
    item(FileReport::tr("Engine"), scan.engine);
    item(FileReport::tr("Scanned"), FileReport::tr("%1 files, %2")
                                         .arg(locale.toString(scan.filesScanned),
                                              locale.formattedDataSize(scan.bytesScanned)));
    item(FileReport::tr("Matched"), FileReport::tr("%1 files").arg(locale.toString(qint64(files.size()))));
    out += QStringLiteral("</dl>");
    return out;
}

QString hitsTable(const FileVerdict &v, const FileReport::HitLookup &hit)
{
    const int shown = std::min(v.hitCount, FileReport::kHtmlHitsPerFile);
    QString out = QStringLiteral("<details><summary>%1</summary><table><tr><th>%2</th><th>%3</th><th>%4</th>"
                                 "<th>%5</th><th>%6</th></tr>")
                      .arg(html(FileReport::tr("%n hit(s)", nullptr, v.hitCount)), html(FileReport::tr("Rule")),
                           html(FileReport::tr("String")), html(FileReport::tr("Offset")),
                           html(FileReport::tr("Length")), html(FileReport::tr("Preview")));
    for (int i = 0; i < shown; ++i) {
        const HitRow &h = hit(v.firstHit + i);
        out += QStringLiteral("<tr><td>%1</td><td>%2</td><td class=\"num\">0x%3</td><td class=\"num\">%4</td>"
                              "<td><code>%5</code></td></tr>")
                   .arg(html(h.rule), html(h.string), QString::number(h.offset, 16), QString::number(h.length),
                        html(previewText(h.preview)));
    }
    out += QStringLiteral("</table>");
    if (shown < v.hitCount)
        out += QStringLiteral("<p>%1</p>").arg(html(
            FileReport::tr("and %n more: the JSON export lists every hit.", nullptr, v.hitCount - shown)));
    return out + QStringLiteral("</details>");
}

} // namespace

bool FileReport::formatForPath(const QString &path, Format *format)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("json"))
        *format = Format::Json;
    else if (suffix == QLatin1String("csv"))
        *format = Format::Csv;
    else if (suffix == QLatin1String("html") || suffix == QLatin1String("htm"))
        *format = Format::Html;
    else
        return false;
    return true;
}

void FileReport::writeJson(QIODevice &out, const QVector<FileVerdict> &files, const HitLookup &hit, const Scan &scan,
                           const Step &step)
{
    const QJsonObject head {
        { QStringLiteral("generator"), QStringLiteral("Hitscope " HITSCOPE_VERSION) },
        { QStringLiteral("finished"), scan.finished.toString(Qt::ISODateWithMs) },
        { QStringLiteral("rule_files"), QJsonArray::fromStringList(scan.ruleFiles) },
        { QStringLiteral("targets"), QJsonArray::fromStringList(scan.targets) },
        { QStringLiteral("engine"), scan.engine },
        { QStringLiteral("files_scanned"), scan.filesScanned },
        { QStringLiteral("bytes_scanned"), scan.bytesScanned },
        { QStringLiteral("complete"), scan.complete },
    };
    // Written a hit at a time, never as one document: a file can have millions of hits.
    out.write(openObject(head) + ",\n\"files\": [");
    for (qsizetype f = 0; f < files.size(); ++f) {
        const FileVerdict &v = files[f];
        out.write(f ? ",\n  " : "\n  ");
        out.write(openObject(fileJson(v)) + ",\"hits\":[");
        for (int i = 0; i < v.hitCount; ++i) {
            if (i)
                out.write(",");
            out.write(QJsonDocument(hitJson(hit(v.firstHit + i))).toJson(QJsonDocument::Compact));
        }
        out.write("]}");
        if (step && !step(f + 1))
            return;
    }
    out.write("\n]}\n");
}

void FileReport::writeCsv(QIODevice &out, const QVector<FileVerdict> &files, const Step &step)
{
    out.write("path,score,rules,tags,hits,size\r\n");
    for (qsizetype f = 0; f < files.size(); ++f) {
        const FileVerdict &v = files[f];
        out.write(HitExporter::csvField(v.path) + ',' + QByteArray::number(v.score) + ','
            + HitExporter::csvField(v.rules.join(QLatin1Char(';')).toUtf8()) + ','
            + HitExporter::csvField(v.tags.join(QLatin1Char(';')).toUtf8()) + ',' + QByteArray::number(v.hitCount)
            + ',' + QByteArray::number(qint64(v.size)) + "\r\n");
        if (step && !step(f + 1))
            return;
    }
}

void FileReport::writeHtml(QIODevice &out, const QVector<FileVerdict> &files, const HitLookup &hit, const Scan &scan,
                           const Step &step)
{
    QString head = QStringLiteral("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%1</title><style>%2"
                                 "</style></head><body><h1>%1</h1>")
                      .arg(html(tr("Hitscope scan report")), QString::fromLatin1(kStyle));
    head += scanHeader(files, scan);
    head += QStringLiteral("<table><tr><th>%1</th><th>%2</th><th>%3</th><th>%4</th></tr>")
                .arg(html(tr("Score")), html(tr("File")), html(tr("Rules")), html(tr("Tags")));
    out.write(head.toUtf8());
    for (qsizetype f = 0; f < files.size(); ++f) {
        const FileVerdict &v = files[f];
        const QString scoreClass = v.score >= 75 ? QStringLiteral(" s75")
            : v.score >= 50                      ? QStringLiteral(" s50")
                                                 : QString();
        out.write(QStringLiteral("<tr><td class=\"num%1\">%2</td><td class=\"path\">%3%4</td><td>%5</td><td>%6</td>"
                              "</tr>")
                   .arg(scoreClass, QString::number(v.score), html(pathText(v.path)), hitsTable(v, hit),
                        html(v.rules.join(QLatin1String(", "))), html(v.tags.join(QLatin1String(", "))))
                      .toUtf8());
        if (step && !step(f + 1))
            return;
    }
    out.write("</table></body></html>\n");
}

FileReport::HitLookup FileReport::lookupIn(const QVector<QVector<HitRow>> &batches)
{
    // Each batch's first row, ascending: a row is found by a binary search over the batches.
    auto starts = std::make_shared<std::vector<qint64>>();
    qint64 row = 0;
    for (const QVector<HitRow> &b : batches) {
        starts->push_back(row);
        row += b.size();
    }
    return [batches, starts](int r) -> const HitRow & {
        const auto it = std::upper_bound(starts->begin(), starts->end(), qint64(r)) - 1;
        const auto b = qsizetype(it - starts->begin());
        return batches[b][qsizetype(r - *it)];
    };
}

bool FileReport::write(const QString &path, const QVector<FileVerdict> &files, const HitLookup &hit,
                       const Scan &scan, QString *error, const Step &step)
{
    Format format;
    if (!formatForPath(path, &format)) {
        if (error)
            *error = tr("Cannot write %1: name it .json, .csv or .html").arg(QDir::toNativeSeparators(path));
        return false;
    }
    QSaveFile file(path);
    bool stopped = false;
    const Step counted = [&](qsizetype written) { return !(stopped = step && !step(written)); };
    if (file.open(QIODevice::WriteOnly)) {
        if (format == Format::Json)
            writeJson(file, files, hit, scan, counted);
        else if (format == Format::Csv)
            writeCsv(file, files, counted);
        else
            writeHtml(file, files, hit, scan, counted);
    }
    if (stopped) {
        file.cancelWriting();
        if (error)
            *error = tr("Export to %1 cancelled: no file written.").arg(QDir::toNativeSeparators(path));
        return false;
    }
    // QSaveFile remembers a failed write: commit() then fails and leaves any earlier file intact.
    if (!file.isOpen() || !file.commit()) {
        if (error)
            *error = tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        return false;
    }
    return true;
}

} // namespace Hitscope
