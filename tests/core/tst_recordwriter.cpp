// SPDX-License-Identifier: GPL-3.0-or-later
// The one writer of the CLI's and the exporter's records: exact bytes, as scripts parse them and as yara prints
// its -s lines.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "report/recordwriter.h"

using namespace Hitscope;

class TestRecordWriter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    /// Field order fixed; a byte that is not UTF-8 becomes U+FFFD and a quote is escaped: always valid JSON.
    void hitLineHasFixedFieldsAndEscapesPaths()
    {
        std::string out;
        RecordWriter::hit(out, QByteArray("dir/caf\xe9\".bin"), QStringLiteral("r1"), QStringLiteral("$a"), 16, 4);
        QCOMPARE(QByteArray::fromStdString(out),
                 QByteArray("{\"type\":\"hit\",\"file\":\"dir/caf\xEF\xBF\xBD\\\".bin\",\"rule\":\"r1\",\"string\":\"$a\","
                            "\"offset\":16,\"length\":4}\n"));
        const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(out)).object();
        QCOMPARE(o.value(QLatin1String("offset")).toInt(), 16);
    }

    void matchLineListsTagsAndStrings()
    {
        std::string out;
        RecordWriter::match(out, "f", QStringLiteral("r"), QStringLiteral("default"),
                            { QStringLiteral("t1"), QStringLiteral("t2") },
                            { { QStringLiteral("$a"), 0, 2, QByteArray("MZ") }, { QStringLiteral("$b"), 9, 1, QByteArray("\n") } });
        const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(out)).object();
        QCOMPARE(o.value(QLatin1String("type")).toString(), QStringLiteral("match"));
        QCOMPARE(o.value(QLatin1String("tags")).toVariant().toStringList(), QStringList({ QStringLiteral("t1"), QStringLiteral("t2") }));
        QCOMPARE(o.value(QLatin1String("strings")).toVariant().toList().size(), 2);
        QVERIFY(out.find("\"data\":\"\\n\"") != std::string::npos);
        QVERIFY(out.back() == '\n');
    }

    void otherRecords()
    {
        std::string out;
        RecordWriter::console(out, "f", "hello");
        RecordWriter::problem(out, "g", QStringLiteral("Permission denied"));
        RecordWriter::rejection(out, QStringLiteral("rules.yar"), 3, QStringLiteral("bad"), QStringLiteral("syntax error"));
        RecordWriter::summary(out, { 2, 100, 5, 1, 1, 1, 12.5, false, QStringLiteral("cpu"), 2 });
        const QList<QByteArray> lines = QByteArray::fromStdString(out).split('\n');
        QCOMPARE(lines.size(), 5);
        QCOMPARE(lines[0], QByteArray("{\"type\":\"console\",\"file\":\"f\",\"message\":\"hello\"}"));
        QCOMPARE(lines[1], QByteArray("{\"type\":\"problem\",\"file\":\"g\",\"reason\":\"Permission denied\"}"));
        QCOMPARE(lines[2], QByteArray("{\"type\":\"rejection\",\"file\":\"rules.yar\",\"line\":3,\"rule\":\"bad\","
                                      "\"reason\":\"syntax error\"}"));
        const QJsonObject s = QJsonDocument::fromJson(lines[3]).object();
        QCOMPARE(s.value(QLatin1String("exit_code")).toInt(), 2);
        QCOMPARE(s.value(QLatin1String("engine")).toString(), QStringLiteral("cpu"));
        QCOMPARE(s.value(QLatin1String("wall_ms")).toDouble(), 12.5);
    }

    void yaraStringLines()
    {
        std::string out;
        RecordWriter::yaraString(out, 0x1f, QStringLiteral("$a"), QByteArray("ab\x01\xff", 4), false);
        RecordWriter::yaraString(out, 0, QStringLiteral("$h"), QByteArray(70, '\x4d'), true);
        const QList<QByteArray> lines = QByteArray::fromStdString(out).split('\n');
        QCOMPARE(lines[0], QByteArray("0x1f:$a: ab\\x01\\xFF"));
        QVERIFY(lines[1].startsWith("0x0:$h: 4D 4D "));
        QVERIFY(lines[1].endsWith(" ..."));
        QCOMPARE(lines[1].count("4D"), 64);
    }
};

QTEST_GUILESS_MAIN(TestRecordWriter)
#include "tst_recordwriter.moc"
