// SPDX-License-Identifier: GPL-3.0-or-later
#include <set>
#include <tuple>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QClipboard>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QDir>
#include <QFileInfo>
#include <QDragEnterEvent>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTabWidget>
#include <QTest>

#include "batchcharts.h"
#include "batchtimeline.h"
#include "dropzone.h"
#include "hexview.h"
#include "hitsview.h"
#include "launchparamspanel.h"
#include "mainwindow.h"
#include "report/hitexporter.h"
#include "problemspanel.h"
#include "qcustomplotinclude.h"
#include "report/filestablemodel.h"
#include "report/hitstablemodel.h"
#include "report/rulesummarymodel.h"
#include "report/telemetrylog.h"
#include "codeeditor.h"
#include "diagnosticslist.h"
#include "profileview.h"
#include "report/ruleprofilemodel.h"
#include "filesview.h"
#include "ruleeditor.h"
#include "ruletestpanel.h"
#include "rulesetpanel.h"
#include "session/scanjob.h"
#include "settings.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

/// Sets `*shown` when `widget` is shown.
class ShowWatcher : public QObject
{
public:
    ShowWatcher(QWidget *widget, bool *shown)
        : m_shown(shown)
    {
        widget->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject *, QEvent *event) override
    {
        if (event->type() == QEvent::Show)
            *m_shown = true;
        return false;
    }

private:
    bool *m_shown;
};

using HitKey = std::tuple<QString, QString, QString, qint64, qint64>; // file, rule, string, offset, length

// What a file manager does: a drag carrying text/uri-list enters the zone, then drops.
bool dropUrls(QWidget *target, const QList<QUrl> &urls)
{
    QMimeData mime;
    mime.setUrls(urls);
    const QPoint pos = target->rect().center();
    QDragEnterEvent enter(pos, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(target, &enter);
    if (!enter.isAccepted())
        return false;
    QDropEvent drop(QPointF(pos), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(target, &drop);
    return drop.isAccepted();
}

std::set<HitKey> cliHits(const QStringList &rules, const QString &path, qint64 batchBytes)
{
    QStringList args{QStringLiteral("scan"), QStringLiteral("--json"), QStringLiteral("--engine"), QStringLiteral("cpu"),
                     QStringLiteral("--batch-bytes"), QString::number(batchBytes)};
    for (const QString &r : rules)
        args << QStringLiteral("--rules") << r;
    args << path;
    QByteArray out, err;
    const int rc = TestUtil::runCli(args, &out, &err);
    if (rc != 0 && rc != 2)
        qWarning() << "hitscope-cli failed" << rc << err;
    std::set<HitKey> hits;
    const QList<QByteArray> lines = out.split('\n');
    for (const QByteArray &line : lines) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.value(QLatin1String("type")).toString() != QLatin1String("hit"))
            continue;
        hits.insert({o.value(QLatin1String("file")).toString(), o.value(QLatin1String("rule")).toString(),
                     o.value(QLatin1String("string")).toString(),
                     qint64(o.value(QLatin1String("offset")).toDouble()),
                     qint64(o.value(QLatin1String("length")).toDouble())});
    }
    return hits;
}

std::set<HitKey> tableHits(const HitsTableModel *model)
{
    std::set<HitKey> hits;
    for (int i = 0; i < model->totalHits(); ++i) {
        const HitRow &h = model->hit(i);
        hits.insert({QString::fromUtf8(h.path), h.rule, h.string, h.offset, h.length});
    }
    return hits;
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT
public:
    // Forced platform and dpi: GUI tests must not depend on the desktop they run on.
    static void initMain()
    {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        qputenv("QT_FONT_DPI", "96");
    }

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void testTitleAndIdleState();
    void testBatchSizeAutomaticByDefault();
    void testDropAcceptsLocalUrlsOnly();
    void testDropScanMatchesCli();
    void testParamsChangeIsMarked();
    void testCancelStops();
    void testMissingTargetIsReported();
    void testFilterDebounced();
    void testUnavailableBackendIsExplained_data();
    void testUnavailableBackendIsExplained();
    void testChartsOpenGlWithoutGl();
    void testRecentFoldersMenu();
    void testExportHitsInBackground();
    void testExportCancelledFromTheDialog();
    void testExternalsReachTheRules();
    void testTwoDevicesOneSeriesEach();
    void testTimelineStagesAndSelection();
    void testRuleEditorTestsTheSelectedFiles();
    void testProfileTabAndCostWarnings();

private:
    void prepareScan(const QString &folder, qint64 batchBytes);

    QTemporaryDir m_tmp;
    TestUtil::GeneratedCase m_case;
    QString m_bigDir;
    std::unique_ptr<MainWindow> m_window;
};

void TestMainWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_tmp.isValid());
    m_case = TestUtil::generateCase(m_tmp.filePath(QStringLiteral("case")), 7, 4096);
    QVERIFY(!m_case.files.isEmpty());

    // Enough bytes that a scan with small batches is still running when Cancel arrives.
    m_bigDir = m_tmp.filePath(QStringLiteral("big"));
    QRandomGenerator rng(42);
    for (int i = 0; i < 32; ++i) {
        QByteArray data(3 << 19, Qt::Uninitialized);
        for (char &c : data)
            c = char('a' + rng.bounded(26));
        QVERIFY(TestUtil::writeFile(m_bigDir + QStringLiteral("/f%1.txt").arg(i), data));
    }
}

void TestMainWindow::init()
{
    m_window = std::make_unique<MainWindow>();
    // Qt 6.4's offscreen platform cannot create Vulkan instances: use the CPU engine.
    m_window->launchParamsPanel()->setEngine(EngineChoice::Cpu);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
}

void TestMainWindow::cleanup()
{
    if (m_window && m_window->isScanning()) {
        QSignalSpy failed(m_window->scanJob(), &ScanJob::failed);
        m_window->onCancel();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
    }
    m_window.reset();
}

void TestMainWindow::prepareScan(const QString &folder, qint64 batchBytes)
{
    m_window->ruleSetPanel()->addRuleFiles({m_case.literalsFile, m_case.regexesFile});
    LaunchParams params = m_window->launchParamsPanel()->params();
    params.batchBytes = batchBytes;
    m_window->launchParamsPanel()->setParams(params);
    QVERIFY(dropUrls(m_window->dropZone(), {QUrl::fromLocalFile(folder)}));
    QCOMPARE(m_window->dropZone()->paths(), QStringList{QDir::cleanPath(folder)});
    QVERIFY(m_window->scanAction()->isEnabled());
}

void TestMainWindow::testTitleAndIdleState()
{
    QVERIFY(m_window->windowTitle().contains(QLatin1String("Hitscope")));
    QVERIFY(!m_window->scanAction()->isEnabled()); // nothing to scan yet
    QVERIFY(!m_window->cancelAction()->isEnabled());
}

void TestMainWindow::testBatchSizeAutomaticByDefault()
{
    // A new window's batch and segment sizes are Automatic (the engine's, as the CLI's defaults). A size typed
    // in is taken, and typing the word again goes back to it.
    LaunchParamsPanel *panel = m_window->launchParamsPanel();
    auto *box = panel->findChild<QSpinBox *>(QStringLiteral("batchSize"));
    QVERIFY(box);
    QCOMPARE(box->text(), QStringLiteral("Automatic"));
    QCOMPARE(panel->params().batchBytes, qint64(0));
    QCOMPARE(panel->params().segmentBytes, qint64(0));
    box->selectAll();
    QTest::keyClicks(box, QStringLiteral("8m"));
    QTest::keyClick(box, Qt::Key_Return);
    QCOMPARE(panel->params().batchBytes, qint64(8) << 20);
    QCOMPARE(box->text(), QStringLiteral("8 MiB"));
    box->selectAll();
    QTest::keyClicks(box, QStringLiteral("Automatic"));
    QTest::keyClick(box, Qt::Key_Return);
    QCOMPARE(panel->params().batchBytes, qint64(0));
}

void TestMainWindow::testDropAcceptsLocalUrlsOnly()
{
    QVERIFY(!dropUrls(m_window->dropZone(), {QUrl(QStringLiteral("https://example.com/x"))}));
    QVERIFY(m_window->dropZone()->paths().isEmpty());
    // Two drops of the same folder list it once.
    QVERIFY(dropUrls(m_window->dropZone(), {QUrl::fromLocalFile(m_case.dir), QUrl::fromLocalFile(m_case.dir)}));
    QCOMPARE(m_window->dropZone()->paths().size(), 1);
}

void TestMainWindow::testDropScanMatchesCli()
{
    const qint64 batchBytes = 64 << 10;
    prepareScan(m_case.dir, batchBytes);
    QAbstractItemModelTester modelTester(m_window->hitsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxyTester(m_window->hitsView()->proxy(),
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);

    QSignalSpy finished(m_window->scanJob(), &ScanJob::finished);
    QSignalSpy failed(m_window->scanJob(), &ScanJob::failed);
    QSignalSpy batches(m_window->scanJob(), &ScanJob::batchFinished);
    m_window->scanAction()->trigger();
    QVERIFY(m_window->isScanning());
    QVERIFY(m_window->cancelAction()->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 300000);
    QCOMPARE(failed.count(), 0);
    QVERIFY(!m_window->isScanning());

    const std::set<HitKey> expected = cliHits({m_case.literalsFile, m_case.regexesFile}, m_case.dir, batchBytes);
    QVERIFY(!expected.empty());
    const std::set<HitKey> got = tableHits(m_window->hitsModel());
    QCOMPARE(m_window->hitsModel()->totalHits(), int(got.size())); // no duplicates
    QCOMPARE(got.size(), expected.size());
    QVERIFY(got == expected);
    QCOMPARE(finished.first().at(2).toLongLong(), qint64(expected.size()));

    // The per-rule summary counts what the table holds: hits, and distinct files.
    QHash<QString, std::pair<qint64, QSet<QString>>> perRule;
    for (const HitKey &h : got) {
        ++perRule[std::get<1>(h)].first;
        perRule[std::get<1>(h)].second.insert(std::get<0>(h));
    }
    const RuleSummaryModel *summary = m_window->ruleSummaryModel();
    QCOMPARE(summary->rowCount(), int(perRule.size()));
    for (int r = 0; r < summary->rowCount(); ++r) {
        const auto it = perRule.constFind(summary->rule(r));
        QVERIFY(it != perRule.cend());
        QCOMPARE(summary->hits(r), it->first);
        QCOMPARE(summary->files(r), qint64(it->second.size()));
    }

    // The Files tab: one row per file with hits (list rules match a file when any of their strings does).
    std::set<QString> matchedFiles;
    for (const HitKey &h : got)
        matchedFiles.insert(std::get<0>(h));
    const FilesTableModel *files = m_window->filesModel();
    QCOMPARE(files->rowCount(), int(matchedFiles.size()));
    for (int r = 0; r < files->rowCount(); ++r)
        QVERIFY(matchedFiles.count(QString::fromUtf8(files->verdict(r).path)));
    QCOMPARE(m_window->resultTabs()->tabText(0), QStringLiteral("Files (%1)").arg(files->rowCount()));

    // One chart point per batch.
    QVERIFY2(batches.count() > 1, "the case should need several batches");
    QCOMPARE(m_window->charts()->pointCount(), batches.count());
    for (int m = 0; m < BatchCharts::NUM_METRICS; ++m)
        QCOMPARE(m_window->charts()->graph(BatchCharts::Metric(m))->dataCount(), int(std::min<qsizetype>(batches.count(), 301)));
}

void TestMainWindow::testParamsChangeIsMarked()
{
    prepareScan(m_bigDir, 64 << 10);
    QSignalSpy finished(m_window->scanJob(), &ScanJob::finished);
    QSignalSpy failed(m_window->scanJob(), &ScanJob::failed);
    QSignalSpy batches(m_window->scanJob(), &ScanJob::batchFinished);
    m_window->scanAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(batches.count() >= 1, 60000);
    LaunchParams params = m_window->launchParamsPanel()->params();
    params.batchBytes = 256 << 10;
    m_window->launchParamsPanel()->setParams(params); // applies from the next batch
    QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, 300000);
    QCOMPARE(failed.count(), 0);
    int changed = 0;
    for (const QList<QVariant> &args : std::as_const(batches))
        changed += args.at(0).value<BatchTelemetry>().paramsChanged ? 1 : 0;
    QCOMPARE(changed, 1);
    QCOMPARE(m_window->charts()->markerCount(), 1);
}

void TestMainWindow::testCancelStops()
{
    prepareScan(m_bigDir, 64 << 10);
    QSignalSpy finished(m_window->scanJob(), &ScanJob::finished);
    QSignalSpy failed(m_window->scanJob(), &ScanJob::failed);
    QSignalSpy batches(m_window->scanJob(), &ScanJob::batchFinished);
    m_window->scanAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(batches.count() >= 1, 60000);
    m_window->cancelAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
    QTest::qWait(200); // nothing may follow the failure
    QCOMPARE(finished.count(), 0);
    QCOMPARE(failed.count(), 1);
    QVERIFY(failed.first().at(0).toString().contains(QLatin1String("stopped"), Qt::CaseInsensitive));
    const int allBatches = int((qint64(32) * (3 << 19)) / (64 << 10));
    QVERIFY2(batches.count() < allBatches, "Cancel should stop well before the end");
    QVERIFY(!m_window->isScanning());
    QVERIFY(m_window->scanAction()->isEnabled());
}

void TestMainWindow::testMissingTargetIsReported()
{
    const QString missing = m_tmp.filePath(QStringLiteral("does-not-exist"));
    prepareScan(m_case.dir, 64 << 20);
    m_window->dropZone()->addPaths({missing});
    QSignalSpy finished(m_window->scanJob(), &ScanJob::finished);
    QVERIFY(m_window->onScan());
    QCOMPARE(m_window->problemsPanel()->count(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 300000);
}

void TestMainWindow::testFilterDebounced()
{
    prepareScan(m_case.dir, 64 << 20);
    QSignalSpy finished(m_window->scanJob(), &ScanJob::finished);
    m_window->scanAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 300000);
    HitsView *view = m_window->hitsView();
    QVERIFY(m_window->hitsModel()->totalHits() > 0);
    const QString rule = m_window->hitsModel()->hit(0).rule;

    QSignalSpy applied(view, &HitsView::filterApplied);
    view->setFilter(QStringLiteral("^%1$").arg(QRegularExpression::escape(rule)), true);
    QTest::qWait(100);
    QCOMPARE(applied.count(), 0); // debounced
    QTRY_COMPARE_WITH_TIMEOUT(applied.count(), 1, 2000);
    while (view->proxy()->canFetchMore({}))
        view->proxy()->fetchMore({});
    QVERIFY(view->proxy()->rowCount() > 0);
    const QRegularExpression re = view->proxy()->filterRegularExpression();
    for (int r = 0; r < view->proxy()->rowCount(); ++r) {
        bool any = false;
        for (int c = 0; c < HitsTableModel::NUM_COLUMNS; ++c)
            any = any || re.match(view->proxy()->index(r, c).data().toString()).hasMatch();
        QVERIFY(any);
    }
    QVERIFY(view->proxy()->rowCount() <= m_window->hitsModel()->totalHits());

    // Copy: the selected rows as tab-separated lines, in the table's order.
    QVERIFY(view->proxy()->rowCount() >= 2);
    view->table()->selectRow(1);
    view->table()->selectionModel()->select(view->proxy()->index(0, 0),
                                            QItemSelectionModel::Select | QItemSelectionModel::Rows);
    view->copyAction()->trigger();
    const QStringList lines = QGuiApplication::clipboard()->text().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    for (int r = 0; r < 2; ++r) {
        const QStringList cells = lines[r].split(QLatin1Char('\t'));
        QCOMPARE(cells.size(), int(HitsTableModel::NUM_COLUMNS));
        QCOMPARE(cells[HitsTableModel::RuleColumn], view->proxy()->index(r, HitsTableModel::RuleColumn).data().toString());
        QCOMPARE(cells[HitsTableModel::OffsetColumn],
                 view->proxy()->index(r, HitsTableModel::OffsetColumn).data().toString());
    }
    // Show bytes opens the hex view of the current row, as a double-click does.
    view->table()->setCurrentIndex(view->proxy()->index(0, 0));
    view->showBytesAction()->trigger();
    QTRY_VERIFY(m_window->findChild<HexView *>() != nullptr);
}

void TestMainWindow::testUnavailableBackendIsExplained_data()
{
    QTest::addColumn<EngineChoice>("engine");
    QTest::addRow("auto engine: CPU scan, notice in banner and Problems") << EngineChoice::Auto;
    QTest::addRow("GPU engine: scan fails with a message box") << EngineChoice::Gpu;
}

void TestMainWindow::testUnavailableBackendIsExplained()
{
    QFETCH(EngineChoice, engine);
    // Qt 6.4's offscreen platform cannot create Vulkan instances.
    LaunchParamsPanel *panel = m_window->launchParamsPanel();
    auto *backendCombo = panel->findChild<QComboBox *>(QStringLiteral("backendCombo"));
    QVERIFY(backendCombo);
    QVERIFY(!backendCombo->isEnabled()); // the CPU engine has no backend
    panel->setEngine(engine);
    QVERIFY(backendCombo->isEnabled());
    panel->setBackend(GpuBackend::Vulkan);
    QCOMPARE(Settings::instance()->backend(), GpuBackend::Vulkan); // persisted as chosen
    QCOMPARE(Settings::instance()->engine(), engine);

    prepareScan(m_case.dir, 64 << 20);
    QSignalSpy started(m_window->scanJob(), &ScanJob::scanStarted);
    QSignalSpy finished(m_window->scanJob(), &ScanJob::finished);
    QSignalSpy failed(m_window->scanJob(), &ScanJob::failed);
    // The banner hides itself after a few seconds, which a slow machine can take to finish the scan: what counts
    // is that it was shown.
    auto *banner = m_window->findChild<QLabel *>(QStringLiteral("banner"));
    QVERIFY(banner);
    bool bannerShown = false;
    ShowWatcher watcher(banner, &bannerShown);
    m_window->scanAction()->trigger();
    QVERIFY(!backendCombo->isEnabled()); // fixed while the scan runs
    QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, 300000);
    if (!started.isEmpty() && started.at(0).at(0).toString().startsWith(QLatin1String("GPU")))
        QSKIP("Vulkan offers compute on this platform: nothing to explain");

    if (engine == EngineChoice::Auto) {
        QCOMPARE(finished.count(), 1);
        QVERIFY(started.at(0).at(0).toString().startsWith(QLatin1String("CPU")));
        QVERIFY(bannerShown);
        QVERIFY2(banner->text().contains(QLatin1String("Vulkan")) && banner->text().contains(QLatin1String("CPU")),
                 qPrintable(banner->text()));
        QCOMPARE(m_window->problemsPanel()->count(), 1);
        QVERIFY(m_window->hitsModel()->totalHits() > 0);
    } else {
        QCOMPARE(failed.count(), 1);
        QCOMPARE(started.count(), 0);
        const QString message = failed.at(0).at(0).toString();
        QVERIFY2(message.contains(QLatin1String("Vulkan")), qPrintable(message));
        QMessageBox *box = nullptr;
        QTRY_VERIFY((box = m_window->findChild<QMessageBox *>()) != nullptr);
        QCOMPARE(box->text(), message);
        box->close();
    }
    QVERIFY(backendCombo->isEnabled()); // unlocked after the scan
    panel->setBackend(GpuBackend::Auto);
    panel->setEngine(EngineChoice::Cpu);
}

void TestMainWindow::testChartsOpenGlWithoutGl()
{
    // The offscreen platform has no OpenGL: asking for it must leave software drawing in place, say why, and
    // keep the preference (it applies where OpenGL exists).
    QAction *action = m_window->chartsOpenGlAction();
    QVERIFY(action && action->isCheckable());
    QVERIFY(!action->isChecked()); // off by default
    action->setChecked(true);
    QVERIFY(Settings::instance()->chartsOpenGl());
    QVERIFY(!m_window->charts()->openGl());
    auto *banner = m_window->findChild<QLabel *>(QStringLiteral("banner"));
    QVERIFY(banner->isVisible());
    QVERIFY2(banner->text().contains(QLatin1String("OpenGL")), qPrintable(banner->text()));

    // Still plots, in software.
    BatchTelemetry t;
    t.index = 0;
    t.bytes = 1 << 20;
    t.wallMs = 5;
    m_window->telemetryLog()->append(t);
    m_window->charts()->plot()->replot();
    QCOMPARE(m_window->charts()->pointCount(), 1);

    // A new window (next start) applies the saved preference without crashing either.
    auto second = std::make_unique<MainWindow>();
    QVERIFY(second->chartsOpenGlAction()->isChecked());
    QVERIFY(!second->charts()->openGl());
    second.reset();

    action->setChecked(false);
    QVERIFY(!Settings::instance()->chartsOpenGl());
}

void TestMainWindow::testRecentFoldersMenu()
{
    Settings::instance()->setRecentFolders({});
    QVERIFY(dropUrls(m_window->dropZone(), {QUrl::fromLocalFile(m_case.dir)}));
    QCOMPARE(Settings::instance()->recentFolders(), QStringList{QDir::cleanPath(m_case.dir)});
    auto *menu = m_window->findChild<QMenu *>(QStringLiteral("recentFoldersMenu"));
    QVERIFY(menu);
    QTRY_VERIFY(menu->isEnabled());

    // Another window (a later session) offers it and adds it as a target when chosen.
    MainWindow other;
    auto *otherMenu = other.findChild<QMenu *>(QStringLiteral("recentFoldersMenu"));
    QAction *entry = nullptr;
    QAction *clearList = nullptr;
    const QList<QAction *> actions = otherMenu->actions();
    for (QAction *a : actions) {
        if (a->text() == QDir::toNativeSeparators(QDir::cleanPath(m_case.dir)))
            entry = a;
        else if (a->text().contains(QLatin1String("Clear")))
            clearList = a;
    }
    QVERIFY(entry && clearList);
    QVERIFY(other.dropZone()->paths().isEmpty());
    entry->trigger();
    QCOMPARE(other.dropZone()->paths(), QStringList{QDir::cleanPath(m_case.dir)});

    // A folder that has gone is refused with its path named, not added.
    const QString gone = m_tmp.filePath(QStringLiteral("gone"));
    QVERIFY(QDir().mkpath(gone));
    Settings::instance()->addRecentFolder(gone);
    QVERIFY(QDir(gone).removeRecursively());
    QAction *goneEntry = nullptr;
    const auto findGone = [&] {
        const QList<QAction *> newActions = otherMenu->actions();
        for (QAction *a : newActions) {
            if (a->text() == QDir::toNativeSeparators(gone))
                goneEntry = a;
        }
        return goneEntry != nullptr;
    };
    QTRY_VERIFY(findGone()); // the menu is rebuilt from a queued call
    goneEntry->trigger();
    QCOMPARE(other.dropZone()->paths().size(), 1);
    QMessageBox *box = nullptr;
    QTRY_VERIFY((box = other.findChild<QMessageBox *>()) != nullptr);
    QVERIFY2(box->text().contains(QDir::toNativeSeparators(gone)), qPrintable(box->text()));

    const QList<QAction *> lastActions = otherMenu->actions();
    for (QAction *a : lastActions) {
        if (a->text().contains(QLatin1String("Clear")))
            clearList = a;
    }
    clearList->trigger();
    QVERIFY(Settings::instance()->recentFolders().isEmpty());
    QTRY_VERIFY(!menu->isEnabled());
}

void TestMainWindow::testExportHitsInBackground()
{
    // Hundreds of thousands of hits, as a large scan gives: written on a thread while the window goes on, every
    // row of every batch, byte for byte what the exporter writes for them.
    QVector<HitRow> all;
    for (int b = 0; b < 4; ++b) {
        QVector<HitRow> rows;
        for (int i = 0; i < 60000; ++i) {
            HitRow r;
            r.path = QByteArrayLiteral("/data/file_") + QByteArray::number(i % 97) + ".bin";
            r.rule = QStringLiteral("rule_%1").arg(i % 13);
            r.string = QStringLiteral("$s%1").arg(i % 3);
            r.offset = qint64(b) * 1000000 + i;
            r.length = 1 + i % 7;
            rows.push_back(r);
        }
        m_window->hitsModel()->appendHits(rows);
        all += rows;
    }
    QVERIFY(QDir(m_tmp.path()).mkpath(QStringLiteral("export")));
    const QString path = m_tmp.filePath(QStringLiteral("export/exported.jsonl"));
    QSignalSpy done(m_window.get(), &MainWindow::hitsExportFinished);
    m_window->exportHitsTo(path);
    QVERIFY(m_window->isExportingHits());
    QVERIFY(!m_window->exportHitsAction()->isEnabled()); // one export at a time
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 60000);
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QVERIFY(done.at(0).at(1).toString().contains(QStringLiteral("240000")));
    QVERIFY(!m_window->isExportingHits());
    QVERIFY(m_window->exportHitsAction()->isEnabled());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray want = HitExporter::hitsToJsonLines(all);
    QVERIFY(f.readAll() == want);
    f.close();

    // The window closed while an export is writing: the export stops or ends, never leaving half a file.
    QVERIFY(QFile::remove(path));
    QVERIFY(TestUtil::writeFile(path, "an earlier export\n"));
    m_window->exportHitsTo(path);
    m_window.reset();
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray after = f.readAll();
    QVERIFY(after == want || after == "an earlier export\n");
    QCOMPARE(QDir(m_tmp.filePath(QStringLiteral("export"))).entryList(QDir::Files | QDir::Hidden),
             QStringList { QStringLiteral("exported.jsonl") }); // no temporary file left behind
}

void TestMainWindow::testExportCancelledFromTheDialog()
{
    // The progress dialog's Cancel button, pressed while the export writes: no file is written (an earlier one
    // stays as it was), the window says so, and exporting is possible again.
    HitRow r;
    r.path = QByteArrayLiteral("/data/file.bin");
    r.rule = QStringLiteral("rule");
    r.string = QStringLiteral("$s");
    r.length = 4;
    for (int b = 0; b < 8; ++b)
        m_window->hitsModel()->appendHits(QVector<HitRow>(50000, r)); // many chunks of the exporter's
    QVERIFY(QDir(m_tmp.path()).mkpath(QStringLiteral("cancelled")));
    const QString path = m_tmp.filePath(QStringLiteral("cancelled/hits.csv"));
    QVERIFY(TestUtil::writeFile(path, "an earlier export\n"));
    QSignalSpy done(m_window.get(), &MainWindow::hitsExportFinished);
    m_window->exportHitsTo(path);
    auto *dialog = m_window->findChild<QProgressDialog *>();
    QVERIFY(dialog);
    QPushButton *cancel = nullptr;
    for (QPushButton *button : dialog->findChildren<QPushButton *>())
        if (button->text() == QLatin1String("Cancel"))
            cancel = button;
    QVERIFY(cancel);
    cancel->click();
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 60000);
    QVERIFY(!done.at(0).at(0).toBool());
    QVERIFY2(done.at(0).at(1).toString().contains(QStringLiteral("cancelled")), qPrintable(done.at(0).at(1).toString()));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), QByteArrayLiteral("an earlier export\n"));
    QCOMPARE(QDir(m_tmp.filePath(QStringLiteral("cancelled"))).entryList(QDir::Files | QDir::Hidden),
             QStringList { QStringLiteral("hits.csv") });
    QVERIFY(m_window->exportHitsAction()->isEnabled());
    QVERIFY(!m_window->findChild<QProgressDialog *>() || !m_window->findChild<QProgressDialog *>()->isVisible());
}

void TestMainWindow::testExternalsReachTheRules()
{
    // yara's -d in the rule-set panel: a rule that needs an external runs with the value typed there.
    const QString rules = m_tmp.filePath(QStringLiteral("externals.yar"));
    QVERIFY(TestUtil::writeFile(rules, "rule tagged { strings: $a = \"needle\" condition: $a and owner == \"alice b\" "
                                       "and limit > 2 }\n"));
    const QString folder = m_tmp.filePath(QStringLiteral("externals"));
    QVERIFY(TestUtil::writeFile(folder + QStringLiteral("/f.txt"), "a needle here"));
    RuleSetPanel *panel = m_window->ruleSetPanel();
    panel->setExternalsText(QStringLiteral("owner=alice b; limit=3"));
    QCOMPARE(panel->externals().size(), size_t(2));
    QCOMPARE(panel->externals().at("limit").type, YaraExternal::Type::Integer);
    QString error;
    panel->setExternalsText(QStringLiteral("owner=alice b; =3; limit=3"));
    panel->externals(&error);
    QVERIFY2(error.contains(QLatin1String("=3")), qPrintable(error));
    panel->setExternalsText(QStringLiteral("owner=alice b; limit=3"));
    QCOMPARE(Settings::instance()->externals(), QStringLiteral("owner=alice b; limit=3"));
    panel->addRuleFiles({rules});
    QVERIFY(dropUrls(m_window->dropZone(), {QUrl::fromLocalFile(folder)}));
    QSignalSpy finished(m_window->scanJob(), &ScanJob::finished);
    QSignalSpy rejected(m_window->scanJob(), &ScanJob::ruleRejected);
    QVERIFY(m_window->onScan());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
    QCOMPARE(rejected.count(), 0);
    QCOMPARE(m_window->hitsModel()->totalHits(), 1);
    QCOMPARE(m_window->hitsModel()->hit(0).rule, QStringLiteral("tagged"));
}

// From the window to the editor and back: a rule file of the panel opens in the editor, the files selected in
// the Files tab are what Test on selection scans, with the unsaved text; closing asks about that text.
void TestMainWindow::testRuleEditorTestsTheSelectedFiles()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString rules = dir.filePath(QStringLiteral("rules.yar"));
    QVERIFY(TestUtil::writeFile(rules, "rule Needle { strings: $n = \"needle\" condition: $n }\n"));
    const QString files = dir.filePath(QStringLiteral("files"));
    QVERIFY(QDir().mkpath(files));
    QVERIFY(TestUtil::writeFile(files + QStringLiteral("/one.txt"), "a needle, a thread"));
    QVERIFY(TestUtil::writeFile(files + QStringLiteral("/two.txt"), "needles and thread"));
    QVERIFY(TestUtil::writeFile(files + QStringLiteral("/three.txt"), "nothing"));
    m_window->ruleSetPanel()->addRuleFiles({ rules });
    m_window->dropZone()->addPaths({ files });
    QSignalSpy finished(m_window->scanJob(), &ScanJob::finished);
    QVERIFY(m_window->onScan());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QCOMPARE(m_window->filesModel()->rowCount(), 2);

    // The Files tab's report is written on the export thread, as the hits are.
    const QString report = dir.filePath(QStringLiteral("report.json"));
    QSignalSpy exported(m_window.get(), &MainWindow::exportFinished);
    m_window->exportFilesTo(report);
    QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, 30000);
    QVERIFY2(exported.first().first().toBool(), qPrintable(exported.first().at(1).toString()));
    QFile reportFile(report);
    QVERIFY(reportFile.open(QIODevice::ReadOnly));
    const QJsonArray reported = QJsonDocument::fromJson(reportFile.readAll()).object().value(QLatin1String("files")).toArray();
    QCOMPARE(reported.size(), 2);
    QCOMPARE(reported.at(0).toObject().value(QLatin1String("hits")).toArray().size(), 1);

    Q_EMIT m_window->ruleSetPanel()->editRequested(rules); // as a double click on the file does
    RuleEditor *editor = m_window->ruleEditor();
    QVERIFY(editor->isVisible());
    QVERIFY(editor->isWindow());
    QCOMPARE(editor->filePath(), rules);
    QVERIFY(!editor->testAction()->isEnabled()); // nothing selected yet

    m_window->showView(QStringLiteral("files")); // selects the top file
    QCOMPARE(m_window->filesView()->selectedPaths().size(), 1);
    QVERIFY(editor->testAction()->isEnabled());
    m_window->filesView()->table()->selectAll();
    QCOMPARE(m_window->filesView()->selectedPaths().size(), 2);

    // "thread" is in both files; the rule on disk still looks for "needle".
    editor->editor()->selectAll(); // as typed over, not loaded: the text is modified
    editor->editor()->insertPlainText(QStringLiteral("rule Thread { strings: $t = \"thread\" condition: $t }\n"));
    QSignalSpy tested(editor->testPanel(), &RuleTestPanel::testFinished);
    editor->testAction()->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(tested.count(), 1, 60000);
    QVERIFY(tested.first().first().toBool());
    const HitsTableModel *hits = editor->testPanel()->model();
    QCOMPARE(hits->totalHits(), 2);
    std::set<std::pair<QString, qint64>> got;
    for (int i = 0; i < hits->totalHits(); ++i) {
        QCOMPARE(hits->hit(i).rule, QStringLiteral("Thread"));
        got.insert({ QFileInfo(QString::fromUtf8(hits->hit(i).path)).fileName(), hits->hit(i).offset });
    }
    QVERIFY(got == (std::set<std::pair<QString, qint64>> { { QStringLiteral("one.txt"), 12 }, { QStringLiteral("two.txt"), 12 } }));
    QFile onDisk(rules);
    QVERIFY(onDisk.open(QIODevice::ReadOnly));
    QVERIFY(onDisk.readAll().contains("Needle")); // tested without saving

    // Closing the editor's window over unsaved rules and discarding them: it opens again on the file as saved.
    QVERIFY(editor->isModified());
    int asked = 0;
    editor->setSaveQuestion([&asked](const QString &) { ++asked; return QMessageBox::Discard; });
    QVERIFY(editor->close());
    QCOMPARE(asked, 1);
    QVERIFY(!editor->isModified());
    QVERIFY(editor->editor()->toPlainText().contains(QLatin1String("Needle")));
    m_window->openRuleEditor(rules);
    editor->editor()->selectAll();
    editor->editor()->insertPlainText(QStringLiteral("rule Changed { condition: true }\n"));
    asked = 0;

    // Closing the main window over unsaved rules asks; Cancel keeps both open.
    editor->setSaveQuestion([&asked](const QString &) { ++asked; return QMessageBox::Cancel; });
    QVERIFY(!m_window->close());
    QCOMPARE(asked, 1);
    QVERIFY(m_window->isVisible());
    editor->setSaveQuestion([&asked](const QString &) { ++asked; return QMessageBox::Discard; });
    QVERIFY(m_window->close());
    QCOMPARE(asked, 2);
}

// Tools > Profile rules: the next scan fills the Profile tab, a row per rule, the slow one first with its reason;
// the editor warns about the same string as it is typed.
void TestMainWindow::testProfileTabAndCostWarnings()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString rules = dir.filePath(QStringLiteral("rules.yar"));
    const QByteArray text = "rule OneByte { strings: $x = \"e\" condition: #x > 1000000 }\n"
                            "rule Rare { strings: $r = \"a distinctive sentence\" condition: $r }\n";
    QVERIFY(TestUtil::writeFile(rules, text));
    const QString files = dir.filePath(QStringLiteral("files"));
    QVERIFY(QDir().mkpath(files));
    QVERIFY(TestUtil::writeFile(files + QStringLiteral("/text.txt"), QByteArray("the quick brown fox jumped. ").repeated(20000)));
    m_window->ruleSetPanel()->addRuleFiles({ rules });
    m_window->dropZone()->addPaths({ files });

    QVERIFY(!m_window->profileRulesAction()->isChecked()); // off unless asked for
    m_window->profileRulesAction()->setChecked(true);
    QSignalSpy finished(m_window->scanJob(), &ScanJob::finished);
    QVERIFY(m_window->onScan());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    const RuleProfileModel *profile = m_window->profileView()->model();
    QCOMPARE(profile->rowCount(), 2);
    QVERIFY(m_window->showView(QStringLiteral("profile")));
    QCOMPARE(m_window->resultTabs()->currentWidget(), m_window->profileView());
    QCOMPARE(m_window->resultTabs()->tabText(m_window->resultTabs()->indexOf(m_window->profileView())),
             QStringLiteral("Profile (2)"));
    QTableView *table = m_window->profileView()->table();
    const QModelIndex top = table->model()->index(0, RuleProfileModel::RuleColumn);
    QCOMPARE(top.data().toString(), QStringLiteral("OneByte"));
    QVERIFY2(table->model()->index(0, RuleProfileModel::ReasonsColumn).data().toString().contains(QLatin1String("1 byte")),
             qPrintable(table->model()->index(0, RuleProfileModel::ReasonsColumn).data().toString()));
    m_window->profileRulesAction()->setChecked(false);

    m_window->openRuleEditor(rules);
    RuleEditor *editor = m_window->ruleEditor();
    editor->checkNow();
    QTRY_VERIFY_WITH_TIMEOUT(!editor->isChecking(), 30000);
    const QList<RuleDiagnostic> cost = editor->diagnosticsList()->diagnostics(QStringLiteral("cost"));
    QCOMPARE(cost.size(), 1);
    QCOMPARE(cost.first().rule, QStringLiteral("OneByte"));
    QCOMPARE(cost.first().line, 1);
    QVERIFY(cost.first().message.contains(QLatin1String("$x")));
}

QTEST_MAIN(TestMainWindow)
void TestMainWindow::testTwoDevicesOneSeriesEach()
{
    // As a user sets it up: the Devices field with a device twice, kept for the next start. (Qt 6.4's offscreen
    // platform has no Vulkan: tst_scanjob runs the scan itself on two device objects.)
    LaunchParamsPanel *panel = m_window->launchParamsPanel();
    panel->setEngine(EngineChoice::Gpu);
    auto *devices = panel->findChild<QLineEdit *>(QStringLiteral("devicesEdit"));
    QVERIFY(devices && devices->isEnabled());
    devices->setText(QStringLiteral("all"));
    QCOMPARE(Settings::instance()->devices(), QStringLiteral("all"));
    devices->selectAll();
    QTest::keyClicks(devices, QStringLiteral("0,0"));
    QCOMPARE(Settings::instance()->devices(), QStringLiteral("0,0"));
    QCOMPARE(panel->devices().indices, std::vector<int>({ 0, 0 }));
    // A list that does not parse is not saved.
    QTest::keyClicks(devices, QStringLiteral(",x"));
    QCOMPARE(Settings::instance()->devices(), QStringLiteral("0,0"));
    devices->setText(QStringLiteral("0,0"));
    panel->setEngine(EngineChoice::Cpu);
    QVERIFY(!devices->isEnabled()); // the CPU engine has no devices

    // The charts: a series per device that ran batches, cleared with the scan.
    BatchCharts *charts = m_window->charts();
    for (int i = 0; i < 6; ++i) {
        BatchTelemetry t;
        t.index = i;
        t.deviceSlot = i % 3 == 2 ? 1 : 0;
        t.bytes = 1 << 20;
        t.wallMs = 5;
        m_window->telemetryLog()->append(t);
    }
    for (int m = 0; m < BatchCharts::NUM_METRICS; ++m) {
        QCPGraph *second = charts->graph(BatchCharts::Metric(m), 1);
        QVERIFY(second);
        QCOMPARE(second->dataCount(), 2);
        QCOMPARE(charts->graph(BatchCharts::Metric(m), 0)->dataCount(), 4);
        QVERIFY(second->name().contains(QLatin1String("device 1")));
    }
    QVERIFY(!charts->graph(BatchCharts::Occupancy, 2));
    charts->plot()->replot();
    m_window->telemetryLog()->clear();
    QVERIFY(!charts->graph(BatchCharts::Occupancy, 1));
    QCOMPARE(charts->graph(BatchCharts::Occupancy, 0)->dataCount(), 0);
    charts->plot()->replot();

    // The next start of the application offers the same devices.
    MainWindow other;
    QCOMPARE(other.launchParamsPanel()->devicesText(), QStringLiteral("0,0"));
    Settings::instance()->setDevices(QStringLiteral("all"));
    panel->setEngine(EngineChoice::Auto);
}

void TestMainWindow::testTimelineStagesAndSelection()
{
    // A row per batch, a bar per stage as long as the stage took; a click on a batch in the timeline marks it in
    // the charts, and one in the charts marks it in the timeline.
    m_window->telemetryLog()->clear();
    for (int i = 0; i < 5; ++i) {
        BatchTelemetry t;
        t.index = i;
        t.bytes = 1 << 20;
        t.wallMs = 5;
        const double at = 10.0 * i;
        t.stages[BatchTelemetry::Read] = { at, at + 4 };
        t.stages[BatchTelemetry::Prepare] = { at + 4, at + 5 };
        t.stages[BatchTelemetry::Scan] = { at + 6, at + 9 + i };
        t.stages[BatchTelemetry::Starts] = { at + 9 + i, at + 10 + i };
        t.stages[BatchTelemetry::Resolve] = { at + 11 + i, at + 12 + i };
        m_window->telemetryLog()->append(t);
    }
    BatchTimeline *timeline = m_window->timeline();
    QCPBars *scan = timeline->stageBars(BatchTelemetry::Scan);
    QCOMPARE(scan->data()->size(), 5);
    for (int i = 0; i < 5; ++i)
        QCOMPARE(scan->data()->at(i)->value, 3.0 + i);
    timeline->plot()->replot();

    QSignalSpy fromTimeline(timeline, &BatchTimeline::batchSelected);
    const QPoint row(int(timeline->plot()->xAxis->coordToPixel(20)), int(timeline->plot()->yAxis->coordToPixel(3)));
    QTest::mouseClick(timeline->plot(), Qt::LeftButton, {}, row);
    QCOMPARE(fromTimeline.count(), 1);
    QCOMPARE(fromTimeline.first().at(0).toInt(), 3);
    QCOMPARE(m_window->charts()->selectedBatch(), 3);

    BatchCharts *charts = m_window->charts();
    charts->plot()->replot();
    QCPAxisRect *rect = charts->graph(BatchCharts::Occupancy)->keyAxis()->axisRect();
    const QPoint point(int(rect->axis(QCPAxis::atBottom)->coordToPixel(1)), rect->center().y());
    QTest::mouseClick(charts->plot(), Qt::LeftButton, {}, point);
    QCOMPARE(charts->selectedBatch(), 1);
    QCOMPARE(timeline->selectedBatch(), 1);

    // A new scan starts with nothing selected.
    m_window->telemetryLog()->clear();
    QCOMPARE(timeline->selectedBatch(), -1);
    QCOMPARE(charts->selectedBatch(), -1);
    QCOMPARE(timeline->stageBars(BatchTelemetry::Scan)->data()->size(), 0);
}

#include "tst_mainwindow.moc"
