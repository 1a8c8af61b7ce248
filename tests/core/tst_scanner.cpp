// SPDX-License-Identifier: GPL-3.0-or-later
// The Scanner's pipeline on its own, around the CPU engine: every file reported once, in order, with the hits the
// oracle expects, whatever the batch and segment sizes; telemetry that adds up; an unbounded pattern's state
// carried from a batch to the next where a file spans them; launch parameters applied from a later batch;
// cancel; and an engine that fails part way: the batches before it are still reported, and the summary says why.
#include <algorithm>
#include <set>

#include <QTemporaryDir>
#include <QTest>

#include "automata/patterncatalog.h"
#include "cpu/cpuengine.h"
#include "rules/ruleloader.h"
#include "scan/scanner.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

// The CPU engine, failing from batch `failAt` on (-1: never), recording each batch's carry in.
class ProbeEngine : public Engine
{
public:
    QString name() const override { return QStringLiteral("probe"); }
    int scanBuffers() const override { return m_inner.scanBuffers(); }
    void setCountedPatterns(const std::vector<bool> &counted) override { m_inner.setCountedPatterns(counted); }
    bool scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
              const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error) override
    {
        ++calls;
        if (failAt >= 0 && batch.index >= failAt) {
            *error = QStringLiteral("probe failure at batch %1").arg(batch.index);
            return false;
        }
        if (std::any_of(carryIn.begin(), carryIn.end(), [](uint32_t s) { return s != 0; }))
            ++carriedIn;
        return m_inner.scan(batch, catalog, params, carryIn, result, error);
    }
    int failAt = -1;
    int calls = 0;
    int carriedIn = 0;

private:
    CpuEngine m_inner;
};

struct Outcome
{
    ScanSummary summary;
    QStringList files; // in the order reported
    std::set<std::tuple<QString, QString, int64_t, int64_t>> hits;
    std::vector<BatchTelemetry> batches;
};

} // namespace

class TestScanner : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    TestUtil::GeneratedCase m_case;
    RuleSet m_rules;
    PatternCatalog m_catalog;
    std::set<std::tuple<QString, QString, int64_t, int64_t>> m_expected;

    Outcome run(Engine &engine, const LaunchParams &params, Scanner **out = nullptr,
                const std::function<void(Scanner &, const BatchTelemetry &)> &onBatch = {})
    {
        Outcome o;
        Scanner scanner(m_rules, m_catalog, engine);
        if (out)
            *out = &scanner;
        Scanner::Callbacks cb;
        cb.fileDone = [&](const FileResult &fr) {
            o.files << QString::fromLocal8Bit(fr.path);
            for (const Hit &h : fr.hits)
                o.hits.insert({ m_rules.rules[size_t(m_rules.patterns[size_t(h.pattern)].ruleIndex)].name,
                                QString::fromLocal8Bit(fr.path), h.offset, h.length });
        };
        cb.batchDone = [&](const BatchTelemetry &t) {
            o.batches.push_back(t);
            if (onBatch)
                onBatch(scanner, t);
        };
        o.summary = scanner.run({ QFile::encodeName(m_case.dir) }, WalkOptions {}, params, cb);
        return o;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_case = TestUtil::generateCase(m_tmp.path(), 777, 5000);
        m_rules = RuleLoader::loadFiles({ m_case.literalsFile, m_case.regexesFile });
        QVERIFY(m_rules.rejections.empty());
        m_catalog = PatternCatalog::compile(m_rules);
        QVERIFY(m_catalog.unboundedGroups() > 0);
        m_expected = TestUtil::expectedHits(m_case);
        QVERIFY(m_expected.size() > 500);
    }

    void everyFileOnceWithTheOraclesHits_data()
    {
        QTest::addColumn<qint64>("batchBytes");
        QTest::addColumn<qint64>("segmentBytes");
        QTest::addRow("one large batch") << qint64(64 << 20) << qint64(256 << 10);
        QTest::addRow("batches of 64 KiB, segments of 3000 bytes") << qint64(64 << 10) << qint64(3000);
        QTest::addRow("batches of 16 KiB") << qint64(16 << 10) << qint64(1000);
    }

    void everyFileOnceWithTheOraclesHits()
    {
        QFETCH(qint64, batchBytes);
        QFETCH(qint64, segmentBytes);
        LaunchParams p;
        p.batchBytes = batchBytes;
        p.segmentBytes = segmentBytes;
        p.threads = 2;
        ProbeEngine engine;
        const Outcome o = run(engine, p);
        QVERIFY(o.summary.error.isEmpty());
        QCOMPARE(o.summary.files, int(m_case.files.size()));
        QStringList sorted = o.files;
        sorted.removeDuplicates();
        QCOMPARE(sorted.size(), o.files.size());
        QCOMPARE(o.files.size(), m_case.files.size());
        QCOMPARE(o.hits, m_expected);
        QCOMPARE(int(o.batches.size()), o.summary.batches);
        QCOMPARE(engine.calls, o.summary.batches);
        int64_t bytes = 0, hits = 0;
        for (const BatchTelemetry &t : o.batches) {
            bytes += t.bytes;
            hits += t.hits;
            // The batch timeline: each stage ends after it begins, and follows the one before it on the path.
            for (int k = 0; k < BatchTelemetry::NUM_STAGES; ++k) {
                QVERIFY(t.stages[k].ended >= t.stages[k].began);
                if (k > 0)
                    QVERIFY2(t.stages[k].began >= t.stages[k - 1].ended - 0.001,
                             qPrintable(QStringLiteral("batch %1, stage %2").arg(t.index).arg(k)));
            }
            QVERIFY(t.stages[BatchTelemetry::Resolve].ended > 0);
        }
        QCOMPARE(bytes, o.summary.bytes);
        QVERIFY(hits >= int64_t(o.hits.size()));
        if (batchBytes <= (64 << 10)) {
            QVERIFY(o.batches.size() > 3);
            // Files larger than a batch continue into the next: the unbounded groups' states go with them.
            QVERIFY(engine.carriedIn > 0);
        }
    }

    void paramsApplyFromALaterBatch()
    {
        LaunchParams p;
        p.batchBytes = 16 << 10;
        p.segmentBytes = 1000;
        p.threads = 1;
        ProbeEngine engine;
        bool changed = false;
        const Outcome o = run(engine, p, nullptr, [&](Scanner &scanner, const BatchTelemetry &) {
            if (!changed) {
                LaunchParams q = p;
                q.segmentBytes = 4000;
                q.threads = 2;
                scanner.setParams(q);
                changed = true;
            }
        });
        QCOMPARE(o.hits, m_expected);
        QVERIFY(o.batches.size() > 3);
        QVERIFY(std::any_of(o.batches.begin(), o.batches.end(), [](const BatchTelemetry &t) { return t.paramsChanged; }));
        QCOMPARE(o.batches.back().workerGroups, 2);
    }

    void cancelStopsEarly()
    {
        LaunchParams p;
        p.batchBytes = 16 << 10;
        p.segmentBytes = 1000;
        ProbeEngine engine;
        const Outcome o = run(engine, p, nullptr, [](Scanner &scanner, const BatchTelemetry &) { scanner.cancel(); });
        QVERIFY(o.summary.cancelled);
        QVERIFY(o.summary.error.isEmpty());
        QVERIFY(o.summary.files < int(m_case.files.size()));
        QVERIFY(o.summary.batches < 6);
    }

    void failingEngineStopsWithItsReason()
    {
        LaunchParams p;
        p.batchBytes = 16 << 10;
        p.segmentBytes = 1000;
        ProbeEngine engine;
        engine.failAt = 3;
        const Outcome o = run(engine, p);
        QVERIFY2(o.summary.error.contains(QLatin1String("probe failure at batch 3")), qPrintable(o.summary.error));
        // The batches before the failure are reported; nothing after it.
        QCOMPARE(int(o.batches.size()), 3);
        QVERIFY(!o.files.isEmpty());
        QVERIFY(o.files.size() < m_case.files.size());
        for (const auto &hit : o.hits)
            QVERIFY(m_expected.count(hit) == 1);
    }
};

QTEST_GUILESS_MAIN(TestScanner)
#include "tst_scanner.moc"
