// SPDX-License-Identifier: GPL-3.0-or-later
// The GPU engine against the CPU engine on the same batches: exactly the same hits, for every offered workgroup
// size and worker-group count, with a hit ring of capacity 1, across segment and batch boundaries; on whatever
// Vulkan the machine has (lavapipe in CI, which also checks Mesa's loop limit), with the validation layer on.
#include <memory>
#include <set>
#include <tuple>

#include <QGuiApplication>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "automata/patterncatalog.h"
#include "cpu/cpuengine.h"
#include "gpu/gpuengine.h"
#include "gpu/headlessplatform.h"
#include "rules/ruleloader.h"
#include "scan/scanner.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

using HitKey = std::tuple<QByteArray, int, int64_t, int64_t>;

struct ScanOutcome
{
    std::set<HitKey> hits;
    std::vector<BatchTelemetry> batches;
    std::vector<QString> notices;
    int files = 0;
};

ScanOutcome scanWith(Engine &engine, const RuleSet &rules, const PatternCatalog &catalog, const QString &dir,
                     const LaunchParams &params)
{
    ScanOutcome out;
    Scanner scanner(rules, catalog, engine);
    Scanner::Callbacks cb;
    cb.fileDone = [&](const FileResult &fr) {
        ++out.files;
        for (const Hit &h : fr.hits)
            out.hits.insert({ fr.path, h.pattern, h.offset, h.length });
    };
    cb.batchDone = [&](const BatchTelemetry &t) { out.batches.push_back(t); };
    cb.notice = [&](const QString &n) { out.notices.push_back(n); };
    scanner.run({ QFile::encodeName(dir) }, WalkOptions {}, params, cb);
    return out;
}

} // namespace

class TestGpuEngine : public QObject
{
    Q_OBJECT

public:
    static void initMain() { useHeadlessPlatformIfNeeded(); }

private:
    QTemporaryDir m_tmp;
    TestUtil::GeneratedCase m_case;
    RuleSet m_rules;
    PatternCatalog m_catalog;
    std::unique_ptr<GpuEngine> m_gpu;
    ScanOutcome m_cpu;
    LaunchParams m_base;

private Q_SLOTS:
    void initTestCase()
    {
        RhiDeviceOptions options;
        options.backend = GpuBackend::Vulkan;
        options.validation = true;
        QString error;
        m_gpu = GpuEngine::create(options, &error);
        if (!m_gpu)
            QSKIP(qPrintable(QStringLiteral("no Vulkan compute device: ") + error));
        RhiDevice::clearValidationMessages();

        m_case = TestUtil::generateCase(m_tmp.path(), 4242, 3000);
        // Thousands of literals on top of the generated lists: random words, many of them present.
        QRandomGenerator rng(99);
        QByteArray lits;
        for (int i = 0; i < 3000; ++i) {
            QByteArray w;
            const int len = 3 + rng.bounded(12);
            for (int k = 0; k < len; ++k)
                w += "abcdefghijklmnopqrstuvwxyz0123456789 -:/"[rng.bounded(40)];
            lits += w + '\n';
        }
        const QString many = m_tmp.path() + QLatin1String("/many.txt");
        QVERIFY(TestUtil::writeFile(many, lits));
        m_rules = RuleLoader::loadFiles({ m_case.literalsFile, m_case.regexesFile, many });
        m_catalog = PatternCatalog::compile(m_rules);
        QVERIFY(m_catalog.rejections.empty());
        QVERIFY2(m_catalog.groups.size() >= 2, "bounded and unbounded groups both");

        m_base.segmentBytes = 3000;
        m_base.batchBytes = 256 << 10; // large files are split across batches: unbounded state is carried
        m_base.threads = 2;
        CpuEngine cpu;
        m_cpu = scanWith(cpu, m_rules, m_catalog, m_case.dir, m_base);
        QVERIFY(m_cpu.hits.size() > 1000);
    }

    // QRhi resources go while the application and its Vulkan instance still exist.
    void cleanupTestCase() { m_gpu.reset(); }

    void init() { RhiDevice::clearValidationMessages(); }
    void cleanup()
    {
        QVERIFY2(RhiDevice::validationMessageCount() == 0,
                 qPrintable(RhiDevice::validationMessages().join(QLatin1Char('\n'))));
    }

    void sameHitsAsCpu_data()
    {
        QTest::addColumn<int>("workgroupSize");
        QTest::addColumn<int>("workerGroups");
        QTest::addColumn<qint64>("hitCapacity");
        for (int wg : { 32, 64, 128, 256, 512 })
            QTest::addRow("workgroup %d, automatic groups", wg) << wg << 0 << qint64(0);
        QTest::addRow("one worker group") << 64 << 1 << qint64(0);
        QTest::addRow("seven worker groups of 32") << 32 << 7 << qint64(0);
        QTest::addRow("hit ring of capacity 1") << 64 << 0 << qint64(1);
        QTest::addRow("hit ring of capacity 1, one group of 512") << 512 << 1 << qint64(1);
    }

    void sameHitsAsCpu()
    {
        QFETCH(int, workgroupSize);
        QFETCH(int, workerGroups);
        QFETCH(qint64, hitCapacity);
        LaunchParams p = m_base;
        p.workgroupSize = workgroupSize;
        p.workerGroups = workerGroups;
        p.hitCapacity = hitCapacity;
        p.timeoutMs = 0;
        const ScanOutcome gpu = scanWith(*m_gpu, m_rules, m_catalog, m_case.dir, p);
        QVERIFY2(gpu.notices.empty(), gpu.notices.empty() ? "" : qPrintable(gpu.notices.front()));
        QCOMPARE(gpu.files, m_cpu.files);
        QCOMPARE(gpu.hits.size(), m_cpu.hits.size());
        QVERIFY(gpu.hits == m_cpu.hits);
        for (const BatchTelemetry &t : gpu.batches) {
            QCOMPARE(t.engine, QStringLiteral("gpu"));
            QCOMPARE(t.workgroupSize, workgroupSize);
            if (workerGroups > 0)
                QCOMPARE(t.workerGroups, workerGroups);
            if (hitCapacity == 1 && t.hits > 1)
                QVERIFY2(t.hitsRerun >= t.hits, "a full ring must be re-run, never truncated");
        }
    }

    void unboundedMatchesSpanningManySegments()
    {
        // Matches far longer than the warm-up before each segment: the speculative segments disagree with the
        // true states, run again from them, and the result is still exactly the CPU's.
        QTemporaryDir tmp;
        QByteArray data(1000, 'x');
        data += ' ';
        for (int i = 0; i < 30000; ++i)
            data += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(i * 7) % 64];
        data += "== ab";
        data += QByteArray(9000, 'c');
        data += "f tail";
        QVERIFY(TestUtil::writeFile(tmp.path() + QLatin1String("/files/long.txt"), data));
        const QString tsv = tmp.path() + QLatin1String("/r.tsv");
        QVERIFY(TestUtil::writeFile(tsv, "-\tb64\t[A-Za-z0-9+/]{40,}={0,2}\n-\tabcf\tab(c|de)*f\n-\tword\t\\bc+f\\b\n"));
        const RuleSet rules = RuleLoader::loadFiles({ tsv });
        const PatternCatalog catalog = PatternCatalog::compile(rules);
        QVERIFY(catalog.rejections.empty());
        LaunchParams p = m_base;
        p.timeoutMs = 0;
        CpuEngine cpu;
        const ScanOutcome want = scanWith(cpu, rules, catalog, tmp.path() + QLatin1String("/files"), p);
        const ScanOutcome got = scanWith(*m_gpu, rules, catalog, tmp.path() + QLatin1String("/files"), p);
        QVERIFY(want.hits.size() > 30000);
        QCOMPARE(got.hits.size(), want.hits.size());
        QVERIFY(got.hits == want.hits);
        int64_t rerun = 0;
        for (const BatchTelemetry &t : got.batches)
            rerun += t.hitsRerun;
        QVERIFY2(rerun > 0, "segments whose speculative start disagreed must have run again");
    }

    void parameterChangeAppliesFromTheNextBatch()
    {
        LaunchParams p = m_base;
        p.timeoutMs = 0;
        Scanner scanner(m_rules, m_catalog, *m_gpu);
        std::vector<BatchTelemetry> batches;
        std::set<HitKey> hits;
        Scanner::Callbacks cb;
        cb.fileDone = [&](const FileResult &fr) {
            for (const Hit &h : fr.hits)
                hits.insert({ fr.path, h.pattern, h.offset, h.length });
        };
        cb.batchDone = [&](const BatchTelemetry &t) {
            batches.push_back(t);
            if (batches.size() == 1) {
                LaunchParams changed = p;
                changed.workgroupSize = 256;
                changed.workerGroups = 3;
                scanner.setParams(changed);
            }
        };
        scanner.run({ QFile::encodeName(m_case.dir) }, WalkOptions {}, p, cb);
        QVERIFY(batches.size() >= 4);
        QCOMPARE(batches[0].workgroupSize, 64);
        QVERIFY(!batches[0].paramsChanged);
        // Batch 0 is resolved while batch 1 may already run on the engine: the change applies from the next batch
        // launched, batch 1 or 2 (it may already have been packed, but it is launched with the new parameters),
        // and stays.
        size_t from = 1;
        if (batches[1].workgroupSize == 64) {
            QVERIFY(!batches[1].paramsChanged);
            from = 2;
        }
        for (size_t i = from; i < batches.size(); ++i) {
            QCOMPARE(batches[i].workgroupSize, 256);
            QCOMPARE(batches[i].workerGroups, 3);
            QCOMPARE(batches[i].paramsChanged, i == from);
        }
        QVERIFY(hits == m_cpu.hits);
    }

    void slowBatchesRunAgainOnTheCpu()
    {
        // A timeout no batch can meet: every batch is reported and re-run on the CPU engine; nothing is lost.
        LaunchParams p = m_base;
        p.timeoutMs = 1;
        const ScanOutcome got = scanWith(*m_gpu, m_rules, m_catalog, m_case.dir, p);
        QVERIFY(!got.notices.empty());
        QVERIFY2(got.notices.front().contains(QLatin1String("re-run on the CPU engine")), qPrintable(got.notices.front()));
        QCOMPARE(got.hits.size(), m_cpu.hits.size());
        QVERIFY(got.hits == m_cpu.hits);
        for (const BatchTelemetry &t : got.batches)
            QCOMPARE(t.engine, QStringLiteral("cpu (GPU fallback)"));
    }

    void telemetryInvariants()
    {
        LaunchParams p = m_base;
        p.timeoutMs = 0;
        // Other rules first: then the first batch of this scan must upload its tables, later batches not.
        // (One device per process: Qt 6.4 crashes when two Vulkan QRhis are destroyed in some orders.)
        const QString other = m_tmp.path() + QLatin1String("/other.txt");
        QVERIFY(TestUtil::writeFile(other, "just one literal\n"));
        const RuleSet otherRules = RuleLoader::loadFiles({ other });
        const PatternCatalog otherCatalog = PatternCatalog::compile(otherRules);
        QVERIFY(otherCatalog.fingerprint != m_catalog.fingerprint);
        const ScanOutcome first = scanWith(*m_gpu, otherRules, otherCatalog, m_case.dir, p);
        QVERIFY(first.batches.front().bytesUploadedTables > 0);
        GpuEngine *gpu = m_gpu.get();
        const ScanOutcome out = scanWith(*gpu, m_rules, m_catalog, m_case.dir, p);
        QVERIFY(out.batches.size() >= 3);
        QVERIFY(out.batches[0].bytesUploadedTables > 0);
        for (size_t i = 0; i < out.batches.size(); ++i) {
            const BatchTelemetry &t = out.batches[i];
            if (i > 0)
                QCOMPARE(t.bytesUploadedTables, int64_t(0));
            QCOMPARE(t.bytesMoved(), t.bytesUploadedData + t.bytesUploadedTables + t.bytesReadBack);
            QVERIFY(t.bytesUploadedData >= t.haystackBytes);
            QVERIFY(t.workItems >= t.segments);
            QVERIFY(t.occupancy > 0 && t.occupancy <= 1);
            QVERIFY(t.gpuMs > 0);
            QCOMPARE(t.backend, QStringLiteral("Vulkan"));
            QVERIFY(!t.device.isEmpty());
            if (i > 0)
                QVERIFY(t.pipelineCacheHits > 0);
        }
    }

    void noComputeDeviceGivesClearError()
    {
        // OpenGL needs a display: on the headless platform there is none.
        if (qEnvironmentVariableIsSet("DISPLAY"))
            QSKIP("a display is present: OpenGL may well work here");
        RhiDeviceOptions options;
        options.backend = GpuBackend::OpenGL;
        QString error;
        QVERIFY(!GpuEngine::create(options, &error));
        QVERIFY2(error.contains(QLatin1String("OpenGL")), qPrintable(error));
        QByteArray out, err;
        QCOMPARE(TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("gpu"),
                                    QStringLiteral("--backend"), QStringLiteral("opengl"), QStringLiteral("-r"),
                                    m_case.literalsFile, m_case.dir },
                                  &out, &err),
                 1);
        QVERIFY2(err.contains("no GPU engine") && err.contains("OpenGL"), err.constData());
        // Auto falls back to the CPU engine, with a notice, and still finds everything.
        QCOMPARE(TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("auto"),
                                    QStringLiteral("--backend"), QStringLiteral("opengl"), QStringLiteral("-r"),
                                    m_case.literalsFile, m_case.dir },
                                  &out, &err),
                 0);
        QVERIFY2(err.contains("using the CPU engine"), err.constData());
        QVERIFY(out.count('\n') > 10);
    }
};

QTEST_MAIN(TestGpuEngine)
#include "tst_gpuengine.moc"
