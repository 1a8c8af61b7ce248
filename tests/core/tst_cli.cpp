// SPDX-License-Identifier: GPL-3.0-or-later
// hitscope-cli end to end, as users and scripts run it, checked against independent oracles: Vectorscan
// (leftmost start of every match end) for the exact hit set, and yara for which rules match which files.
#include <map>
#include <set>
#include <tuple>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

#include "testutil.h"

using HitSet = std::set<std::tuple<QString, QString, int64_t, int64_t>>;

class TestCli : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    TestUtil::GeneratedCase m_case;
    HitSet m_expected;

    static HitSet parseJsonHits(const QByteArray &out, QJsonObject *summary = nullptr)
    {
        HitSet hits;
        for (const QByteArray &line : out.split('\n')) {
            if (line.isEmpty())
                continue;
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            if (o.value(QLatin1String("type")).toString() == QLatin1String("hit"))
                hits.insert({ o.value(QLatin1String("rule")).toString(), o.value(QLatin1String("file")).toString(),
                              int64_t(o.value(QLatin1String("offset")).toInteger()),
                              int64_t(o.value(QLatin1String("length")).toInteger()) });
            else if (summary && o.value(QLatin1String("type")).toString() == QLatin1String("summary"))
                *summary = o;
        }
        return hits;
    }

    // A corpus and rules for --profile: one rule whose one-byte string matches every few bytes of a few MB, cheap
    // ones, one that is rejected. Written once.
    QString m_profileRules;
    QString m_profileDir;
    void writeProfileCase()
    {
        if (!m_profileRules.isEmpty())
            return;
        m_profileDir = m_tmp.path() + QLatin1String("/profile/files");
        QByteArray big(3 << 20, 'a');
        for (qsizetype i = 0; i < big.size(); ++i)
            big[i] = i % 13 == 5 ? 'x' : "abcdefghijklmnopqrstuvwyz \n"[(i * 7919) % 27];
        QVERIFY(TestUtil::writeFile(m_profileDir + QLatin1String("/big.txt"), big));
        QVERIFY(TestUtil::writeFile(m_profileDir + QLatin1String("/a.txt"), "a Distinctive-Marker-0042 b x"));
        QVERIFY(TestUtil::writeFile(m_profileDir + QLatin1String("/b.txt"), "nothing to see"));
        m_profileRules = m_tmp.path() + QLatin1String("/profile/rules.yar");
        QVERIFY(TestUtil::writeFile(m_profileRules,
                                    "rule cheap { strings: $c = \"Distinctive-Marker-0042\" condition: $c }\n"
                                    "rule slow_byte { strings: $a = { 78 } condition: $a }\n"
                                    "rule rejected { strings: $u = \"unused\" condition: true }\n"
                                    "rule quiet { strings: $q = \"Never-Anywhere-Marker-31\" condition: $q }\n"));
    }

    // The --json records of `out` of one type.
    static std::vector<QJsonObject> records(const QByteArray &out, const char *type)
    {
        std::vector<QJsonObject> found;
        for (const QByteArray &line : out.split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            if (o.value(QLatin1String("type")).toString() == QLatin1String(type))
                found.push_back(o);
        }
        return found;
    }

    // The output but its profile records and the summary's wall_ms, which no two runs share.
    static QByteArray withoutProfile(const QByteArray &out)
    {
        QByteArray kept;
        for (const QByteArray &line : out.split('\n')) {
            if (line.startsWith("{\"type\":\"profile\""))
                continue;
            QByteArray l = line;
            const qsizetype at = l.indexOf("\"wall_ms\":");
            if (at >= 0)
                l.remove(at, l.indexOf(',', at) - at);
            kept += l + '\n';
        }
        return kept;
    }

    static void reportDifference(const HitSet &got, const HitSet &want)
    {
        int shown = 0;
        for (const auto &h : want)
            if (!got.count(h) && shown++ < 10)
                qWarning() << "missing" << std::get<0>(h) << std::get<1>(h) << std::get<2>(h) << std::get<3>(h);
        for (const auto &h : got)
            if (!want.count(h) && shown++ < 20)
                qWarning() << "extra" << std::get<0>(h) << std::get<1>(h) << std::get<2>(h) << std::get<3>(h);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_case = TestUtil::generateCase(m_tmp.path(), 20261129, 4096);
        m_expected = TestUtil::expectedHits(m_case);
        QVERIFY2(m_expected.size() > 1000, "the generated corpus should have many hits");
    }

    void secondRunUsesTheGroupingHint()
    {
        // As the README says: the first scan keeps its grouping in the user's cache folder, the next scan of the
        // same rules finds it there, and the hits are the same.
        const QString cache = m_tmp.path() + QLatin1String("/xdg-cache");
        const QString hints = cache + QLatin1String("/hitscope/groupings");
        const QStringList args { QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"),
                                 QStringLiteral("-s"), QStringLiteral("-r"), m_case.literalsFile,
                                 QStringLiteral("-r"), m_case.regexesFile, m_case.dir };
        QByteArray first, second, err;
        QCOMPARE(TestUtil::runCliWithCache(args, cache, &first, &err), 0);
        const QStringList written = QDir(hints).entryList({ QStringLiteral("*.groups") }, QDir::Files);
        QCOMPARE(written.size(), 1);
        QCOMPARE(TestUtil::runCliWithCache(args, cache, &second, &err), 0);
        // The same rules, the same hint (that it is used is tst_patterncatalog's to check).
        QCOMPARE(QDir(hints).entryList({ QStringLiteral("*.groups") }, QDir::Files), written);
        QVERIFY(!first.isEmpty());
        QCOMPARE(second, first);
    }

    void sameStringsWithAndWithoutIoUring()
    {
        // Small files are read through io_uring where the kernel allows it; HITSCOPE_IO_URING=0 reads them with
        // plain system calls. Both give every string of every file (the generated corpus has thousands).
        const QStringList args { QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"),
                                 QStringLiteral("-s"), QStringLiteral("-r"), m_case.literalsFile,
                                 QStringLiteral("-r"), m_case.regexesFile, m_case.dir };
        QByteArray ring, plain, err;
        QCOMPARE(TestUtil::runCli(args, &ring, &err), 0);
        qputenv("HITSCOPE_IO_URING", "0");
        const int rc = TestUtil::runCli(args, &plain, &err);
        qunsetenv("HITSCOPE_IO_URING");
        QCOMPARE(rc, 0);
        QVERIFY(ring.count('\n') > 1000);
        QCOMPARE(plain, ring);
    }

    void jsonHitsEqualOracle_data()
    {
        QTest::addColumn<QStringList>("extra");
        QTest::addRow("defaults") << QStringList();
        QTest::addRow("one thread") << QStringList { QStringLiteral("-j"), QStringLiteral("1") };
        // Eight threads as on a large machine: folders listed ahead of the walk, read threads at a lower priority.
        QTest::addRow("eight threads") << QStringList { QStringLiteral("-j"), QStringLiteral("8") };
        QTest::addRow("segments of 4 KiB (patterns planted across each boundary)")
            << QStringList { QStringLiteral("--segment-bytes"), QStringLiteral("4096") };
        QTest::addRow("64 KiB batches: large files split across batches")
            << QStringList { QStringLiteral("--batch-bytes"), QStringLiteral("64K"), QStringLiteral("--segment-bytes"),
                             QStringLiteral("1000") };
        QTest::addRow("64 KiB batches, all of that size") << QStringList { QStringLiteral("--batch-bytes"), QStringLiteral("64K"),
                                                                           QStringLiteral("--fixed-batches") };
        QTest::addRow("tiny segments") << QStringList { QStringLiteral("--segment-bytes"), QStringLiteral("100"),
                                                        QStringLiteral("--batch-bytes"), QStringLiteral("300K") };
        // The GPU engine (Mesa's lavapipe in CI), as users run it: its defaults, and a hit ring of one entry
        // (every batch with hits re-run, never truncated).
        QTest::addRow("gpu") << QStringList { QStringLiteral("--engine"), QStringLiteral("gpu") };
        QTest::addRow("gpu, eight threads, 1 MiB batches")
            << QStringList { QStringLiteral("--engine"), QStringLiteral("gpu"), QStringLiteral("-j"),
                             QStringLiteral("8"), QStringLiteral("--batch-bytes"), QStringLiteral("1M") };
        QTest::addRow("gpu, hit ring of 1")
            << QStringList { QStringLiteral("--engine"), QStringLiteral("gpu"), QStringLiteral("--hit-capacity"),
                             QStringLiteral("1"), QStringLiteral("--batch-bytes"), QStringLiteral("1M") };
        // Every string in DFA tables instead of the default key screen, on either engine: the same hits.
        QTest::addRow("gpu, --gpu-dfas") << QStringList { QStringLiteral("--engine"), QStringLiteral("gpu"),
                                                          QStringLiteral("--gpu-dfas") };
        QTest::addRow("cpu, --gpu-dfas") << QStringList { QStringLiteral("--gpu-dfas") };
    }

    void jsonHitsEqualOracle()
    {
        QFETCH(QStringList, extra);
        QByteArray out, err;
        // The CPU engine unless the row names one.
        const QStringList engine = extra.contains(QStringLiteral("--engine"))
            ? QStringList()
            : QStringList { QStringLiteral("--engine"), QStringLiteral("cpu") };
        const QString tele = m_tmp.path() + QLatin1String("/oracle-tele.jsonl");
        QFile::remove(tele);
        const int rc = TestUtil::runCli(QStringList { QStringLiteral("scan"), QStringLiteral("--json"),
                                                      QStringLiteral("--telemetry"), tele, QStringLiteral("-r"),
                                                      m_case.literalsFile, QStringLiteral("-r"), m_case.regexesFile }
                                            + engine + extra + QStringList { m_case.dir },
                                        &out, &err);
        if (rc == 1 && err.contains("no GPU engine"))
            HITSCOPE_SKIP_WITHOUT_GPU(err.constData());
        QVERIFY2(rc == 0, err.constData());
        QJsonObject summary;
        const HitSet got = parseJsonHits(out, &summary);
        if (got != m_expected)
            reportDifference(got, m_expected);
        QCOMPARE(got.size(), m_expected.size());
        QVERIFY(got == m_expected);
        QCOMPARE(summary.value(QLatin1String("files")).toInt(), m_case.files.size());
        if (extra.contains(QStringLiteral("--hit-capacity"))) {
            // The ring of one entry overflowed, and those batches ran again.
            QFile f(tele);
            QVERIFY(f.open(QIODevice::ReadOnly));
            qint64 rerun = 0;
            for (const QByteArray &l : f.readAll().split('\n'))
                if (!l.isEmpty())
                    rerun += QJsonDocument::fromJson(l).object().value(QLatin1String("hits_rerun")).toInteger();
            QVERIFY(rerun > 0);
        }
    }

    void yaraAgreesOnLiteralRules()
    {
        const QString yara = QStandardPaths::findExecutable(QStringLiteral("yara"));
        QVERIFY2(!yara.isEmpty(), "yara is not installed (packaging/setup.sh installs it)");
        // The same literals as YARA rules, one rule per literal, named after the list rules.
        QByteArray yar;
        QHash<QString, QString> nameOf;
        int line = 2;
        for (const QByteArray &lit : m_case.literals) {
            QByteArray escaped;
            for (const char ch : lit) {
                if (ch == '\\' || ch == '"')
                    escaped += '\\';
                escaped += ch;
            }
            const QString yname = QStringLiteral("L%1").arg(line);
            nameOf[yname] = QStringLiteral("iocs:%1").arg(line);
            yar += "rule " + yname.toLatin1() + " { strings: $s = \"" + escaped + "\" condition: $s }\n";
            ++line;
        }
        const QString yarFile = m_tmp.path() + QLatin1String("/lits.yar");
        QVERIFY(TestUtil::writeFile(yarFile, yar));
        QProcess p;
        p.start(yara, { QStringLiteral("-r"), yarFile, m_case.dir });
        QVERIFY(p.waitForFinished(300000));
        QCOMPARE(p.exitCode(), 0);
        std::set<std::pair<QString, QString>> want;
        for (const QByteArray &l : p.readAllStandardOutput().split('\n')) {
            const int sp = l.indexOf(' ');
            if (sp > 0)
                want.insert({ nameOf.value(QString::fromUtf8(l.left(sp))), QString::fromUtf8(l.mid(sp + 1)) });
        }
        QVERIFY(want.size() > 10);

        // Only the plain literals of the list: the hex line has no twin in lits.yar.
        QByteArray listOnly;
        QFile lf(m_case.literalsFile);
        QVERIFY(lf.open(QIODevice::ReadOnly));
        for (const QByteArray &l : lf.readAll().split('\n'))
            listOnly += (l.startsWith("hex:") ? QByteArray("# hex line left out") : l) + '\n';
        const QString iocs = m_tmp.path() + QLatin1String("/only/iocs.txt");
        QVERIFY(TestUtil::writeFile(iocs, listOnly.left(listOnly.size() - 1)));
        QByteArray out, err;
        QCOMPARE(TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("-r"), iocs, m_case.dir }, &out, &err), 0);
        std::set<std::pair<QString, QString>> got;
        for (const QByteArray &l : out.split('\n')) {
            const int sp = l.indexOf(' ');
            if (sp > 0)
                got.insert({ QString::fromUtf8(l.left(sp)), QString::fromUtf8(l.mid(sp + 1)) });
        }
        QCOMPARE(got.size(), want.size());
        QVERIFY(got == want);
    }

    void printStringsLikeYara()
    {
        const QString dir = m_tmp.path() + QLatin1String("/small");
        QVERIFY(TestUtil::writeFile(dir + QLatin1String("/a.txt"), QByteArray("xx needle yy\x01needle")));
        QByteArray out, err;
        QCOMPARE(TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("-s"), QStringLiteral("-r"),
                                    m_case.literalsFile, dir },
                                  &out, &err),
                 0);
        QCOMPARE(out, QByteArray("iocs:2 " + dir.toUtf8() + "/a.txt\n0x3:$: needle\n0xd:$: needle\n"));
    }

    void telemetryOneLinePerBatch()
    {
        const QString tele = m_tmp.path() + QLatin1String("/tele.jsonl");
        QByteArray out, err;
        // The README's pipeline trace too: a line per batch on stderr.
        qputenv("HITSCOPE_PIPELINE_TRACE", "1");
        const int rc = TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("--json"),
                                          QStringLiteral("--batch-bytes"), QStringLiteral("256K"),
                                          QStringLiteral("--telemetry"), tele, QStringLiteral("-r"),
                                          m_case.literalsFile, m_case.dir },
                                        &out, &err);
        qunsetenv("HITSCOPE_PIPELINE_TRACE");
        QCOMPARE(rc, 0);
        QJsonObject summary;
        parseJsonHits(out, &summary);
        QFile f(tele);
        QVERIFY(f.open(QIODevice::ReadOnly));
        int64_t bytes = 0;
        int64_t hits = 0;
        int lines = 0;
        std::vector<int64_t> haystacks;
        for (const QByteArray &l : f.readAll().split('\n')) {
            if (l.isEmpty())
                continue;
            const QJsonObject o = QJsonDocument::fromJson(l).object();
            QCOMPARE(o.value(QLatin1String("index")).toInt(), lines);
            QVERIFY(o.value(QLatin1String("wall_ms")).toDouble() > 0);
            QVERIFY(o.contains(QLatin1String("read_ms")) && o.contains(QLatin1String("buffer_wait_ms")));
            QVERIFY(o.value(QLatin1String("read_ms")).toDouble() >= 0);
            QVERIFY(o.value(QLatin1String("buffer_wait_ms")).toDouble() >= 0);
            const QByteArray traced = "pipeline batch " + QByteArray::number(lines) + ": ";
            QVERIFY2(err.contains(traced), err.constData());
            bytes += o.value(QLatin1String("bytes")).toInteger();
            hits += o.value(QLatin1String("hits")).toInteger();
            haystacks.push_back(o.value(QLatin1String("haystack_bytes")).toInteger());
            ++lines;
        }
        QVERIFY(lines > 3);
        QCOMPARE(lines, summary.value(QLatin1String("batches")).toInt());
        QCOMPARE(int(err.count("pipeline batch ")), lines);
        // The batch ramp as users get it: the first three batches hold at most 1/8, 1/4 and 1/2 of 256 KiB, and
        // the walk (a few thousand files) has ended long before the last batch, which is then at most half.
        for (int i = 0; i < 3; ++i)
            QVERIFY2(haystacks[size_t(i)] <= (int64_t(256) << 10) >> (3 - i), qPrintable(QString::number(haystacks[size_t(i)])));
        QVERIFY(haystacks.back() <= int64_t(128) << 10);
        QCOMPARE(bytes, summary.value(QLatin1String("bytes")).toInteger());
        QCOMPARE(hits, summary.value(QLatin1String("hits")).toInteger());
    }

    void oneDeviceListedTwiceGivesOneDevicesOutput()
    {
        // --devices with lavapipe twice: two device objects, the same lines in the same order as one device, and
        // the telemetry names the device of each batch.
        const QStringList common { QStringLiteral("scan"), QStringLiteral("-s"), QStringLiteral("--engine"),
                                   QStringLiteral("gpu"), QStringLiteral("--batch-bytes"), QStringLiteral("128K"),
                                   QStringLiteral("-r"), m_case.literalsFile, QStringLiteral("-r"),
                                   m_case.regexesFile };
        QByteArray one, two, err;
        const int rc = TestUtil::runCli(common + QStringList { m_case.dir }, &one, &err);
        if (rc != 0 && err.contains("no GPU"))
            HITSCOPE_SKIP_WITHOUT_GPU(err.constData());
        QCOMPARE(rc, 0);
        const QString tele = m_tmp.path() + QLatin1String("/devices.jsonl");
        QCOMPARE(TestUtil::runCli(common
                                      + QStringList { QStringLiteral("--devices"), QStringLiteral("0,0"),
                                                      QStringLiteral("--telemetry"), tele, m_case.dir },
                                  &two, &err),
                 0);
        QVERIFY(one.count('\n') > 100);
        QVERIFY(one == two);
        QFile f(tele);
        QVERIFY(f.open(QIODevice::ReadOnly));
        std::set<int> slots;
        for (const QByteArray &l : f.readAll().split('\n'))
            if (!l.isEmpty())
                slots.insert(QJsonDocument::fromJson(l).object().value(QLatin1String("device_slot")).toInt(-1));
        QVERIFY(slots == std::set<int>({ 0, 1 }));
    }

    void devicesSayHowBatchesReachTheGpu()
    {
        // As the README says: every device available lists how batches reach it.
        QByteArray out, err;
        const int rc = TestUtil::runCli({ QStringLiteral("devices") }, &out, &err);
        if (rc == 2)
            HITSCOPE_SKIP_WITHOUT_GPU("no GPU backend offers compute here");
        QVERIFY2(rc == 0, err.constData());
        const int available = int(out.count("\n  driver: "));
        QVERIFY(available > 0);
        QCOMPARE(int(out.count("\n  batches: ")), available);
        // Mesa's lavapipe imports host memory and has no transfer-only queue.
        if (out.contains("llvmpipe") && !qEnvironmentVariableIsSet("HITSCOPE_GPU_NO_HOST_IMPORT"))
            QVERIFY2(out.contains("  batches: copied from where they were read; the next batch queued ahead on the "
                                  "compute queue\n"),
                     out.constData());
    }

    void cpuScansLoadNoGpuModule()
    {
        // The GPU half of the CLI is a module, opened only when a GPU may be used: a CPU scan never loads Qt GUI
        // and its libraries (its start-up), and works where the module is missing. Without it, --engine gpu says
        // why, auto falls back to the CPU with a notice, and devices reports no backend.
        const QString dir = m_tmp.path() + QLatin1String("/nomodule");
        QVERIFY(QDir().mkpath(dir + QLatin1String("/bin")));
        const QString cli = dir + QLatin1String("/bin/hitscope-cli");
        QVERIFY(QFile::copy(QStringLiteral(HITSCOPE_CLI), cli));
        QVERIFY(TestUtil::writeFile(dir + QLatin1String("/files/a.txt"), "alpha beta gamma"));
        const QString tsv = dir + QLatin1String("/r.tsv");
        QVERIFY(TestUtil::writeFile(tsv, "-\tgood\tbeta\n"));
        const QByteArray expected = "good " + dir.toUtf8() + "/files/a.txt\n";
        auto run = [&](const QString &program, const QStringList &args, bool traceLibraries, QByteArray *out,
                       QByteArray *err) {
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            if (traceLibraries)
                env.insert(QStringLiteral("LD_DEBUG"), QStringLiteral("libs"));
            QProcess p;
            p.setProcessEnvironment(env);
            p.start(program, args);
            if (!p.waitForFinished(120000))
                return -1;
            *out = p.readAllStandardOutput();
            *err = p.readAllStandardError();
            return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
        };
        const QStringList scan { QStringLiteral("scan"), QStringLiteral("-r"), tsv, dir + QLatin1String("/files") };
        const QStringList cpu = QStringList(scan) << QStringLiteral("--engine") << QStringLiteral("cpu");
        const QStringList gpu = QStringList(scan) << QStringLiteral("--engine") << QStringLiteral("gpu");
        QByteArray out, err;

        // The build's own CLI: the module loads Qt GUI for a GPU scan (whether or not a device is found), and a CPU
        // scan loads neither.
        QVERIFY(run(QStringLiteral(HITSCOPE_CLI), gpu, true, &out, &err) >= 0);
        QVERIFY2(err.contains("hitscope-cli-gpu.so") && err.contains("libQt6Gui"), err.right(2000).constData());
        QCOMPARE(run(QStringLiteral(HITSCOPE_CLI), cpu, true, &out, &err), 0);
        QCOMPARE(out, expected);
        QVERIFY2(!err.contains("hitscope-cli-gpu.so") && !err.contains("libQt6Gui"), err.right(2000).constData());

        // A copy without its module.
        QCOMPARE(run(cli, cpu, false, &out, &err), 0);
        QCOMPARE(out, expected);
        QCOMPARE(err, QByteArray());
        QCOMPARE(run(cli, gpu, false, &out, &err), 1);
        QCOMPARE(out, QByteArray());
        QVERIFY2(err.contains("cannot load the GPU module")
                     && err.contains(QByteArray(QFile::encodeName(cli) + "-gpu.so: not found")),
                 err.constData());
        QCOMPARE(run(cli, scan, false, &out, &err), 0);
        QCOMPARE(out, expected);
        QVERIFY2(err.contains("cannot load the GPU module") && err.contains("using the CPU engine"), err.constData());
        QCOMPARE(run(cli, { QStringLiteral("devices") }, false, &out, &err), 2);
        QVERIFY2(out.contains("cannot load the GPU module"), out.constData());
    }

    void badInputIsReportedAndTheRestRuns()
    {
        const QString dir = m_tmp.path() + QLatin1String("/bad");
        QVERIFY(TestUtil::writeFile(dir + QLatin1String("/files/a.txt"), "alpha beta gamma"));
        QVERIFY(::mkfifo(QFile::encodeName(dir + QLatin1String("/files/pipe")).constData(), 0644) == 0);
        const QString tsv = dir + QLatin1String("/r.tsv");
        QVERIFY(TestUtil::writeFile(tsv, "-\tgood\tbeta\n-\tbroken\t(unclosed\n-\tempty\tx*\n"));
        QByteArray out, err;
        QCOMPARE(TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("-r"), tsv, dir + QLatin1String("/files") },
                                  &out, &err, 60000),
                 2);
        QCOMPARE(out, QByteArray("good " + dir.toUtf8() + "/files/a.txt\n"));
        QVERIFY2(err.contains(QByteArray(tsv.toUtf8() + ":2")), err.constData());
        QVERIFY2(err.contains(QByteArray(tsv.toUtf8() + ":3")), err.constData());
        QVERIFY2(err.contains("pipe"), err.constData());
    }

    void argumentErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::addRow("no command") << QStringList() << QStringLiteral("no command");
        QTest::addRow("no rules") << QStringList { QStringLiteral("scan"), QStringLiteral(".") }
                                  << QStringLiteral("no rule file");
        QTest::addRow("bad size") << QStringList { QStringLiteral("scan"), QStringLiteral("-r"), QStringLiteral("x.txt"),
                                                   QStringLiteral("--batch-bytes"), QStringLiteral("lots"),
                                                   QStringLiteral(".") }
                                  << QStringLiteral("not a size");
        QTest::addRow("missing rule file")
            << QStringList { QStringLiteral("scan"), QStringLiteral("-r"), QStringLiteral("/nonexistent/rules.txt"),
                             QStringLiteral(".") }
            << QStringLiteral("/nonexistent/rules.txt");
        QTest::addRow("unknown option") << QStringList { QStringLiteral("scan"), QStringLiteral("--frobnicate") }
                                        << QStringLiteral("--frobnicate");
        QTest::addRow("bad device list") << QStringList { QStringLiteral("scan"), QStringLiteral("--devices"),
                                                          QStringLiteral("gpu0"), QStringLiteral("r.txt"),
                                                          QStringLiteral(".") }
                                         << QStringLiteral("--devices: devices must be 'all' or device numbers");
    }

    void argumentErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QByteArray out, err;
        QCOMPARE(TestUtil::runCli(args, &out, &err), 1);
        QVERIFY2(QString::fromLocal8Bit(err).contains(message), err.constData());
    }

    void profileTableOnStderr_data()
    {
        QTest::addColumn<QString>("engine");
        QTest::addRow("cpu") << QStringLiteral("cpu");
        QTest::addRow("gpu") << QStringLiteral("gpu");
    }

    // --profile: the table after the scan on stderr, the slow rule first with its reasons; stdout byte for byte
    // the same as without it (yara's -s lines).
    void profileTableOnStderr()
    {
        QFETCH(QString, engine);
        writeProfileCase();
        const QStringList scan { QStringLiteral("scan"), QStringLiteral("-s"), QStringLiteral("--engine"), engine,
                                 QStringLiteral("-r"), m_profileRules, m_profileDir };
        QByteArray plain, profiled, err;
        const int rc = TestUtil::runCli(scan, &plain, &err);
        if (rc == 1 && err.contains("no GPU engine"))
            HITSCOPE_SKIP_WITHOUT_GPU(err.constData());
        QCOMPARE(rc, 2); // the rejected rule
        QCOMPARE(TestUtil::runCli(scan + QStringList { QStringLiteral("--profile") }, &profiled, &err), 2);
        QCOMPARE(profiled, plain);
        const QStringList lines = QString::fromUtf8(err).split(QLatin1Char('\n'));
        const QRegularExpression header(QStringLiteral(
            "^rank +rule +file:line +engine ms +condition ms +resolve ms +total ms +hits +files +reasons$"));
        const auto at = std::find_if(lines.begin(), lines.end(), [&](const QString &l) { return header.match(l).hasMatch(); });
        QVERIFY2(at != lines.end(), err.constData());
        // Three accepted rules and the totals.
        QVERIFY2(lines.end() - at >= 5, err.constData());
        const QStringList first = at[1].split(QLatin1Char(' '), Qt::SkipEmptyParts);
        QCOMPARE(first.value(0), QStringLiteral("1"));
        QCOMPARE(first.value(1), QStringLiteral("slow_byte"));
        QCOMPARE(first.value(2), m_profileRules + QStringLiteral(":2"));
        const qsizetype slowLines = plain.count(":$a: 78\n");
        QVERIFY(slowLines > 200000);
        QCOMPARE(first.value(7), QString::number(slowLines)); // hits: its -s lines
        QCOMPARE(first.value(8), QStringLiteral("2"));         // files: big.txt and a.txt
        QVERIFY2(at[1].contains(QLatin1String("many matches: ")) && at[1].contains(QLatin1String("its atom is 1 byte")),
                 qPrintable(at[1]));
        QVERIFY2(at[4].trimmed().startsWith(QLatin1String("all 3 rules")), qPrintable(at[4]));
        const bool gpu = engine == QLatin1String("gpu");
        QCOMPARE(first.value(3) == QLatin1String("-"), gpu);
        QCOMPARE(int(err.count("a GPU's kernels cannot be split per rule")), gpu ? 1 : 0);

        QCOMPARE(TestUtil::runCli(scan + QStringList { QStringLiteral("--profile-top"), QStringLiteral("1") }, &profiled,
                                  &err),
                 2);
        QVERIFY2(err.contains("\n   1  slow_byte") && !err.contains("\n   2  "), err.constData());
    }

    // --json --profile: a profile record per accepted rule, with every field, in the table's order, before the
    // summary; the other records as without --profile.
    void profileJsonRecords()
    {
        writeProfileCase();
        const QStringList scan { QStringLiteral("scan"), QStringLiteral("--json"), QStringLiteral("--engine"),
                                 QStringLiteral("cpu"), QStringLiteral("-r"), m_profileRules, m_profileDir };
        QByteArray plain, profiled, err;
        QCOMPARE(TestUtil::runCli(scan, &plain, &err), 2);
        QCOMPARE(TestUtil::runCli(scan + QStringList { QStringLiteral("--profile-top"), QStringLiteral("0") },
                                  &profiled, &err),
                 2);
        QCOMPARE(withoutProfile(profiled), withoutProfile(plain));
        const std::vector<QJsonObject> profile = records(profiled, "profile");
        QCOMPARE(profile.size(), size_t(3));
        QVERIFY(profiled.indexOf("{\"type\":\"profile\"") > profiled.lastIndexOf("{\"type\":\"match\""));
        QVERIFY(profiled.lastIndexOf("{\"type\":\"profile\"") < profiled.indexOf("{\"type\":\"summary\""));
        QStringList order;
        for (const QJsonObject &o : profile) {
            for (const char *field : { "rule", "file", "line", "engine_ms", "host_ms", "condition_ms", "resolve_ms",
                                       "total_ms", "hits", "files", "reasons" })
                QVERIFY2(o.contains(QLatin1String(field)), field);
            QVERIFY(o.value(QLatin1String("engine_ms")).isDouble());
            QVERIFY(o.value(QLatin1String("reasons")).isArray());
            QCOMPARE(o.value(QLatin1String("file")).toString(), m_profileRules);
            order << o.value(QLatin1String("rule")).toString();
        }
        QCOMPARE(order.value(0), QStringLiteral("slow_byte"));
        QVERIFY(!order.contains(QStringLiteral("rejected")));
        // The table lists them in the same order.
        for (int i = 0; i < order.size(); ++i)
            QVERIFY2(QString::fromUtf8(err).contains(QRegularExpression(
                         QStringLiteral("\n +%1  %2 ").arg(i + 1).arg(QRegularExpression::escape(order[i])))),
                     err.constData());
        // Its hits are its strings in the match records.
        qint64 strings = 0;
        for (const QJsonObject &m : records(profiled, "match"))
            if (m.value(QLatin1String("rule")).toString() == QLatin1String("slow_byte"))
                strings += m.value(QLatin1String("strings")).toArray().size();
        QCOMPARE(profile.front().value(QLatin1String("hits")).toInteger(), strings);
        QCOMPARE(profile.front().value(QLatin1String("line")).toInt(), 2);
    }

    // Parts of a sharded scan with --profile merge into one profile record per rule, summed.
    void mergeSumsProfiles()
    {
        writeProfileCase();
        const QStringList scan { QStringLiteral("scan"), QStringLiteral("--json"), QStringLiteral("--engine"),
                                 QStringLiteral("cpu"), QStringLiteral("--profile"), QStringLiteral("-r"),
                                 m_profileRules, m_profileDir };
        QByteArray whole, err;
        QCOMPARE(TestUtil::runCli(scan, &whole, &err), 2);
        QStringList parts;
        for (int k = 1; k <= 3; ++k) {
            QByteArray out;
            QCOMPARE(TestUtil::runCli(scan + QStringList { QStringLiteral("--shard"), QStringLiteral("%1/3").arg(k) },
                                      &out, &err),
                     2);
            parts << m_tmp.path() + QStringLiteral("/profile/part%1.json").arg(k);
            QVERIFY(TestUtil::writeFile(parts.back(), out));
        }
        QByteArray merged;
        QCOMPARE(TestUtil::runCli(QStringList { QStringLiteral("merge") } + parts, &merged, &err), 2);
        std::map<QString, std::pair<qint64, qint64>> want, got;
        for (const QJsonObject &o : records(whole, "profile"))
            want[o.value(QLatin1String("rule")).toString()] = { o.value(QLatin1String("hits")).toInteger(),
                                                                 o.value(QLatin1String("files")).toInteger() };
        const std::vector<QJsonObject> mergedProfile = records(merged, "profile");
        QCOMPARE(mergedProfile.size(), size_t(3));
        for (const QJsonObject &o : mergedProfile)
            got[o.value(QLatin1String("rule")).toString()] = { o.value(QLatin1String("hits")).toInteger(),
                                                                o.value(QLatin1String("files")).toInteger() };
        QVERIFY(got == want);
        QCOMPARE(mergedProfile.front().value(QLatin1String("rule")).toString(), QStringLiteral("slow_byte"));
        QVERIFY(mergedProfile.front().value(QLatin1String("reasons")).toArray().first().toString().startsWith(
            QLatin1String("many matches: ")));
        // A part without profile records is refused, named.
        QByteArray plainPart;
        QCOMPARE(TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("--json"), QStringLiteral("--engine"),
                                    QStringLiteral("cpu"), QStringLiteral("--shard"), QStringLiteral("3/3"),
                                    QStringLiteral("-r"), m_profileRules, m_profileDir },
                                  &plainPart, &err),
                 2);
        QVERIFY(TestUtil::writeFile(parts[2], plainPart));
        QCOMPARE(TestUtil::runCli(QStringList { QStringLiteral("merge") } + parts, &merged, &err), 1);
        QVERIFY2(err.contains("has none: scan every part with --profile") && err.contains(parts[2].toUtf8()),
                 err.constData());
    }

    void helpDocumentsEveryOption()
    {
        QByteArray out;
        QCOMPARE(TestUtil::runCli({ QStringLiteral("--help") }, &out), 0);
        for (const char *opt : { "--rules", "--engine", "--devices", "--shard", "--threads", "--json", "--telemetry", "--batch-bytes", "--fixed-batches",
                                 "--segment-bytes", "--max-file-size", "--exclude", "--include", "--profile",
                                 "--profile-top", "Exit status" })
            QVERIFY2(out.contains(opt), opt);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
