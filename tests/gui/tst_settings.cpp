// SPDX-License-Identifier: GPL-3.0-or-later
// Settings (persisted through QSettings, compare-before-emit) and LatencyProbe.
#include <QDir>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QThread>
#include <QTimer>

#include "latencyprobe.h"
#include "settings.h"

using namespace Hitscope;

class TestSettings : public QObject
{
    Q_OBJECT
public:
    static void initMain()
    {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        qputenv("QT_FONT_DPI", "96");
        // Before the first QSettings: test mode sends it to ~/.qttest, away from the user's own settings.
        QStandardPaths::setTestModeEnabled(true);
    }

private Q_SLOTS:
    void init();
    void cleanupTestCase();
    void testLaunchParamsRoundTrip();
    void testEngineAndRuleFiles();
    void testSignalsOnlyOnChange();
    void testRecentFoldersCappedAndOrdered();
    void testBackendAndChartsOpenGl();
    void testLatencyProbeSeesBlockedLoop();

private:
    static QSettings fresh() { return QSettings(QStringLiteral("Hitscope"), QStringLiteral("hitscope")); }
    static void wipe()
    {
        QSettings s = fresh();
        s.clear();
        s.sync();
        Settings::instance()->reload();
    }
};

void TestSettings::init()
{
    wipe();
    QVERIFY(fresh().allKeys().isEmpty());
}

void TestSettings::cleanupTestCase()
{
    wipe();
}

void TestSettings::testLaunchParamsRoundTrip()
{
    Settings *settings = Settings::instance();
    // A new user's batch and segment sizes are the engine's (0: automatic), the rest as LaunchParams has them.
    LaunchParams automatic;
    automatic.batchBytes = 0;
    automatic.segmentBytes = 0;
    QCOMPARE(Settings::defaultLaunchParams(), automatic);
    QCOMPARE(settings->launchParams(), automatic);

    LaunchParams p;
    p.batchBytes = 8 << 20;
    p.segmentBytes = 64 << 10;
    p.threads = 3;
    p.workgroupSize = 128;
    p.workerGroups = 7;
    p.hitCapacity = 4096;
    p.timeoutMs = 2500;
    settings->setLaunchParams(p);
    QCOMPARE(settings->launchParams(), p);

    const QSettings s = fresh();
    QCOMPARE(s.value(QStringLiteral("LaunchParams/batchBytes")).toLongLong(), qlonglong(p.batchBytes));
    QCOMPARE(s.value(QStringLiteral("LaunchParams/segmentBytes")).toLongLong(), qlonglong(p.segmentBytes));
    QCOMPARE(s.value(QStringLiteral("LaunchParams/threads")).toInt(), 3);
    QCOMPARE(s.value(QStringLiteral("LaunchParams/workgroupSize")).toInt(), 128);
    QCOMPARE(s.value(QStringLiteral("LaunchParams/workerGroups")).toInt(), 7);
    QCOMPARE(s.value(QStringLiteral("LaunchParams/hitCapacity")).toLongLong(), qlonglong(4096));
    QCOMPARE(s.value(QStringLiteral("LaunchParams/timeoutMs")).toInt(), 2500);

    settings->reload();
    QCOMPARE(settings->launchParams(), p);

    // Automatic sizes survive a restart, and so do the other parameters saved with them (0 was once taken for
    // a corrupt file, and every parameter went back to its default).
    p.batchBytes = 0;
    p.segmentBytes = 0;
    settings->setLaunchParams(p);
    settings->reload();
    QCOMPARE(settings->launchParams(), p);
    // A corrupt file still does not reach the engines.
    {
        QSettings s = fresh();
        s.setValue(QStringLiteral("LaunchParams/batchBytes"), qlonglong(-5));
    }
    settings->reload();
    QCOMPARE(settings->launchParams(), automatic);
}

void TestSettings::testEngineAndRuleFiles()
{
    Settings *settings = Settings::instance();
    QCOMPARE(settings->engine(), EngineChoice::Auto);
    settings->setEngine(EngineChoice::Cpu);
    QCOMPARE(fresh().value(QStringLiteral("Engine/choice")).toString(), QStringLiteral("cpu"));

    const QVector<RuleFileSetting> rules{{QStringLiteral("/rules/a.txt"), true},
                                         {QStringLiteral("/rules/b.yar"), false},
                                         {QStringLiteral("/rules/c.tsv"), true}};
    settings->setRuleFiles(rules);
    const QSettings s = fresh();
    QCOMPARE(s.value(QStringLiteral("RuleSets/files")).toStringList(),
             (QStringList{QStringLiteral("/rules/a.txt"), QStringLiteral("/rules/b.yar"), QStringLiteral("/rules/c.tsv")}));
    QCOMPARE(s.value(QStringLiteral("RuleSets/disabled")).toStringList(), QStringList{QStringLiteral("/rules/b.yar")});

    settings->reload();
    QCOMPARE(settings->engine(), EngineChoice::Cpu);
    QCOMPARE(settings->ruleFiles(), rules);
}

void TestSettings::testSignalsOnlyOnChange()
{
    Settings *settings = Settings::instance();
    QSignalSpy params(settings, &Settings::launchParamsChanged);
    QSignalSpy engine(settings, &Settings::engineChanged);
    QSignalSpy rules(settings, &Settings::ruleFilesChanged);
    QSignalSpy recent(settings, &Settings::recentFoldersChanged);

    settings->setLaunchParams(Settings::defaultLaunchParams()); // the default is the current value
    settings->setEngine(EngineChoice::Auto);
    settings->setRuleFiles({});
    settings->setRecentFolders({});
    QCOMPARE(params.count(), 0);
    QCOMPARE(engine.count(), 0);
    QCOMPARE(rules.count(), 0);
    QCOMPARE(recent.count(), 0);

    LaunchParams p = Settings::defaultLaunchParams();
    p.threads = 2;
    settings->setLaunchParams(p);
    settings->setLaunchParams(p);
    QCOMPARE(params.count(), 1);
    QCOMPARE(params.at(0).at(0).value<LaunchParams>(), p);

    settings->setEngine(EngineChoice::Gpu);
    settings->setEngine(EngineChoice::Gpu);
    QCOMPARE(engine.count(), 1);

    const QVector<RuleFileSetting> r{{QStringLiteral("/r.txt"), true}};
    settings->setRuleFiles(r);
    settings->setRuleFiles(r);
    QCOMPARE(rules.count(), 1);
    settings->setRuleFiles({{QStringLiteral("/r.txt"), false}}); // only the flag changes: still a change
    QCOMPARE(rules.count(), 2);

    settings->addRecentFolder(QStringLiteral("/data/a"));
    settings->addRecentFolder(QStringLiteral("/data/a")); // already the most recent
    QCOMPARE(recent.count(), 1);
}

void TestSettings::testRecentFoldersCappedAndOrdered()
{
    Settings *settings = Settings::instance();
    for (int i = 0; i < 15; ++i)
        settings->addRecentFolder(QStringLiteral("/data/f%1").arg(i));
    QStringList expected;
    for (int i = 14; i >= 5; --i)
        expected.push_back(QStringLiteral("/data/f%1").arg(i));
    QCOMPARE(int(settings->recentFolders().size()), Settings::kMaxRecentFolders);
    QCOMPARE(settings->recentFolders(), expected);
    QCOMPARE(fresh().value(QStringLiteral("Targets/recentFolders")).toStringList(), expected);

    // Re-adding an older one moves it to the front without duplicating it; paths are cleaned.
    settings->addRecentFolder(QStringLiteral("/data/f9/"));
    expected.removeAll(QStringLiteral("/data/f9"));
    expected.prepend(QStringLiteral("/data/f9"));
    QCOMPARE(settings->recentFolders(), expected);
    QCOMPARE(fresh().value(QStringLiteral("Targets/recentFolders")).toStringList(), expected);

    settings->reload();
    QCOMPARE(settings->recentFolders(), expected);
}

void TestSettings::testBackendAndChartsOpenGl()
{
    Settings *settings = Settings::instance();
    QCOMPARE(settings->backend(), GpuBackend::Auto);
    QCOMPARE(settings->chartsOpenGl(), false); // off by default
    QSignalSpy backend(settings, &Settings::backendChanged);
    QSignalSpy openGl(settings, &Settings::chartsOpenGlChanged);

    settings->setBackend(GpuBackend::Vulkan);
    settings->setBackend(GpuBackend::Vulkan);
    QCOMPARE(backend.count(), 1);
    // The CLI's spelling, so a settings file reads like a command line.
    QCOMPARE(fresh().value(QStringLiteral("Engine/backend")).toString(), QStringLiteral("vulkan"));
    settings->setBackend(GpuBackend::Null); // a test device, never a user's choice: Auto
    QCOMPARE(settings->backend(), GpuBackend::Auto);

    settings->setBackend(GpuBackend::OpenGL);
    settings->setChartsOpenGl(true);
    settings->setChartsOpenGl(true);
    QCOMPARE(openGl.count(), 1);
    settings->reload();
    QCOMPARE(settings->backend(), GpuBackend::OpenGL);
    QCOMPARE(settings->chartsOpenGl(), true);

    // A hand-edited file with an unknown backend falls back to Auto.
    QSettings s = fresh();
    s.setValue(QStringLiteral("Engine/backend"), QStringLiteral("metal"));
    s.sync();
    settings->reload();
    QCOMPARE(settings->backend(), GpuBackend::Auto);
}

void TestSettings::testLatencyProbeSeesBlockedLoop()
{
    LatencyProbe probe;
    QCOMPARE(probe.stats().samples, 0);
    probe.start();
    QVERIFY(probe.isRunning());
    QTimer::singleShot(100, &probe, [] { QThread::msleep(50); }); // the event loop is stuck for ~50 ms once
    QTest::qWait(300);
    probe.stop();
    QVERIFY(!probe.isRunning());

    const LatencyProbe::Stats s = probe.stats();
    qInfo("p50=%.2f p99=%.2f max=%.2f samples=%d", s.p50Ms, s.p99Ms, s.maxMs, s.samples);
    QVERIFY(s.samples > 0);
    QVERIFY2(s.maxMs >= 35, qPrintable(QString::number(s.maxMs)));
    QVERIFY2(s.maxMs < 1000, qPrintable(QString::number(s.maxMs)));
    // Fewer than 100 samples: the 99th percentile is the worst one.
    QVERIFY(s.samples < 100);
    QCOMPARE(s.p99Ms, s.maxMs);
    QVERIFY(s.p50Ms < s.p99Ms);

    // A new start forgets the earlier run.
    probe.start();
    QTest::qWait(60);
    probe.stop();
    QVERIFY(probe.stats().samples < s.samples);
}

QTEST_MAIN(TestSettings)
#include "tst_settings.moc"
