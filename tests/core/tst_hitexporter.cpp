// SPDX-License-Identifier: GPL-3.0-or-later
// Hit and telemetry export: JSON lines read back to the same hits, RFC 4180 quoting, and write errors that
// name the path.
#include <algorithm>
#include <atomic>
#include <set>
#include <tuple>

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "report/hitexporter.h"
#include "report/hitstablemodel.h"

using namespace Hitscope;

namespace {

using HitKey = std::tuple<QString, QString, QString, qint64, qint64>; // file, rule, string, offset, length

QVector<HitRow> sampleRows()
{
    QVector<HitRow> rows;
    const QByteArray paths[] = { "/data/plain.bin", "/data/with, comma \"and quote\".txt", "/data/ünï\ncode.txt" };
    for (int i = 0; i < 30; ++i) {
        HitRow r;
        r.path = paths[i % 3];
        r.rule = QStringLiteral("rule_%1").arg(i % 4);
        r.string = QStringLiteral("$s%1").arg(i % 5);
        r.offset = qint64(i) * 1000003LL * 4096; // past 2^32: offsets must stay exact
        r.length = 1 + i % 9;
        rows.push_back(r);
    }
    return rows;
}

std::set<HitKey> keysOf(const QVector<HitRow> &rows)
{
    std::set<HitKey> keys;
    for (const HitRow &r : rows)
        keys.emplace(QString::fromUtf8(r.path), r.rule, r.string, r.offset, r.length);
    return keys;
}

// A minimal RFC 4180 reader, so the test checks the format rather than our own writer's idea of it.
QList<QByteArrayList> parseCsv(const QByteArray &csv)
{
    QList<QByteArrayList> records;
    QByteArrayList record;
    QByteArray field;
    bool quoted = false;
    for (qsizetype i = 0; i < csv.size(); ++i) {
        const char c = csv[i];
        if (quoted) {
            if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            record.push_back(field);
            field.clear();
        } else if (c == '\r' && i + 1 < csv.size() && csv[i + 1] == '\n') {
            record.push_back(field);
            field.clear();
            records.push_back(record);
            record.clear();
            ++i;
        } else {
            field += c;
        }
    }
    return records;
}

} // namespace

class TestHitExporter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void jsonLinesRoundTrip()
    {
        const QVector<HitRow> rows = sampleRows();
        const QByteArray out = HitExporter::hitsToJsonLines(rows);
        QVector<HitRow> back;
        const QList<QByteArray> lines = out.split('\n');
        QCOMPARE(lines.size(), rows.size() + 1); // a newline ends every record
        QVERIFY(lines.last().isEmpty());
        for (qsizetype i = 0; i + 1 < lines.size(); ++i) {
            QJsonParseError error;
            const QJsonDocument doc = QJsonDocument::fromJson(lines[i], &error);
            QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
            const QJsonObject o = doc.object();
            QCOMPARE(o.size(), 6);
            QCOMPARE(o.value(QLatin1String("type")).toString(), QStringLiteral("hit"));
            HitRow r;
            r.path = o.value(QLatin1String("file")).toString().toUtf8();
            r.rule = o.value(QLatin1String("rule")).toString();
            r.string = o.value(QLatin1String("string")).toString();
            r.offset = o.value(QLatin1String("offset")).toInteger(-1);
            r.length = o.value(QLatin1String("length")).toInteger(-1);
            back.push_back(r);
        }
        QCOMPARE(keysOf(back), keysOf(rows));
        // Field order as the CLI writes it.
        QVERIFY(lines.first().startsWith("{\"type\":\"hit\",\"file\":"));
    }

    void csvQuoting()
    {
        HitRow r;
        r.path = "/data/with, comma \"and quote\".txt";
        r.rule = QStringLiteral("plain");
        r.string = QStringLiteral("$a");
        r.offset = 42;
        r.length = 7;
        const QByteArray csv = HitExporter::hitsToCsv({ r });
        QCOMPARE(csv,
                 QByteArrayLiteral("file,rule,string,offset,length\r\n"
                                   "\"/data/with, comma \"\"and quote\"\".txt\",plain,$a,42,7\r\n"));
        QCOMPARE(HitExporter::csvField("no quoting"), QByteArrayLiteral("no quoting"));
        QCOMPARE(HitExporter::csvField("line\nbreak"), QByteArrayLiteral("\"line\nbreak\""));
    }

    void csvRoundTrip()
    {
        const QVector<HitRow> rows = sampleRows();
        const QList<QByteArrayList> records = parseCsv(HitExporter::hitsToCsv(rows));
        QCOMPARE(records.size(), rows.size() + 1);
        QCOMPARE(records.first(), (QByteArrayList { "file", "rule", "string", "offset", "length" }));
        QVector<HitRow> back;
        for (qsizetype i = 1; i < records.size(); ++i) {
            const QByteArrayList &f = records[i];
            QCOMPARE(f.size(), 5);
            HitRow r;
            r.path = f[0];
            r.rule = QString::fromUtf8(f[1]);
            r.string = QString::fromUtf8(f[2]);
            r.offset = f[3].toLongLong();
            r.length = f[4].toLongLong();
            back.push_back(r);
        }
        QCOMPARE(keysOf(back), keysOf(rows));
    }

    void telemetry()
    {
        QVector<BatchTelemetry> batches(3);
        for (int i = 0; i < 3; ++i) {
            batches[i].index = i;
            batches[i].bytes = 1000 * (i + 1);
            batches[i].wallMs = 1.5 * (i + 1);
            batches[i].engine = QStringLiteral("gpu, \"vulkan\"");
        }
        const QList<QByteArray> lines = HitExporter::telemetryToJsonLines(batches).split('\n');
        QCOMPARE(lines.size(), 4);
        for (int i = 0; i < 3; ++i)
            QCOMPARE(QJsonDocument::fromJson(lines[i]).object(), batches[i].toJson());

        const QList<QByteArrayList> records = parseCsv(HitExporter::telemetryToCsv(batches));
        QCOMPARE(records.size(), 4);
        const QStringList keys = batches[0].toJson().keys();
        QCOMPARE(records[0].size(), keys.size());
        for (int i = 0; i < 3; ++i) {
            const QJsonObject o = batches[i].toJson();
            for (int k = 0; k < keys.size(); ++k) {
                QCOMPARE(QString::fromUtf8(records[0][k]), keys[k]);
                const QJsonValue v = o.value(keys[k]);
                const QByteArray cell = records[i + 1][k];
                if (v.isString())
                    QCOMPARE(QString::fromUtf8(cell), v.toString());
                else if (v.isBool())
                    QCOMPARE(cell, v.toBool() ? QByteArrayLiteral("true") : QByteArrayLiteral("false"));
                else
                    QCOMPARE(cell.toDouble(), v.toDouble());
            }
        }
    }

    void writeBySuffix()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        HitsTableModel model;
        const QVector<HitRow> rows = sampleRows();
        model.appendHits(rows);
        // rowsOf() includes rows the model has not handed to views yet.
        QCOMPARE(HitExporter::rowsOf(model).size(), rows.size());

        QString error;
        const QString csv = dir.filePath(QStringLiteral("hits.CSV"));
        QVERIFY2(HitExporter::writeHits(csv, HitExporter::rowsOf(model), &error), qPrintable(error));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().startsWith("file,rule,string,offset,length\r\n"));

        const QString jsonl = dir.filePath(QStringLiteral("hits.jsonl"));
        QVERIFY(HitExporter::writeHits(jsonl, rows, &error));
        QFile j(jsonl);
        QVERIFY(j.open(QIODevice::ReadOnly));
        QCOMPARE(j.readAll(), HitExporter::hitsToJsonLines(rows));

        const QString txt = dir.filePath(QStringLiteral("hits.txt"));
        QVERIFY(!HitExporter::writeHits(txt, rows, &error));
        QVERIFY2(error.contains(QStringLiteral("hits.txt")), qPrintable(error));

        const QString missing = dir.filePath(QStringLiteral("no/such/dir/t.csv"));
        QVERIFY(!HitExporter::writeTelemetry(missing, {}, &error));
        QVERIFY2(error.contains(QStringLiteral("no/such/dir/t.csv")), qPrintable(error));
    }

    void largeExportInChunks()
    {
        // More rows than one chunk, over several of the model's batches: the file is what one piece of text for
        // all rows would be, and progress climbs to the total.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        HitsTableModel model;
        QVector<HitRow> all;
        // Batches of more rows than a chunk (65,536) and of fewer.
        for (int b = 0; b < 3; ++b) {
            QVector<HitRow> rows;
            for (int i = 0; i < (b == 1 ? 20000 : 70000); ++i) {
                HitRow r = sampleRows()[i % 30];
                r.offset += qint64(b) * 100000 + i;
                rows.push_back(r);
            }
            model.appendHits(rows);
            all += rows;
        }
        QCOMPARE(model.totalHits(), int(all.size()));
        for (const char *name : { "big.jsonl", "big.csv" }) {
            const QString path = dir.filePath(QLatin1String(name));
            QList<qint64> progress;
            QString error;
            QVERIFY2(HitExporter::writeHits(path, model.batches(), &error,
                                            [&](qint64 n) { progress.push_back(n); }, nullptr),
                     qPrintable(error));
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray want = path.endsWith(QLatin1String(".csv")) ? HitExporter::hitsToCsv(all)
                                                                         : HitExporter::hitsToJsonLines(all);
            QVERIFY(f.readAll() == want);
            QVERIFY(progress.size() > 1);
            QVERIFY(std::is_sorted(progress.begin(), progress.end()));
            QCOMPARE(progress.back(), qint64(all.size()));
        }
    }

    void cancelledExportLeavesTheEarlierFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("hits.jsonl"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("an earlier export\n");
        }
        QVector<QVector<HitRow>> batches;
        for (int b = 0; b < 4; ++b)
            batches.push_back(QVector<HitRow>(70000, sampleRows().front()));
        // Cancelled after the first chunk, as the GUI's Cancel button does from another thread.
        std::atomic_bool cancel { false };
        qint64 seen = 0;
        QString error;
        QVERIFY(!HitExporter::writeHits(path, batches, &error, [&](qint64 n) { seen = n; cancel = true; }, &cancel));
        QVERIFY(seen > 0);
        QVERIFY(seen < 280000);
        QVERIFY2(error.contains(QStringLiteral("cancelled")) && error.contains(QStringLiteral("hits.jsonl")),
                 qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArrayLiteral("an earlier export\n"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList { QStringLiteral("hits.jsonl") });
    }
};

QTEST_GUILESS_MAIN(TestHitExporter)
#include "tst_hitexporter.moc"
