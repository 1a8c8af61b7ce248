// SPDX-License-Identifier: GPL-3.0-or-later
// Sharded scans as a cluster runs them: `scan --shard K/N --json` over the same paths on N machines, then `merge`
// of the N outputs. The merged records must be the single scan's, byte for byte and in its order (problems and
// rejections once, the summary's counts summed); every file in exactly one part, the same part on every rerun;
// and a merge that would lose a part refuses, naming it.
#include <algorithm>
#include <set>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "scan/filewalker.h"
#include "testutil.h"

namespace {

QList<QByteArray> lines(const QByteArray &out)
{
    QList<QByteArray> l = out.split('\n');
    if (!l.isEmpty() && l.back().isEmpty())
        l.pop_back();
    return l;
}

QJsonObject record(const QByteArray &line)
{
    return QJsonDocument::fromJson(line).object();
}

// The records but the summary, and the summary.
struct Output
{
    QList<QByteArray> records;
    QJsonObject summary;
};

// A path's place in the walk of `roots`: the root's index, then the names below it.
std::pair<int, QByteArrayList> walkKey(const QByteArray &path, const QStringList &roots)
{
    for (int r = 0; r < roots.size(); ++r) {
        const QByteArray root = roots[r].toUtf8();
        if (path.startsWith(QByteArray(root + '/')))
            return { r, path.mid(root.size() + 1).split('/') };
    }
    return { int(roots.size()), path.split('/') };
}

// A scan's output as a merge writes it: rejections, the files' records as they came (a scan writes them in the
// walk's order), then the problems in the walk's order (a scan writes them when it meets them), then the summary.
Output canonical(const QByteArray &out, const QStringList &roots)
{
    Output o;
    QList<QByteArray> rejections, files;
    std::vector<std::pair<std::pair<int, QByteArrayList>, QByteArray>> problems;
    for (const QByteArray &line : lines(out)) {
        const QJsonObject r = record(line);
        const QString type = r.value(QLatin1String("type")).toString();
        if (type == QLatin1String("summary"))
            o.summary = r;
        else if (type == QLatin1String("rejection"))
            rejections.push_back(line);
        else if (type == QLatin1String("problem"))
            problems.push_back({ walkKey(r.value(QLatin1String("file")).toString().toUtf8(), roots), line });
        else
            files.push_back(line);
    }
    std::sort(problems.begin(), problems.end());
    o.records = rejections + files;
    for (const auto &p : problems)
        o.records.push_back(p.second);
    return o;
}

std::set<QByteArray> scannedFiles(const QByteArray &out)
{
    std::set<QByteArray> files;
    for (const QByteArray &line : lines(out)) {
        const QJsonObject r = record(line);
        if (r.value(QLatin1String("type")).toString() == QLatin1String("hit"))
            files.insert(r.value(QLatin1String("file")).toString().toUtf8());
    }
    return files;
}

} // namespace

class TestShards : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    TestUtil::GeneratedCase m_case;
    QString m_rules;
    QStringList m_roots;

    QStringList scanArgs(const QStringList &extra) const
    {
        QStringList args { QStringLiteral("scan"), QStringLiteral("--json"), QStringLiteral("-w"),
                           QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-L"),
                           QStringLiteral("--batch-bytes"), QStringLiteral("256K"), QStringLiteral("-r"),
                           m_case.literalsFile, QStringLiteral("-r"), m_rules };
        args += extra;
        return args + m_roots;
    }

    // Scans the N parts into files; returns their paths.
    QStringList scanParts(int n, const QString &prefix)
    {
        QStringList files;
        for (int k = 1; k <= n; ++k) {
            QByteArray out, err;
            const int rc = TestUtil::runCli(scanArgs({ QStringLiteral("--shard"), QStringLiteral("%1/%2").arg(k).arg(n) }),
                                            &out, &err);
            if (rc != 2) // the rejected rule, the FIFO and the loop
                qWarning() << "part" << k << "exit" << rc << err;
            const QString file = m_tmp.path() + QStringLiteral("/%1-%2-%3.json").arg(prefix).arg(k).arg(n);
            if (!TestUtil::writeFile(file, out))
                return {};
            files.push_back(file);
        }
        return files;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_case = TestUtil::generateCase(m_tmp.path() + QLatin1String("/corpus"), 20261205, 4096);
        // What a share has besides files: a FIFO (a file's problem, its own part's), a symlink loop (a folder's
        // problem, every part's), and a rule file with a rule that is rejected (every part's).
        QVERIFY(::mkfifo(QFile::encodeName(m_case.dir + QLatin1String("/pipe")).constData(), 0644) == 0);
        QVERIFY(QDir().mkpath(m_tmp.path() + QLatin1String("/second/inner")));
        QVERIFY(TestUtil::writeFile(m_tmp.path() + QLatin1String("/second/inner/x.txt"), "alpha beta gamma"));
        QVERIFY(QFile::link(m_tmp.path() + QLatin1String("/second"), m_tmp.path() + QLatin1String("/second/inner/loop")));
        m_rules = m_tmp.path() + QLatin1String("/extra.tsv");
        QVERIFY(TestUtil::writeFile(m_rules, "-\tbeta\tbeta\n-\tbroken\t(unclosed\n"));
        // Roots out of name order: the walk takes them in the order given.
        m_roots = { m_tmp.path() + QLatin1String("/second"), m_case.dir };
    }

    void mergedPartsAreTheSingleScan_data()
    {
        QTest::addColumn<int>("parts");
        QTest::addRow("one part") << 1;
        QTest::addRow("three parts") << 3;
        QTest::addRow("seven parts") << 7;
    }

    void mergedPartsAreTheSingleScan()
    {
        QFETCH(int, parts);
        QByteArray single, err;
        QCOMPARE(TestUtil::runCli(scanArgs({}), &single, &err), 2);
        const QStringList files = scanParts(parts, QStringLiteral("part"));
        QCOMPARE(files.size(), parts);
        QByteArray merged;
        // Any order of the files.
        QStringList shuffled = files;
        std::reverse(shuffled.begin(), shuffled.end());
        QCOMPARE(TestUtil::runCli(QStringList { QStringLiteral("merge") } + shuffled, &merged, &err), 2);

        const Output a = canonical(single, m_roots), b = canonical(merged, m_roots);
        // The merge writes that order itself.
        QList<QByteArray> asWritten = lines(merged);
        asWritten.pop_back();
        QVERIFY(asWritten == b.records);
        QVERIFY2(a.records.size() > 1000, "the corpus should give many records");
        if (a.records != b.records) {
            for (qsizetype i = 0; i < std::min(a.records.size(), b.records.size()); ++i)
                if (a.records[i] != b.records[i]) {
                    qWarning() << "first difference at record" << i << a.records[i] << b.records[i];
                    break;
                }
        }
        QCOMPARE(b.records.size(), a.records.size());
        QVERIFY(a.records == b.records);
        for (const char *key : { "files", "bytes", "hits", "problems", "rejections", "cancelled", "engine", "exit_code" })
            QCOMPARE(b.summary.value(QLatin1String(key)), a.summary.value(QLatin1String(key)));
        QCOMPARE(a.summary.value(QLatin1String("problems")).toInt(), 2);
        QCOMPARE(a.summary.value(QLatin1String("rejections")).toInt(), 1);
    }

    void everyFileInOnePartTheSamePartEveryRun()
    {
        QByteArray single, err;
        TestUtil::runCli(scanArgs({}), &single, &err);
        const std::set<QByteArray> all = scannedFiles(single);
        std::set<QByteArray> seen;
        for (int k = 1; k <= 4; ++k) {
            const QStringList shard { QStringLiteral("--shard"), QStringLiteral("%1/4").arg(k) };
            QByteArray first, again;
            TestUtil::runCli(scanArgs(shard), &first, &err);
            TestUtil::runCli(scanArgs(shard), &again, &err);
            const std::set<QByteArray> files = scannedFiles(first);
            QVERIFY(files == scannedFiles(again));
            // Parts balance: none of four holds more than half of the files.
            QVERIFY2(files.size() * 2 < all.size(), qPrintable(QString::number(files.size())));
            for (const QByteArray &f : files) {
                QVERIFY2(seen.insert(f).second, f.constData());
                QCOMPARE(Hitscope::FileWalker::shardOf(f, 4), k - 1);
            }
        }
        QVERIFY(seen == all);
    }

    void mergeRefusesToLoseAPart()
    {
        const QStringList files = scanParts(3, QStringLiteral("refuse"));
        QCOMPARE(files.size(), 3);
        QByteArray out, err;
        auto refused = [&](const QStringList &inputs, const QString &message) {
            err.clear();
            const int rc = TestUtil::runCli(QStringList { QStringLiteral("merge") } + inputs, &out, &err);
            if (rc != 1 || !QString::fromLocal8Bit(err).contains(message)) {
                qWarning() << "merge of" << inputs << "exit" << rc << err;
                return false;
            }
            return true;
        };
        QVERIFY(refused({ files[0], files[2] }, QStringLiteral("missing part(s) 2/3")));
        QVERIFY(refused({ files[0], files[1], files[1], files[2] }, QStringLiteral("part 2/3 is given twice")));
        // A part cut short (its machine died): no summary.
        QByteArray cut;
        QFile f(files[1]);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> partLines = lines(f.readAll());
        for (qsizetype i = 0; i + 1 < partLines.size(); ++i)
            cut += partLines[i] + '\n';
        const QString cutFile = m_tmp.path() + QLatin1String("/cut.json");
        QVERIFY(TestUtil::writeFile(cutFile, cut));
        QVERIFY(refused({ files[0], cutFile, files[2] }, cutFile + QLatin1String(" (part 2/3) ends without a summary")));
        // A scan's output that is not a part's, and a part of another scan.
        QByteArray single;
        TestUtil::runCli(scanArgs({}), &single, &err);
        const QString singleFile = m_tmp.path() + QLatin1String("/single.json");
        QVERIFY(TestUtil::writeFile(singleFile, single));
        QVERIFY(refused({ singleFile, files[1], files[2] }, singleFile + QLatin1String(": not the --json output")));
        QByteArray other;
        TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("--json"), QStringLiteral("--engine"),
                           QStringLiteral("cpu"), QStringLiteral("--shard"), QStringLiteral("1/3"), QStringLiteral("-r"),
                           m_rules, m_case.dir },
                         &other, &err);
        const QString otherFile = m_tmp.path() + QLatin1String("/other.json");
        QVERIFY(TestUtil::writeFile(otherFile, other));
        QVERIFY(refused({ otherFile, files[1], files[2] }, QStringLiteral("of another scan")));
        QVERIFY(refused({ m_tmp.path() + QLatin1String("/none.json") }, QStringLiteral("none.json: cannot read it")));
    }

    void shardArgumentErrors()
    {
        for (const char *bad : { "0/3", "4/3", "3", "a/b", "1/0" }) {
            QByteArray out, err;
            QCOMPARE(TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("--shard"), QLatin1String(bad),
                                        m_rules, m_case.dir },
                                      &out, &err),
                     1);
            QVERIFY2(err.contains("--shard needs K/N"), err.constData());
        }
        QByteArray out, err;
        QCOMPARE(TestUtil::runCli({ QStringLiteral("merge") }, &out, &err), 1);
        QVERIFY2(err.contains("no output to merge"), err.constData());
    }
};

QTEST_GUILESS_MAIN(TestShards)
#include "tst_shards.moc"
