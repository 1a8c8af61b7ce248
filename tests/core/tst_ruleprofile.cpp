// SPDX-License-Identifier: GPL-3.0-or-later
// The rule profile of a scan (Scanner::setProfiling), as a user reads it: of a few cheap rules, one whose one-byte
// string matches every few bytes of several megabytes and one with a heavy condition, the slow rule comes first
// and says why, the heavy condition's time shows, and every rule's hits and files are those the scan itself
// reported. On the CPU engine, on the GPU engine (whose kernels are not split per rule) and on a pool of two GPU
// device objects, whose batches run side by side; off, nothing is measured and the scan's output is the same.
#include <map>

#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "automata/patterncatalog.h"
#include "cpu/cpuengine.h"
#include "gpu/headlessplatform.h"
#include "gpu/rhidevice.h"
#include "rules/ruleloader.h"
#include "scan/scanner.h"
#include "session/devicepool.h"
#include "session/fallbackengine.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

// What the scan reported, per rule name.
struct Reported
{
    std::map<QString, int64_t> hits;
    std::map<QString, int64_t> files;
    QByteArrayList lines; // "path rule offset length", in the order reported
};

struct Outcome
{
    ScanSummary summary;
    Reported reported;
    RuleProfile profile;
};

RhiDeviceOptions lavapipe()
{
    RhiDeviceOptions options;
    options.backend = GpuBackend::Vulkan;
    return options;
}

const RuleProfileRow *rowOf(const RuleProfile &profile, const QString &name)
{
    for (const RuleProfileRow &row : profile.rows)
        if (row.name == name)
            return &row;
    return nullptr;
}

QString describe(const RuleProfile &profile)
{
    QStringList lines;
    for (const RuleProfileRow &r : profile.rows)
        lines << QStringLiteral("%1: engine %2 host %3 condition %4 resolve %5 total %6 hits %7 files %8 [%9]")
                     .arg(r.name)
                     .arg(r.engineMs ? QString::number(*r.engineMs) : QStringLiteral("-"))
                     .arg(r.hostMs)
                     .arg(r.conditionMs)
                     .arg(r.resolveMs)
                     .arg(r.totalMs())
                     .arg(r.hits)
                     .arg(r.files)
                     .arg(r.reasons.join(QLatin1String("; ")));
    return lines.join(QLatin1Char('\n'));
}

} // namespace

class TestRuleProfile : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    QString m_dir;
    RuleSet m_rules;
    PatternCatalog m_catalog;

    Outcome scan(Engine &engine, bool profiling, int64_t batchBytes = 1 << 20)
    {
        Outcome o;
        Scanner scanner(m_rules, m_catalog, engine);
        scanner.setProfiling(profiling);
        Scanner::Callbacks cb;
        cb.fileDone = [&](const FileResult &fr) {
            for (const Hit &h : fr.hits) {
                const QString &rule = m_rules.rules[size_t(m_rules.patterns[size_t(h.pattern)].ruleIndex)].name;
                ++o.reported.hits[rule];
                o.reported.lines << fr.path + ' ' + rule.toUtf8() + ' ' + QByteArray::number(h.offset) + ' '
                        + QByteArray::number(h.length);
            }
            for (int r : fr.rules)
                ++o.reported.files[m_rules.rules[size_t(r)].name];
        };
        LaunchParams params;
        params.batchBytes = batchBytes;
        params.segmentBytes = 64 << 10;
        params.threads = 2;
        o.summary = scanner.run({ QFile::encodeName(m_dir) }, WalkOptions {}, params, cb);
        o.profile = scanner.profile();
        return o;
    }

    // Every rule has a row with the hits and files the scan reported (each rule that matches lists all its hits).
    void compareWithReported(const Outcome &o)
    {
        QCOMPARE(o.profile.rows.size(), m_rules.rules.size());
        for (const Rule &rule : m_rules.rules) {
            const RuleProfileRow *row = rowOf(o.profile, rule.name);
            QVERIFY2(row, qPrintable(rule.name));
            QCOMPARE(row->file, rule.sourceFile);
            QCOMPARE(row->line, rule.line);
            const auto hits = o.reported.hits.find(rule.name);
            const auto files = o.reported.files.find(rule.name);
            QCOMPARE(row->hits, hits == o.reported.hits.end() ? 0 : hits->second);
            QCOMPARE(row->files, files == o.reported.files.end() ? 0 : files->second);
        }
    }

    // The slow rule first, for its one-byte atom and its many matches; the heavy condition measured.
    void checkRanking(const RuleProfile &profile, bool slowFirst)
    {
        const RuleProfileRow *slow = rowOf(profile, QStringLiteral("slow_byte"));
        QVERIFY(slow);
        if (slowFirst)
            QVERIFY2(profile.rows.front().name == QLatin1String("slow_byte"), qPrintable(describe(profile)));
        for (const char *cheap : { "cheap_one", "cheap_two", "cheap_three" })
            QVERIFY2(slow->totalMs() > rowOf(profile, QLatin1String(cheap))->totalMs(), qPrintable(describe(profile)));
        QVERIFY2(slow->reasons.size() >= 2, qPrintable(describe(profile)));
        QVERIFY2(slow->reasons.front().startsWith(QLatin1String("many matches: ")), qPrintable(describe(profile)));
        QVERIFY2(slow->reasons.contains(QStringLiteral("$a: its atom is 1 byte (\"x\"): it is checked wherever that "
                                                       "occurs")),
                 qPrintable(describe(profile)));
        // Its 200,000 steps against a test each: a margin for a cheap condition that the scheduler interrupts.
        const RuleProfileRow *heavy = rowOf(profile, QStringLiteral("heavy_condition"));
        QVERIFY(heavy->conditionMs > 0);
        for (const RuleProfileRow &row : profile.rows) {
            if (row.name != heavy->name)
                QVERIFY2(heavy->conditionMs > 2 * row.conditionMs, qPrintable(describe(profile)));
            if (row.name.startsWith(QLatin1String("cheap")))
                QVERIFY2(row.reasons.isEmpty(), qPrintable(describe(profile)));
        }
        for (size_t i = 1; i < profile.rows.size(); ++i)
            QVERIFY(profile.rows[i - 1].totalMs() >= profile.rows[i].totalMs());
    }

public:
    static void initMain() { useHeadlessPlatformIfNeeded(); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_dir = m_tmp.path() + QLatin1String("/files");
        // Two files of several MB with an 'x' every 16 bytes or so (no other x), the markers of the cheap rules in
        // a few small files, and a file with the heavy condition's string 40 times.
        QRandomGenerator rng(2912);
        for (int f = 0; f < 2; ++f) {
            QByteArray data(int(3 << 20) + f * 777, '\0');
            for (char &c : data)
                c = "abcdefghijklmnopqrstuvwyz .,\n"[rng.bounded(29)];
            for (qsizetype i = rng.bounded(16); i < data.size(); i += 8 + rng.bounded(16))
                data[i] = 'x';
            QVERIFY(TestUtil::writeFile(m_dir + QStringLiteral("/big%1.txt").arg(f), data));
        }
        QVERIFY(TestUtil::writeFile(m_dir + QLatin1String("/a.txt"), "one Distinctive-Marker-0042 two"));
        QVERIFY(TestUtil::writeFile(m_dir + QLatin1String("/b.txt"),
                                    "Another-Quiet-Marker-77 and Distinctive-Marker-0042"));
        QByteArray hello;
        for (int i = 0; i < 40; ++i)
            hello += "hello-world ";
        QVERIFY(TestUtil::writeFile(m_dir + QLatin1String("/c.txt"), hello));
        const QString rules = m_tmp.path() + QLatin1String("/rules.yar");
        QVERIFY(TestUtil::writeFile(
            rules, "rule cheap_one { strings: $c = \"Distinctive-Marker-0042\" condition: $c }\n"
                   "rule slow_byte { strings: $a = { 78 } condition: $a }\n"
                   "rule cheap_two { strings: $d = \"Another-Quiet-Marker-77\" condition: $d }\n"
                   "rule heavy_condition { strings: $h = \"hello-world\" condition: for all i in (1..#h) : "
                   "( for all j in (0..5000) : ( @h[i] + j >= 0 ) ) }\n"
                   "rule cheap_three { strings: $e = \"Never-Anywhere-Marker-31\" condition: $e }\n"));
        m_rules = RuleLoader::loadFiles({ rules });
        QVERIFY(m_rules.rejections.empty());
        QCOMPARE(m_rules.rules.size(), size_t(5));
        m_catalog = PatternCatalog::compile(m_rules);
    }

    // The reasons measured in a scan, from a row's figures alone (a merge of parts asks again on the sums).
    void measuredReasons_data()
    {
        QTest::addColumn<qint64>("hits");
        QTest::addColumn<qint64>("bytes");
        QTest::addColumn<double>("conditionMs");
        QTest::addColumn<double>("resolveMs");
        QTest::addColumn<QStringList>("reasons");
        QTest::addRow("nothing to say") << qint64(50) << qint64(1 << 20) << 0.5 << 0.5 << QStringList();
        QTest::addRow("over 10,000 matches") << qint64(20000) << qint64(1 << 30) << 0.0 << 0.0
                                             << QStringList { QStringLiteral("many matches: 20000 (one per 53687 bytes scanned)") };
        QTest::addRow("one per KiB") << qint64(2000) << qint64(1 << 20) << 0.0 << 0.0
                                     << QStringList { QStringLiteral("many matches: 2000 (one per 524 bytes scanned)") };
        QTest::addRow("a few in a tiny scan") << qint64(20) << qint64(100) << 0.0 << 0.0 << QStringList();
        QTest::addRow("a slow condition") << qint64(1) << qint64(1 << 20) << 30.0 << 10.0
                                          << QStringList { QStringLiteral("its condition: 75% of its time") };
        QTest::addRow("slow starts") << qint64(4) << qint64(1 << 20) << 0.0 << 80.0
                                     << QStringList { QStringLiteral("finding where its matches start: 100% of its time "
                                                                     "(20 ms a match)") };
        // Under 10 ms: what a loaded machine's scheduler alone can add to a rule of two quick matches.
        QTest::addRow("noise-sized starts") << qint64(2) << qint64(1 << 20) << 0.0 << 2.6 << QStringList();
        QTest::addRow("many quick starts") << qint64(40000) << qint64(1 << 30) << 0.0 << 80.0
                                           << QStringList { QStringLiteral("many matches: 40000 (one per 26843 bytes "
                                                                           "scanned)") };
    }

    void measuredReasons()
    {
        QFETCH(qint64, hits);
        QFETCH(qint64, bytes);
        QFETCH(double, conditionMs);
        QFETCH(double, resolveMs);
        QFETCH(QStringList, reasons);
        RuleProfileRow row;
        row.engineMs = 0.0;
        row.hits = hits;
        row.conditionMs = conditionMs;
        row.resolveMs = resolveMs;
        const QStringList got = RuleProfile::measuredReasons(row, bytes);
        QCOMPARE(got, reasons);
        for (const QString &r : got)
            QVERIFY(RuleProfile::isMeasuredReason(r));
        QVERIFY(!RuleProfile::isMeasuredReason(QStringLiteral("$a: its atom is 1 byte (\"x\"): it is checked wherever "
                                                               "that occurs")));
    }

    void offByDefaultAndOutputTheSame()
    {
        CpuEngine cpu;
        const Outcome plain = scan(cpu, false);
        QVERIFY(plain.profile.rows.empty());
        const Outcome profiled = scan(cpu, true);
        QCOMPARE(profiled.reported.lines, plain.reported.lines);
        QVERIFY(plain.reported.hits.at(QStringLiteral("slow_byte")) > 300000);
        // A scan after a profiled one, with the same engine, measures nothing again.
        QVERIFY(scan(cpu, false).profile.rows.empty());
    }

    void cpuEngine()
    {
        CpuEngine cpu;
        const Outcome o = scan(cpu, true);
        QVERIFY(o.summary.error.isEmpty());
        compareWithReported(o);
        QVERIFY(o.profile.engineSplit);
        for (const RuleProfileRow &row : o.profile.rows) {
            QVERIFY(row.engineMs.has_value());
            QCOMPARE(*row.engineMs, row.hostMs);
        }
        checkRanking(o.profile, true);
        const RuleProfileRow *slow = rowOf(o.profile, QStringLiteral("slow_byte"));
        QVERIFY2(*slow->engineMs > 0 && slow->resolveMs > 0, qPrintable(describe(o.profile)));
        // The engine's time of the one-byte string outweighs the three markers' together many times.
        double cheapEngine = 0;
        for (const char *cheap : { "cheap_one", "cheap_two", "cheap_three" })
            cheapEngine += *rowOf(o.profile, QLatin1String(cheap))->engineMs;
        QVERIFY2(*slow->engineMs > 5 * cheapEngine, qPrintable(describe(o.profile)));
    }

    void listRules()
    {
        // A literal list: no condition, one rule per line.
        const QString list = m_tmp.path() + QLatin1String("/iocs.txt");
        QVERIFY(TestUtil::writeFile(list, "x\nDistinctive-Marker-0042\nNever-Anywhere-Marker-31\n"));
        const RuleSet saved = std::exchange(m_rules, RuleLoader::loadFiles({ list }));
        m_catalog = PatternCatalog::compile(m_rules);
        CpuEngine cpu;
        const Outcome o = scan(cpu, true);
        compareWithReported(o);
        QCOMPARE(o.profile.rows.front().name, QStringLiteral("iocs:1"));
        QVERIFY2(o.profile.rows.front().reasons.contains(QStringLiteral("pattern: its atom is 1 byte (\"x\"): it is "
                                                                        "checked wherever that occurs")),
                 qPrintable(describe(o.profile)));
        QCOMPARE(rowOf(o.profile, QStringLiteral("iocs:2"))->files, 2);
        m_rules = saved;
        m_catalog = PatternCatalog::compile(m_rules);
    }

    void gpuEngine()
    {
        QString notice, error;
        std::unique_ptr<FallbackEngine> gpu = FallbackEngine::choose(true, lavapipe(), &notice, &error);
        if (!gpu)
            HITSCOPE_SKIP_WITHOUT_GPU(qPrintable(error));
        const Outcome o = scan(*gpu, true);
        QVERIFY(o.summary.error.isEmpty());
        compareWithReported(o);
        // The kernels are not split per rule: no engine time, whatever the host did.
        QVERIFY(!o.profile.engineSplit);
        for (const RuleProfileRow &row : o.profile.rows)
            QVERIFY(!row.engineMs.has_value());
        checkRanking(o.profile, false);
        CpuEngine cpu;
        const Outcome onCpu = scan(cpu, true);
        for (const RuleProfileRow &row : onCpu.profile.rows) {
            QCOMPARE(rowOf(o.profile, row.name)->hits, row.hits);
            QCOMPARE(rowOf(o.profile, row.name)->files, row.files);
        }

        // As the CLI and the GUI compile for the GPU: its kernel marks where the strings may be, and the host checks
        // there, per group: that share is measured per rule (hostMs), the one-byte string's the largest.
        CompileOptions tableless;
        tableless.tableless = true;
        const PatternCatalog saved = std::exchange(m_catalog, PatternCatalog::compile(m_rules, tableless));
        const Outcome screened = scan(*gpu, true);
        m_catalog = saved;
        compareWithReported(screened);
        QVERIFY(!screened.profile.engineSplit);
        const RuleProfileRow *slow = rowOf(screened.profile, QStringLiteral("slow_byte"));
        QVERIFY2(slow->hostMs > 0, qPrintable(describe(screened.profile)));
        for (const RuleProfileRow &row : screened.profile.rows)
            QVERIFY2(!row.engineMs && (row.name == slow->name || row.hostMs < slow->hostMs),
                     qPrintable(describe(screened.profile)));
        checkRanking(screened.profile, false);
    }

    void devicePoolSumsItsLanes()
    {
        // Two device objects scan batches side by side (Scanner::scanConcurrently): the sums are those of one.
        QString error;
        if (RhiDevice::vulkanDeviceCount(&error) < 1)
            HITSCOPE_SKIP_WITHOUT_GPU(qPrintable(error));
        QString notice;
        std::unique_ptr<DevicePool> pool = DevicePool::create({ 0, 0 }, true, lavapipe(), &notice, &error);
        QVERIFY2(pool, qPrintable(error));
        const Outcome o = scan(*pool, true, 256 << 10);
        QVERIFY(o.summary.error.isEmpty());
        QVERIFY(o.summary.batches > 8);
        compareWithReported(o);
        QVERIFY(!o.profile.engineSplit);
        checkRanking(o.profile, false);
    }
};

QTEST_MAIN(TestRuleProfile)
#include "tst_ruleprofile.moc"
