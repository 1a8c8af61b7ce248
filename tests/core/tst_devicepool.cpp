// SPDX-License-Identifier: GPL-3.0-or-later
// Several device objects as one engine (--devices): on lavapipe here, one device listed two and three times counts
// as two and three. A scan through the pool must report exactly one device's files, in the same order, with the
// same hits (and the oracle's), carried states included where files span batches; the telemetry says which
// device ran each batch; a cancel ends it cleanly. And the device list users type is parsed as documented.
#include <set>

#include <sys/stat.h>

#include <QTemporaryDir>
#include <QTest>

#include "automata/patterncatalog.h"
#include "engine/devicechoice.h"
#include "gpu/headlessplatform.h"
#include "gpu/rhidevice.h"
#include "rules/ruleloader.h"
#include "scan/scanner.h"
#include "session/devicepool.h"
#include "session/fallbackengine.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

struct Outcome
{
    ScanSummary summary;
    std::vector<std::pair<QString, std::vector<Hit>>> files; // in the order reported
    std::vector<BatchTelemetry> batches;
};

RhiDeviceOptions lavapipe()
{
    RhiDeviceOptions options;
    options.backend = GpuBackend::Vulkan;
    options.validation = true;
    return options;
}

} // namespace

class TestDevicePool : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    TestUtil::GeneratedCase m_case;
    RuleSet m_rules;
    PatternCatalog m_catalog;

    Outcome run(Engine &engine, int64_t batchBytes, bool cancelAfterFirst = false)
    {
        Outcome o;
        Scanner scanner(m_rules, m_catalog, engine);
        Scanner::Callbacks cb;
        cb.fileDone = [&](const FileResult &fr) { o.files.push_back({ QString::fromLocal8Bit(fr.path), fr.hits }); };
        cb.batchDone = [&](const BatchTelemetry &t) {
            o.batches.push_back(t);
            if (cancelAfterFirst)
                scanner.cancel();
        };
        LaunchParams params;
        params.batchBytes = batchBytes;
        params.segmentBytes = 1000;
        params.rampBatches = false;
        o.summary = scanner.run({ QFile::encodeName(m_case.dir) }, WalkOptions {}, params, cb);
        return o;
    }

public:
    static void initMain() { useHeadlessPlatformIfNeeded(); }

private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        if (RhiDevice::vulkanDeviceCount(&error) < 1)
            HITSCOPE_SKIP_WITHOUT_GPU(qPrintable(QStringLiteral("no Vulkan device: ") + error));
        m_case = TestUtil::generateCase(m_tmp.path(), 31337, 4000);
        // The walk ends with an entry that is a problem alone: its batch holds no file.
        QVERIFY(::mkfifo(QFile::encodeName(m_case.dir + QLatin1String("/zz_pipe")).constData(), 0644) == 0);
        m_rules = RuleLoader::loadFiles({ m_case.literalsFile, m_case.regexesFile });
        QVERIFY(m_rules.rejections.empty());
        m_catalog = PatternCatalog::compile(m_rules);
        // Unbounded patterns: their states are carried where a file spans batches, across devices.
        QVERIFY(m_catalog.unboundedGroups() > 0);
    }

    void sameFilesInTheSameOrderAsOneDevice_data()
    {
        QTest::addColumn<int>("objects");
        QTest::addColumn<qint64>("batchBytes");
        QTest::addRow("two objects, batches of 64 KiB") << 2 << qint64(64 << 10);
        QTest::addRow("three objects, batches of 16 KiB") << 3 << qint64(16 << 10);
    }

    void sameFilesInTheSameOrderAsOneDevice()
    {
        QFETCH(int, objects);
        QFETCH(qint64, batchBytes);
        QString notice, error;
        std::unique_ptr<FallbackEngine> one = FallbackEngine::choose(true, lavapipe(), &notice, &error);
        QVERIFY2(one, qPrintable(error));
        const Outcome single = run(*one, batchBytes);
        one.reset();

        std::unique_ptr<DevicePool> pool
            = DevicePool::create(std::vector<int>(size_t(objects), 0), true, lavapipe(), &notice, &error);
        QVERIFY2(pool, qPrintable(error));
        QCOMPARE(pool->devices(), objects);
        QCOMPARE(pool->concurrentScans(), objects);
        const Outcome pooled = run(*pool, batchBytes);
        QVERIFY2(pooled.summary.error.isEmpty(), qPrintable(pooled.summary.error));
        QCOMPARE(pooled.summary.problems, 1); // the FIFO
        QCOMPARE(single.summary.problems, 1);

        QCOMPARE(qsizetype(single.files.size()), m_case.files.size());
        QCOMPARE(pooled.files.size(), single.files.size());
        for (size_t i = 0; i < single.files.size(); ++i) {
            QCOMPARE(pooled.files[i].first, single.files[i].first);
            QVERIFY2(pooled.files[i].second == single.files[i].second, qPrintable(single.files[i].first));
        }
        // The oracle's hits, through the pool.
        std::set<std::tuple<QString, QString, int64_t, int64_t>> hits;
        for (const auto &[path, fileHits] : pooled.files)
            for (const Hit &h : fileHits)
                hits.insert({ m_rules.rules[size_t(m_rules.patterns[size_t(h.pattern)].ruleIndex)].name, path,
                              h.offset, h.length });
        QVERIFY(hits == TestUtil::expectedHits(m_case));
        QCOMPARE(pooled.summary.hits, single.summary.hits);
        QCOMPARE(pooled.batches.size(), single.batches.size());
        // Which device ran each batch: every batch names one of the pool's, and more than one ran batches.
        std::set<int> slots;
        int previous = -1;
        for (const BatchTelemetry &t : pooled.batches) {
            QVERIFY(t.deviceSlot >= 0 && t.deviceSlot < objects);
            slots.insert(t.deviceSlot);
            QCOMPARE(t.index, previous + 1); // reported in order
            previous = t.index;
        }
        QVERIFY2(slots.size() >= 2, "the batches should be dealt to more than one device");
        QCOMPARE(RhiDevice::validationMessageCount(), 0);
    }

    void cancelEndsThePoolsScan()
    {
        QString notice, error;
        std::unique_ptr<DevicePool> pool = DevicePool::create({ 0, 0 }, true, lavapipe(), &notice, &error);
        QVERIFY2(pool, qPrintable(error));
        const Outcome o = run(*pool, 16 << 10, true);
        QVERIFY(o.summary.cancelled);
        QVERIFY(o.summary.error.isEmpty());
        QVERIFY(qsizetype(o.files.size()) < m_case.files.size());
        // A second scan with the same pool runs to the end.
        const Outcome again = run(*pool, 64 << 10);
        QCOMPARE(qsizetype(again.files.size()), m_case.files.size());
    }

    void softwareDevicesAreLeftOutUnlessRequired()
    {
        QString notice, error;
        const std::vector<int> hardware = RhiDevice::hardwareVulkanDevices(&error);
        std::unique_ptr<DevicePool> pool = DevicePool::create({ 0, 0 }, false, lavapipe(), &notice, &error);
        if (!hardware.empty())
            QSKIP("device 0 is a hardware GPU here");
        // As FallbackEngine::choose: the auto engine is told why and scans on the CPU; no error.
        QVERIFY(!pool);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY2(notice.contains(QLatin1String("software renderer")) && notice.contains(QLatin1String("CPU engine")),
                 qPrintable(notice));
    }

    void deviceListsAsUsersTypeThem_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<bool>("all");
        QTest::addColumn<QString>("canonical");
        QTest::addRow("all") << QStringLiteral("all") << true << true << QStringLiteral("all");
        QTest::addRow("empty is all") << QString() << true << true << QStringLiteral("all");
        QTest::addRow("ALL") << QStringLiteral("ALL") << true << true << QStringLiteral("all");
        QTest::addRow("one") << QStringLiteral("1") << true << false << QStringLiteral("1");
        QTest::addRow("twice") << QStringLiteral("0, 0,1") << true << false << QStringLiteral("0,0,1");
        QTest::addRow("negative") << QStringLiteral("-1") << false << false << QString();
        QTest::addRow("words") << QStringLiteral("gpu0") << false << false << QString();
        QTest::addRow("trailing comma") << QStringLiteral("0,") << false << false << QString();
    }

    void deviceListsAsUsersTypeThem()
    {
        QFETCH(QString, text);
        QFETCH(bool, ok);
        QFETCH(bool, all);
        QFETCH(QString, canonical);
        DeviceChoice choice;
        QString error;
        QCOMPARE(DeviceChoice::parse(text, &choice, &error), ok);
        if (!ok) {
            QVERIFY2(error.contains(text), qPrintable(error));
            return;
        }
        QCOMPARE(choice.all, all);
        QCOMPARE(choice.toString(), canonical);
    }
};

QTEST_MAIN(TestDevicePool)
#include "tst_devicepool.moc"
