// SPDX-License-Identifier: GPL-3.0-or-later
// ShardMerger on parts written by hand: what a merge keeps when lines repeat (a folder's problem is every part's,
// a problem twice in one part is two), a part stopped before its end is refused by name, and a merge that cannot
// write its output says so instead of looking whole.
#include <QBuffer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "report/shardmerger.h"

using namespace Hitscope;

namespace {
const QByteArray kHeader1 = R"({"type":"shard","index":1,"count":2,"paths":["/d"],"rules":["r.yar"]})";
const QByteArray kHeader2 = R"({"type":"shard","index":2,"count":2,"paths":["/d"],"rules":["r.yar"]})";
const QByteArray kRejection = R"({"type":"rejection","file":"r.yar","line":3,"rule":"bad","reason":"x"})";
const QByteArray kFolderProblem = R"({"type":"problem","file":"/d/sub","reason":"permission denied"})";
const QByteArray kFileProblem = R"({"type":"problem","file":"/d/b/\ufffd","reason":"is a FIFO"})";

QByteArray summary(int files, int problems, bool cancelled = false)
{
    return QByteArray(R"({"type":"summary","files":)") + QByteArray::number(files) + R"(,"bytes":10,"hits":1,"problems":)"
        + QByteArray::number(problems) + R"(,"rejections":1,"batches":1,"wall_ms":5.0,"cancelled":)"
        + (cancelled ? "true" : "false") + R"(,"engine":"cpu","exit_code":2})";
}

QByteArray hit(const char *file)
{
    return QByteArray(R"({"type":"hit","file":")") + file + R"(","rule":"r","string":"$","offset":0,"length":1})";
}
} // namespace

class TestShardMerger : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;

    QString write(const QString &name, const QList<QByteArray> &lines)
    {
        const QString path = m_tmp.path() + QLatin1Char('/') + name;
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        for (const QByteArray &l : lines)
            f.write(l + '\n');
        return path;
    }

private Q_SLOTS:
    void repeatedLinesAndWalkOrder()
    {
        // Part 1: the rejection, a file under b, the folder's problem, a FIFO's problem twice (two names that are
        // not UTF-8 write the same line). Part 2: the rejection, files under a and c, the folder's problem.
        const QString p1 = write(QStringLiteral("p1.json"), { kHeader1, kRejection, hit("/d/b/x"), kFolderProblem,
                                                             kFileProblem, kFileProblem, summary(1, 3) });
        const QString p2 = write(QStringLiteral("p2.json"), { kHeader2, kRejection, hit("/d/a"), hit("/d/c"),
                                                             kFolderProblem, summary(2, 1) });
        QBuffer out;
        out.open(QIODevice::WriteOnly);
        QString error;
        QCOMPARE(ShardMerger::merge({ p2, p1 }, out, &error), 2);
        const QList<QByteArray> lines = out.data().split('\n');
        QCOMPARE(lines.size(), 9); // 8 records and the empty piece after the last newline
        QCOMPARE(lines[0], kRejection);
        QCOMPARE(lines[1], hit("/d/a"));
        QCOMPARE(lines[2], hit("/d/b/x"));
        QCOMPARE(lines[3], hit("/d/c"));
        // Problems after the files, in the walk's order: /d/b/... before /d/sub.
        QCOMPARE(lines[4], kFileProblem);
        QCOMPARE(lines[5], kFileProblem);
        QCOMPARE(lines[6], kFolderProblem);
        QVERIFY2(lines[7].contains(R"("files":3)") && lines[7].contains(R"("problems":3)")
                     && lines[7].contains(R"("rejections":1)") && lines[7].contains(R"("batches":2)"),
                 lines[7].constData());
    }

    void stoppedPartIsRefused()
    {
        const QString p1 = write(QStringLiteral("s1.json"), { kHeader1, hit("/d/a"), summary(1, 0, true) });
        const QString p2 = write(QStringLiteral("s2.json"), { kHeader2, hit("/d/b"), summary(1, 0) });
        QBuffer out;
        out.open(QIODevice::WriteOnly);
        QString error;
        QCOMPARE(ShardMerger::merge({ p1, p2 }, out, &error), -1);
        QVERIFY2(error.contains(p1 + QLatin1String(" (part 1/2) was stopped")), qPrintable(error));
    }

    void unwritableOutputIsAnError()
    {
        const QString p1 = write(QStringLiteral("w1.json"), { kHeader1, hit("/d/a"), summary(1, 0) });
        const QString p2 = write(QStringLiteral("w2.json"), { kHeader2, hit("/d/b"), summary(1, 0) });
        QFile full(QStringLiteral("/dev/full"));
        if (!full.open(QIODevice::WriteOnly | QIODevice::Unbuffered))
            QSKIP("no /dev/full here");
        QString error;
        QCOMPARE(ShardMerger::merge({ p1, p2 }, full, &error), -1);
        QVERIFY2(error.contains(QLatin1String("cannot write")), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TestShardMerger)
#include "tst_shardmerger.moc"
