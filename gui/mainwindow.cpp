// SPDX-License-Identifier: GPL-3.0-or-later
#include "mainwindow.h"

#include <atomic>

#include <QAction>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QProgressDialog>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QStandardPaths>
#include <QStyle>
#include <QTableView>
#include <QTabWidget>
#include <QThread>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include "batchcharts.h"
#include "batchtimeline.h"
#include "dropzone.h"
#include "filesview.h"
#include "formatting.h"
#include "hexview.h"
#include "moduleview.h"
#include "hitsview.h"
#include "latencyprobe.h"
#include "launchparamspanel.h"
#include "problemspanel.h"
#include "profileview.h"
#include "report/hitexporter.h"
#include "automata/rulecost.h"
#include "report/filestablemodel.h"
#include "report/hitstablemodel.h"
#include "report/ruleprofilemodel.h"
#include "report/rulesummarymodel.h"
#include "report/telemetrylog.h"
#include "ruleeditor.h"
#include "rulesetpanel.h"
#include "sweepdialog.h"
#include "session/scanjob.h"
#include "settings.h"

namespace Hitscope {

namespace {

// Bump when the layout changes so an old saved state is not applied to new widgets.
constexpr int kMainWindowVersion = 1;

// Why a path cannot be scanned or loaded, for people; empty when it can.
QString checkReadable(const QString &path, bool mustBeFile)
{
    const QFileInfo info(path);
    if (!info.exists())
        return MainWindow::tr("%1 does not exist").arg(QDir::toNativeSeparators(path));
    if (mustBeFile && info.isDir())
        return MainWindow::tr("%1 is a folder, not a file").arg(QDir::toNativeSeparators(path));
    if (!info.isReadable() || (info.isDir() && !info.isExecutable()))
        return MainWindow::tr("%1 is not readable").arg(QDir::toNativeSeparators(path));
    return {};
}

QVector<RuleFileSetting> ruleFileSettings(const RuleSetPanel *panel)
{
    const QStringList enabled = panel->enabledRuleFiles();
    QVector<RuleFileSetting> out;
    for (const QString &path : panel->ruleFiles())
        out.push_back({path, enabled.contains(path)});
    return out;
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
{
    qRegisterMetaType<Hitscope::LaunchParams>();
    qRegisterMetaType<Hitscope::BatchTelemetry>();
    qRegisterMetaType<Hitscope::HitRow>();
    qRegisterMetaType<QVector<Hitscope::HitRow>>();
    qRegisterMetaType<Hitscope::EngineChoice>();

    setWindowTitle(tr("Hitscope"));
    m_job = new ScanJob(this);
    m_model = new HitsTableModel(this);
    m_files = new FilesTableModel(this);
    m_ruleSummary = new RuleSummaryModel(this);
    setupActions();
    setupMenus();
    setupLayout();
    connectJob();
    setRunning(false);
    restoreSettings();
    applyChartsOpenGl();

    // Persist what the user sets up as it changes; main() restores it (command-line arguments win).
    Settings *settings = Settings::instance();
    connect(m_params, &LaunchParamsPanel::paramsChanged, settings, &Settings::setLaunchParams);
    connect(m_params, &LaunchParamsPanel::engineChanged, settings, &Settings::setEngine);
    connect(m_params, &LaunchParamsPanel::backendChanged, settings, &Settings::setBackend);
    m_params->setDevicesText(settings->devices());
    connect(m_params, &LaunchParamsPanel::devicesChanged, settings, &Settings::setDevices);
    connect(m_rules, &RuleSetPanel::ruleFilesChanged, settings,
            [this] { Settings::instance()->setRuleFiles(ruleFileSettings(m_rules)); });
    m_rules->setExternalsText(settings->externals());
    connect(m_rules, &RuleSetPanel::externalsChanged, settings,
            [this] { Settings::instance()->setExternals(m_rules->externalsText()); });
    connect(m_dropZone, &DropZone::pathsChanged, settings, [known = QStringList()](const QStringList &paths) mutable {
        for (const QString &path : paths) {
            if (!known.contains(path) && QFileInfo(path).isDir())
                Settings::instance()->addRecentFolder(path);
        }
        known = paths;
    });

    // Connected after connectJob(): the probe stops after onFinished/onFailed, before anyone connected later.
    m_latency = new LatencyProbe(this);
    connect(m_job, &ScanJob::scanStarted, m_latency, &LatencyProbe::start);
    const auto stopProbe = [this] {
        m_latency->stop();
        statusBar()->setToolTip(tr("GUI latency p99 %1 ms").arg(m_latency->stats().p99Ms, 0, 'f', 1));
    };
    connect(m_job, &ScanJob::finished, m_latency, stopProbe);
    connect(m_job, &ScanJob::failed, m_latency, stopProbe);
}

// What an export thread and the window share: the thread writes, the window reads and may cancel.
struct HitExportState
{
    std::atomic<qint64> written { 0 };
    std::atomic_bool cancel { false };
    bool ok = false;  // set by the thread before it finishes
    QString error;
};

const QVector<BatchTelemetry> &MainWindow::telemetry() const
{
    return m_telemetry->batches();
}

MainWindow::~MainWindow()
{
    // An export still writing is cancelled (its file is left as it was) before the window goes.
    if (m_exportThread) {
        m_export->cancel = true;
        m_exportThread->wait();
        delete m_exportThread;
    }
}

void MainWindow::setupActions()
{
    auto *toolbar = addToolBar(tr("Scan"));
    toolbar->setObjectName(QStringLiteral("scanToolbar"));
    toolbar->setMovable(false);
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);

    auto *addFolder = toolbar->addAction(style()->standardIcon(QStyle::SP_DirOpenIcon), tr("Add folder…"));
    auto *addFiles = toolbar->addAction(style()->standardIcon(QStyle::SP_FileIcon), tr("Add files…"));
    auto *addRules = toolbar->addAction(style()->standardIcon(QStyle::SP_FileDialogContentsView), tr("Add rules…"));
    toolbar->addSeparator();
    m_scanAction = toolbar->addAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("Scan"));
    m_scanAction->setShortcut(Qt::CTRL | Qt::Key_Return);
    m_scanAction->setToolTip(tr("Scan the targets with the enabled rule sets (Ctrl+Enter)"));
    m_cancelAction = toolbar->addAction(style()->standardIcon(QStyle::SP_MediaStop), tr("Cancel"));
    m_cancelAction->setShortcut(Qt::Key_Escape);
    m_cancelAction->setToolTip(tr("Stop the scan after the current batch (Esc)"));

    // Created in setupLayout(); connect through lambdas so the order does not matter.
    connect(addFolder, &QAction::triggered, this, [this] { m_dropZone->onAddFolder(); });
    connect(addFiles, &QAction::triggered, this, [this] { m_dropZone->onAddFiles(); });
    connect(addRules, &QAction::triggered, this, [this] { m_rules->onAddRules(); });
    connect(m_scanAction, &QAction::triggered, this, &MainWindow::onScan);
    connect(m_cancelAction, &QAction::triggered, this, &MainWindow::onCancel);
}

void MainWindow::setupMenus()
{
    auto *file = menuBar()->addMenu(tr("&File"));
    auto *exportFiles = file->addAction(tr("Export &files report…"), this, &MainWindow::onExportFiles);
    exportFiles->setToolTip(tr("Save the files of the Files tab, with their hits, as HTML, JSON or CSV"));
    m_exportHitsAction = file->addAction(tr("Export &hits…"), this, &MainWindow::onExportHits);
    m_exportHitsAction->setToolTip(tr("Save every hit as JSON lines (.json, .jsonl) or CSV (.csv)"));
    m_exportTelemetryAction = file->addAction(tr("Export &telemetry…"), this, &MainWindow::onExportTelemetry);
    m_exportTelemetryAction->setToolTip(tr("Save the per-batch telemetry as JSON lines (.json, .jsonl) or CSV (.csv)"));

    auto *tools = menuBar()->addMenu(tr("&Tools"));
    m_ruleEditorAction = tools->addAction(tr("Rule &editor…"), this, [this] { openRuleEditor(); });
    m_ruleEditorAction->setShortcut(QKeySequence(tr("Ctrl+E")));
    m_ruleEditorAction->setToolTip(tr("Write and test rules: errors as you type, Test on the files selected in the "
                                      "Files tab"));
    m_profileRulesAction = tools->addAction(tr("&Profile rules"));
    m_profileRulesAction->setObjectName(QStringLiteral("profileRulesAction"));
    m_profileRulesAction->setCheckable(true);
    m_profileRulesAction->setChecked(Settings::instance()->profileRules());
    m_profileRulesAction->setToolTip(tr("Measure what each rule costs during the next scans (the Profile tab): its "
                                        "strings on the engine, its condition, resolving its matches"));
    connect(m_profileRulesAction, &QAction::toggled, Settings::instance(), &Settings::setProfileRules);
    tools->addAction(tr("Parameter &sweep…"), this, [this] {
        QByteArrayList targets;
        const QStringList paths = m_dropZone->paths();
        for (const QString &path : paths)
            targets.push_back(QFile::encodeName(path));
        auto *dialog = new SweepDialog(m_rules->enabledRuleFiles(), targets, m_params->engine(), m_params->params(), this);
        dialog->setBackend(m_params->backend());
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        connect(dialog, &SweepDialog::paramsChosen, this, &MainWindow::onSweepParamsChosen);
        dialog->show();
    });

    auto *recent = file->addMenu(tr("&Recent folders"));
    recent->setObjectName(QStringLiteral("recentFoldersMenu"));
    const auto fillRecent = [this, recent](const QStringList &folders) {
        recent->clear();
        recent->setEnabled(!folders.isEmpty());
        for (const QString &folder : folders) {
            auto *action = recent->addAction(QDir::toNativeSeparators(folder), this, [this, folder] {
                const QString why = checkReadable(folder, false);
                if (!why.isEmpty()) {
                    warn(tr("Cannot add folder"), why);
                    return;
                }
                m_dropZone->addPaths({folder});
                Settings::instance()->addRecentFolder(folder);
            });
            action->setToolTip(tr("Add %1 as a scan target").arg(QDir::toNativeSeparators(folder)));
        }
        if (!folders.isEmpty()) {
            recent->addSeparator();
            recent->addAction(tr("&Clear list"), this, [] { Settings::instance()->setRecentFolders({}); });
        }
    };
    fillRecent(Settings::instance()->recentFolders());
    // Queued: choosing an entry moves it to the front, and rebuilding the menu from inside that action's
    // triggered() would delete the action while it is being activated.
    connect(Settings::instance(), &Settings::recentFoldersChanged, recent, fillRecent, Qt::QueuedConnection);

    auto *settingsMenu = menuBar()->addMenu(tr("&Settings"));
    m_chartsOpenGlAction = settingsMenu->addAction(tr("Draw charts with &OpenGL"));
    m_chartsOpenGlAction->setObjectName(QStringLiteral("chartsOpenGlAction"));
    m_chartsOpenGlAction->setCheckable(true);
    m_chartsOpenGlAction->setChecked(Settings::instance()->chartsOpenGl());
    m_chartsOpenGlAction->setToolTip(tr("Faster redraws of dense charts where OpenGL is available; off by default"));
    connect(m_chartsOpenGlAction, &QAction::toggled, this, [this](bool on) {
        Settings::instance()->setChartsOpenGl(on);
        applyChartsOpenGl();
    });
}

void MainWindow::applyChartsOpenGl()
{
    QString why;
    const bool wanted = Settings::instance()->chartsOpenGl();
    if (!m_charts->setOpenGl(wanted, &why) && wanted)
        showBanner(tr("Charts are drawn without OpenGL: %1.").arg(why));
}

QString MainWindow::askExportPath(const QString &title, const QString &baseName, const QString &filters)
{
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return QFileDialog::getSaveFileName(this, title, QDir(dir).filePath(baseName),
                                        filters.isEmpty() ? tr("JSON lines (*.jsonl *.json);;CSV (*.csv)") : filters);
}

void MainWindow::onExportFiles()
{
    if (m_exportThread)
        return;
    if (m_filesView->shownFiles().isEmpty()) {
        statusBar()->showMessage(tr("No file to export: the Files tab lists none."));
        return;
    }
    const QString path = askExportPath(tr("Export files"), QStringLiteral("hitscope-report.html"),
                                       tr("HTML report (*.html);;JSON (*.json);;CSV (*.csv)"));
    if (!path.isEmpty())
        exportFilesTo(path);
}

void MainWindow::onSweepParamsChosen(const Hitscope::LaunchParams &params)
{
    m_params->setParams(params);
    statusBar()->showMessage(tr("Launch parameters set from the sweep's fastest cell."));
}

void MainWindow::onExportHits()
{
    if (m_exportThread)
        return;
    const QString path = askExportPath(tr("Export hits"), QStringLiteral("hits.jsonl"));
    if (!path.isEmpty())
        exportHitsTo(path);
}

void MainWindow::exportHitsTo(const QString &path)
{
    // Every row the model holds, shown or not yet fetched, as a snapshot (implicitly shared, nothing copied): a
    // running scan goes on appending to the model meanwhile.
    const QVector<QVector<HitRow>> batches = m_model->batches();
    const qint64 total = m_model->totalHits();
    startExport(tr("Export hits"), tr("Exporting %n hit(s) to %1…", nullptr, int(total)), path, total,
                [path, batches](HitExportState &state) {
                    return HitExporter::writeHits(path, batches, &state.error,
                                                  [&state](qint64 n) { state.written = n; }, &state.cancel);
                },
                tr("%n hit(s) exported to %1", nullptr, int(total)), true);
}

void MainWindow::exportFilesTo(const QString &path)
{
    // The list as shown and the hit rows as a snapshot: the scan may go on while the report is written.
    const QVector<FileVerdict> files = m_filesView->shownFiles();
    const FileReport::HitLookup hits = FileReport::lookupIn(m_model->batches());
    const FileReport::Scan scan = m_reportScan;
    const qint64 total = files.size();
    startExport(tr("Export files"), tr("Exporting %n file(s) to %1…", nullptr, int(total)), path, total,
                [path, files, hits, scan](HitExportState &state) {
                    return FileReport::write(path, files, hits, scan, &state.error, [&state](qsizetype n) {
                        state.written = n;
                        return !state.cancel;
                    });
                },
                tr("%n file(s) exported to %1", nullptr, int(total)), false);
}

void MainWindow::startExport(const QString &title, const QString &label, const QString &path, qint64 total,
                             const std::function<bool(HitExportState &)> &write, const QString &done, bool hits)
{
    if (m_exportThread) {
        warn(tr("Export failed"), tr("An export is still being written."));
        return;
    }
    auto state = std::make_shared<HitExportState>();
    m_export = state;
    m_exportThread = QThread::create([state, write] { state->ok = write(*state); });
    auto *dialog = new QProgressDialog(label.arg(QDir::toNativeSeparators(path)), tr("Cancel"), 0, 1000, this);
    dialog->setWindowTitle(title);
    dialog->setWindowModality(Qt::WindowModal);
    dialog->setMinimumDuration(500); // quick exports show no dialog
    dialog->setAutoReset(false);
    dialog->setAutoClose(false);
    auto *poll = new QTimer(dialog);
    // Cancel hides the dialog: no more updates, which would show it again.
    connect(dialog, &QProgressDialog::canceled, this, [state, poll] {
        state->cancel = true;
        poll->stop();
    });
    connect(poll, &QTimer::timeout, dialog, [dialog, state, total] {
        dialog->setValue(total > 0 ? int(1000 * state->written.load() / total) : 0);
    });
    poll->start(100);
    m_exportHitsAction->setEnabled(false);
    connect(m_exportThread, &QThread::finished, this, [this, dialog, poll, state, path, done, hits] {
        poll->stop();
        const bool cancelled = state->cancel;
        dialog->hide(); // not close(): that would report a cancel
        dialog->deleteLater();
        m_exportThread->deleteLater();
        m_exportThread = nullptr;
        m_export.reset();
        m_exportHitsAction->setEnabled(true);
        const QString message = state->ok ? done.arg(QDir::toNativeSeparators(path)) : state->error;
        if (state->ok || cancelled)
            statusBar()->showMessage(message);
        else
            warn(tr("Export failed"), message);
        if (hits)
            Q_EMIT hitsExportFinished(state->ok, message);
        Q_EMIT exportFinished(state->ok, message);
    });
    m_exportThread->start();
}

void MainWindow::onExportTelemetry()
{
    const QString path = askExportPath(tr("Export telemetry"), QStringLiteral("telemetry.jsonl"));
    if (path.isEmpty())
        return;
    QString error;
    if (!HitExporter::writeTelemetry(path, m_telemetry->batches(), &error))
        warn(tr("Export failed"), error);
    else
        statusBar()->showMessage(tr("%n batch(es) exported to %1", nullptr, int(m_telemetry->batches().size()))
                                     .arg(QDir::toNativeSeparators(path)));
}

void MainWindow::onHitActivated(const QModelIndex &index)
{
    const QModelIndex source = m_hitsView->proxy()->mapToSource(index);
    if (!source.isValid())
        return;
    const HitRow &hit = m_model->hit(source.row());
    auto *view = new HexView(hit.path, hit.offset, hit.length, this);
    view->setAttribute(Qt::WA_DeleteOnClose);
    view->show();
}

void MainWindow::onModuleDataRequested(const QModelIndex &index)
{
    const QModelIndex source = m_hitsView->proxy()->mapToSource(index);
    if (!source.isValid())
        return;
    auto *view = new ModuleView(m_model->hit(source.row()).path, this);
    view->setAttribute(Qt::WA_DeleteOnClose);
    view->show();
}

void MainWindow::setupLayout()
{
    m_dropZone = new DropZone(this);
    m_rules = new RuleSetPanel(this);
    m_params = new LaunchParamsPanel(this);
    m_telemetry = new TelemetryLog(this);
    m_charts = new BatchCharts(m_telemetry, this);
    m_timeline = new BatchTimeline(m_telemetry, this);
    // A click on a batch, in the charts or the timeline, selects it in both.
    connect(m_timeline, &BatchTimeline::batchSelected, m_charts, &BatchCharts::selectBatch);
    connect(m_charts, &BatchCharts::batchSelected, m_timeline, &BatchTimeline::selectBatch);
    m_hitsView = new HitsView(m_model, this);
    m_filesView = new FilesView(m_files, m_model, this);
    m_profileView = new ProfileView(this);
    m_problems = new ProblemsPanel(this);

    auto group = [this](const QString &title, QWidget *content) {
        auto *box = new QGroupBox(title, this);
        auto *l = new QVBoxLayout(box);
        l->setContentsMargins(8, 8, 8, 8);
        l->addWidget(content);
        return box;
    };
    auto *left = new QWidget(this);
    auto *leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(group(tr("Scan targets"), m_dropZone), 3);
    leftLayout->addWidget(group(tr("Rule sets"), m_rules), 2);
    leftLayout->addWidget(group(tr("Launch parameters"), m_params), 0);

    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    auto *rulesProxy = new QSortFilterProxyModel(this);
    rulesProxy->setSourceModel(m_ruleSummary);
    rulesProxy->setSortRole(RuleSummaryModel::SortRole);
    auto *rulesTable = m_rulesTable = new QTableView(this);
    rulesTable->setObjectName(QStringLiteral("rulesTable"));
    rulesTable->setModel(rulesProxy);
    rulesTable->setSortingEnabled(true);
    rulesTable->sortByColumn(RuleSummaryModel::HitsColumn, Qt::DescendingOrder);
    rulesTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    rulesTable->setAlternatingRowColors(true);
    rulesTable->verticalHeader()->hide();
    rulesTable->horizontalHeader()->setSectionResizeMode(RuleSummaryModel::RuleColumn, QHeaderView::Stretch);
    m_tabs->addTab(m_filesView, {});
    m_tabs->addTab(m_hitsView, {});
    m_tabs->addTab(rulesTable, {});
    m_tabs->addTab(m_profileView, {});
    m_tabs->addTab(m_problems, {});

    auto *telemetrySplitter = new QSplitter(Qt::Vertical, this);
    telemetrySplitter->setObjectName(QStringLiteral("telemetrySplitter"));
    telemetrySplitter->addWidget(m_charts);
    telemetrySplitter->addWidget(m_timeline);
    telemetrySplitter->setStretchFactor(0, 5);
    telemetrySplitter->setStretchFactor(1, 2);
    telemetrySplitter->setChildrenCollapsible(false);
    auto *chartsBox = group(tr("Per-batch telemetry"), telemetrySplitter);
    m_rightSplitter = new QSplitter(Qt::Vertical, this);
    m_rightSplitter->setObjectName(QStringLiteral("rightSplitter"));
    m_rightSplitter->addWidget(chartsBox);
    m_rightSplitter->addWidget(m_tabs);
    m_rightSplitter->setStretchFactor(0, 3);
    m_rightSplitter->setStretchFactor(1, 2);
    m_rightSplitter->setChildrenCollapsible(false);

    m_mainSplitter = new QSplitter(Qt::Horizontal, this);
    m_mainSplitter->setObjectName(QStringLiteral("mainSplitter"));
    m_mainSplitter->addWidget(left);
    m_mainSplitter->addWidget(m_rightSplitter);
    m_mainSplitter->setStretchFactor(0, 0);
    m_mainSplitter->setStretchFactor(1, 1);
    m_mainSplitter->setSizes({360, 1040});
    m_mainSplitter->setChildrenCollapsible(false);

    m_banner = new QLabel(this);
    m_banner->setObjectName(QStringLiteral("banner"));
    m_banner->setWordWrap(true);
    m_banner->setStyleSheet(QStringLiteral("#banner { background: #fdf3d8; color: #5c4400; border: 1px solid #e8c66a;"
                                           " border-radius: 4px; padding: 6px 10px; }"));
    m_banner->hide();
    m_bannerTimer = new QTimer(this);
    m_bannerTimer->setSingleShot(true);
    m_bannerTimer->setInterval(5000);
    connect(m_bannerTimer, &QTimer::timeout, m_banner, &QWidget::hide);

    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(6, 6, 6, 0);
    layout->addWidget(m_banner);
    layout->addWidget(m_mainSplitter, 1);
    setCentralWidget(central);

    m_progressBar = new QProgressBar(this);
    m_progressBar->setRange(0, 1000);
    m_progressBar->setTextVisible(false);
    m_progressBar->setFixedWidth(260);
    m_progressBar->setMaximumHeight(16);
    m_progressLabel = new QLabel(this);
    m_progressLabel->setObjectName(QStringLiteral("progressLabel"));
    statusBar()->addPermanentWidget(m_progressLabel);
    statusBar()->addPermanentWidget(m_progressBar);
    statusBar()->showMessage(tr("Drop folders or files, pick rule sets, then Scan."));

    connect(m_model, &HitsTableModel::totalChanged, this, &MainWindow::updateTabTitles);
    connect(m_model, &QAbstractItemModel::modelReset, this, &MainWindow::updateTabTitles);
    connect(m_ruleSummary, &QAbstractItemModel::rowsInserted, this, &MainWindow::updateTabTitles);
    connect(m_ruleSummary, &QAbstractItemModel::modelReset, this, &MainWindow::updateTabTitles);
    connect(m_hitsView->table(), &QAbstractItemView::doubleClicked, this, &MainWindow::onHitActivated);
    connect(m_hitsView, &HitsView::hitActivated, this, &MainWindow::onHitActivated);
    connect(m_hitsView, &HitsView::moduleDataRequested, this, &MainWindow::onModuleDataRequested);
    connect(m_problems, &ProblemsPanel::countChanged, this, &MainWindow::updateTabTitles);
    connect(m_files, &QAbstractItemModel::rowsInserted, this, &MainWindow::updateTabTitles);
    connect(m_files, &QAbstractItemModel::modelReset, this, &MainWindow::updateTabTitles);
    connect(m_filesView, &FilesView::exportRequested, this, &MainWindow::onExportFiles);
    connect(m_rules, &RuleSetPanel::editRequested, this, &MainWindow::openRuleEditor);
    connect(m_filesView, &FilesView::selectionChanged, this, [this](const QByteArrayList &paths) {
        if (m_editor)
            m_editor->setSelection(paths);
    });
    connect(m_params, &LaunchParamsPanel::paramsChanged, this, &MainWindow::syncRuleEditor);
    connect(m_params, &LaunchParamsPanel::engineChanged, this, &MainWindow::syncRuleEditor);
    connect(m_params, &LaunchParamsPanel::backendChanged, this, &MainWindow::syncRuleEditor);
    connect(m_params, &LaunchParamsPanel::devicesChanged, this, &MainWindow::syncRuleEditor);
    connect(m_rules, &RuleSetPanel::externalsChanged, this, &MainWindow::syncRuleEditor);
    connect(m_dropZone, &DropZone::pathsChanged, this, [this] { setRunning(m_running); });
    connect(m_rules, &RuleSetPanel::ruleFilesChanged, this, [this] { setRunning(m_running); });
    updateTabTitles();
}

void MainWindow::connectJob()
{
    connect(m_job, &ScanJob::scanStarted, this, [this](const QString &engine, qint64 totalBytes, int totalFiles) {
        m_totalBytes = totalBytes;
        m_totalFiles = totalFiles;
        m_params->setActiveEngine(engine);
        m_reportScan.engine = engine;
        updateReportScan(false, false);
        statusBar()->showMessage(tr("Scanning with %1…").arg(engine));
    });
    connect(m_job, &ScanJob::ruleRejected, this,
            [this](const QString &file, int line, const QString &rule, const QString &reason) {
                const QString where = line > 0 ? QStringLiteral("%1:%2").arg(file).arg(line) : file;
                m_problems->addProblem(ProblemsPanel::Kind::Rule, where,
                                       rule.isEmpty() ? reason : tr("%1: %2").arg(rule, reason));
            });
    connect(m_job, &ScanJob::hitsAvailable, m_model, &HitsTableModel::appendHits);
    connect(m_job, &ScanJob::hitsAvailable, m_ruleSummary, &RuleSummaryModel::appendHits);
    connect(m_job, &ScanJob::filesMatched, m_files, &FilesTableModel::appendFiles);
    connect(m_job, &ScanJob::profileReady, this, [this](const RuleProfile &profile) {
        m_profileView->setProfile(profile);
        updateTabTitles();
    });
    connect(m_job, &ScanJob::problemFound, this, [this](const QByteArray &path, const QString &reason) {
        m_problems->addProblem(ProblemsPanel::Kind::File, QFile::decodeName(path), reason);
    });
    connect(m_job, &ScanJob::notice, this, [this](const QString &message) {
        m_problems->addProblem(ProblemsPanel::Kind::Engine, {}, message);
        showBanner(message);
    });
    connect(m_job, &ScanJob::batchFinished, m_telemetry, &TelemetryLog::append);
    connect(m_job, &ScanJob::progress, this, &MainWindow::onProgress);
    connect(m_job, &ScanJob::finished, this, &MainWindow::onFinished);
    connect(m_job, &ScanJob::failed, this, &MainWindow::onFailed);
    // A change applies from the running scan's next batch; the charts mark that batch.
    connect(m_params, &LaunchParamsPanel::paramsChanged, this, [this](const LaunchParams &params) {
        if (m_running)
            m_job->setParams(params);
    });
}

bool MainWindow::onScan()
{
    if (m_running)
        return false;
    m_problems->clear();

    const QStringList ruleFiles = m_rules->enabledRuleFiles();
    QStringList usableRules;
    for (const QString &file : ruleFiles) {
        const QString why = checkReadable(file, true);
        if (why.isEmpty())
            usableRules.push_back(file);
        else
            m_problems->addProblem(ProblemsPanel::Kind::Rule, file, why);
    }
    QByteArrayList targets;
    const QStringList paths = m_dropZone->paths();
    for (const QString &path : paths) {
        const QString why = checkReadable(path, false);
        if (why.isEmpty())
            targets.push_back(QFile::encodeName(path));
        else
            m_problems->addProblem(ProblemsPanel::Kind::File, path, why);
    }
    if (usableRules.isEmpty()) {
        warn(tr("Cannot scan"), ruleFiles.isEmpty() ? tr("No rule set is enabled: add a rule file and tick it.")
                                                    : tr("None of the enabled rule files can be read (see Problems)."));
        return false;
    }
    if (targets.isEmpty()) {
        warn(tr("Cannot scan"), paths.isEmpty() ? tr("Nothing to scan: drop a folder or files first.")
                                                : tr("None of the targets can be read (see Problems)."));
        return false;
    }
    QString devicesError;
    if (m_params->engine() != EngineChoice::Cpu && !m_params->devicesValid(&devicesError)) {
        warn(tr("Cannot scan"), tr("Devices: %1").arg(devicesError));
        return false;
    }
    if (m_problems->count())
        showBanner(tr("%n input(s) skipped: see Problems.", nullptr, m_problems->count()));

    m_model->clear();
    m_files->clear();
    m_profileView->clear();
    m_ruleSummary->clear();
    m_telemetry->clear();
    m_reportScan = {};
    m_reportScan.ruleFiles = usableRules;
    for (const QByteArray &t : targets)
        m_reportScan.targets.push_back(QFile::decodeName(t));
    updateReportScan(false, false);
    m_totalBytes = 0;
    m_totalFiles = 0;
    m_cancelRequested = false;
    m_progressBar->setRange(0, 0); // busy until the first progress report
    m_progressLabel->setText(tr("Preparing…"));
    m_elapsed.start();
    setRunning(true);
    m_job->setExternals(m_rules->externals());
    m_job->setDevices(m_params->devices());
    m_job->setProfiling(m_profileRulesAction->isChecked());
    m_job->start(usableRules, targets, WalkOptions(), m_params->params(), m_params->engine(), m_params->backend());
    return true;
}

void MainWindow::onCancel()
{
    if (!m_running)
        return;
    m_cancelRequested = true;
    m_cancelAction->setEnabled(false);
    statusBar()->showMessage(tr("Stopping after the current batch…"));
    m_job->cancel();
}

void MainWindow::onProgress(float fraction, qint64 bytesDone, int filesDone)
{
    m_reportScan.filesScanned = filesDone;
    m_reportScan.bytesScanned = bytesDone;
    m_filesView->setScan(m_reportScan);
    m_progressBar->setRange(0, 1000);
    m_progressBar->setValue(qBound(0, int(fraction * 1000), 1000));
    const double seconds = m_elapsed.elapsed() / 1000.0;
    const double rate = seconds > 0.05 ? bytesDone / seconds : 0;
    QString text = tr("%1 / %2 files · %3 / %4")
                       .arg(filesDone)
                       .arg(m_totalFiles)
                       .arg(Format::bytes(bytesDone), Format::bytes(m_totalBytes));
    if (rate > 0) {
        text += tr(" · %1/s").arg(Format::bytes(int64_t(rate)));
        if (m_totalBytes > bytesDone)
            text += tr(" · %1 left").arg(Format::duration((m_totalBytes - bytesDone) / rate * 1000));
    }
    m_progressLabel->setText(text);
}

void MainWindow::onFinished(qint64 files, qint64 bytes, qint64 hits, double wallMs)
{
    setRunning(false);
    m_progressBar->setRange(0, 1000);
    m_progressBar->setValue(1000);
    m_progressLabel->setText(tr("%1 files · %2 · %3").arg(files).arg(Format::bytes(bytes), Format::duration(wallMs)));
    m_reportScan.filesScanned = files;
    m_reportScan.bytesScanned = bytes;
    updateReportScan(true, true);
    statusBar()->showMessage(tr("Scan finished: %n hit(s)", nullptr, int(hits))
                             + (m_problems->count() ? tr(", %n problem(s)", nullptr, m_problems->count()) : QString()));
}

void MainWindow::onFailed(const QString &message)
{
    updateReportScan(true, false);
    setRunning(false);
    m_progressBar->setRange(0, 1000);
    m_progressBar->setValue(0);
    if (m_cancelRequested) {
        statusBar()->showMessage(message);
        m_progressLabel->setText(tr("Stopped"));
        return;
    }
    m_progressLabel->clear();
    statusBar()->showMessage(tr("Scan failed"));
    warn(tr("Scan failed"), message);
}

void MainWindow::updateReportScan(bool ended, bool complete)
{
    // An export while the scan runs, or after it stopped, says so rather than passing for a whole scan's.
    m_reportScan.finished = ended ? QDateTime::currentDateTime() : QDateTime();
    m_reportScan.complete = complete;
    m_filesView->setScan(m_reportScan);
}

void MainWindow::setRunning(bool running)
{
    m_running = running;
    m_scanAction->setEnabled(!running && !m_dropZone->paths().isEmpty() && !m_rules->enabledRuleFiles().isEmpty());
    m_cancelAction->setEnabled(running);
    m_dropZone->setEnabled(!running);
    m_rules->setEnabled(!running);
    m_params->setScanRunning(running);
}

void MainWindow::showBanner(const QString &text)
{
    qWarning().noquote() << text;
    m_banner->setText(text);
    m_banner->show();
    m_bannerTimer->start();
}

void MainWindow::warn(const QString &title, const QString &text)
{
    qWarning().noquote() << title << ":" << text;
    // Window-modal and opened, not exec()'d: the event loop (and a running scan's signals) keeps going.
    auto *box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

QList<RuleDiagnostic> MainWindow::costWarnings(const RuleSet &rules, const QString &file)
{
    QList<RuleDiagnostic> out;
    const QFileInfo edited(file);
    for (int r = 0; r < int(rules.rules.size()); ++r) {
        const Rule &rule = rules.rules[size_t(r)];
        // Only the edited file's rules: an included collection is neither shown here nor analysed again at each
        // check.
        if (QFileInfo(rule.sourceFile) != edited)
            continue;
        for (const RuleCostWarning &w : RuleCost::analyzeRule(rules, r))
            out.push_back({ RuleDiagnostic::Severity::Warning, rule.sourceFile, rule.line, rule.name,
                            tr("may be slow: %1").arg(w.text) });
    }
    return out;
}

RuleEditor *MainWindow::ruleEditor()
{
    if (!m_editor) {
        // A window of its own, owned by this one: rules are written beside the results, not instead of them.
        m_editor = new RuleEditor(this);
        m_editor->setWindowFlag(Qt::Window);
        m_editor->resize(900, 760);
        m_editor->setSelection(m_filesView->selectedPaths());
        syncRuleEditor();
        // Beside the front end's errors, the strings that would make a rule slow (what the Profile tab would
        // give as reasons), found without scanning.
        connect(m_editor, &RuleEditor::rulesChecked, this, [this](std::shared_ptr<const RuleSet> rules) {
            m_editor->addWarnings(QStringLiteral("cost"), costWarnings(*rules, m_editor->effectivePath()));
        });
    }
    return m_editor;
}

void MainWindow::openRuleEditor(const QString &path)
{
    RuleEditor *editor = ruleEditor();
    editor->show();
    editor->raise();
    editor->activateWindow();
    if (path.isEmpty() || QFileInfo(path) == QFileInfo(editor->filePath()) || !editor->maybeSave())
        return;
    QString error;
    if (!editor->openFile(path, &error))
        warn(tr("Cannot open %1").arg(QDir::toNativeSeparators(path)), error);
}

void MainWindow::syncRuleEditor()
{
    // Test on selection scans as the window would: the same engine, parameters, devices and externals.
    if (!m_editor)
        return;
    m_editor->setEngine(m_params->engine(), m_params->backend());
    m_editor->setLaunchParams(m_params->params());
    QString devicesError;
    if (m_params->devicesValid(&devicesError))
        m_editor->setDevices(m_params->devices());
    m_editor->setExternals(m_rules->externals());
}

QStringList MainWindow::viewNames()
{
    return { QStringLiteral("files"), QStringLiteral("hits"), QStringLiteral("rules"), QStringLiteral("profile"),
             QStringLiteral("problems") };
}

bool MainWindow::showView(const QString &name)
{
    QWidget *const pages[] = { m_filesView, m_hitsView, m_rulesTable, m_profileView, m_problems };
    const qsizetype index = viewNames().indexOf(name.toLower());
    if (index < 0)
        return false;
    m_tabs->setCurrentWidget(pages[index]);
    // The view asked for gets at least half of the height the charts share with it.
    const QList<int> sizes = m_rightSplitter->sizes();
    const int total = sizes.value(0) + sizes.value(1);
    if (total > 0 && sizes.value(1) < total / 2)
        m_rightSplitter->setSizes({ total - total * 11 / 20, total * 11 / 20 });
    if (pages[index] == m_filesView && m_filesView->proxy()->rowCount() > 0 && m_filesView->selectedPaths().isEmpty())
        m_filesView->table()->selectRow(0);
    return true;
}

void MainWindow::updateTabTitles()
{
    const auto title = [this](QWidget *page, const QString &text) { m_tabs->setTabText(m_tabs->indexOf(page), text); };
    title(m_filesView, tr("Files (%1)").arg(m_files->rowCount()));
    title(m_hitsView, tr("Hits (%1)").arg(m_model->totalHits()));
    title(m_rulesTable, tr("Rules (%1)").arg(m_ruleSummary->rowCount()));
    const int profiled = m_profileView->model()->rowCount();
    title(m_profileView, profiled ? tr("Profile (%1)").arg(profiled) : tr("Profile"));
    m_tabs->setTabToolTip(m_tabs->indexOf(m_profileView),
                          profiled ? QString() : tr("Tick Tools > Profile rules, then scan"));
    const int problems = m_problems->count();
    title(m_problems, tr("Problems (%1)").arg(problems));
    m_tabs->setTabIcon(m_tabs->indexOf(m_problems),
                       problems ? style()->standardIcon(QStyle::SP_MessageBoxWarning) : QIcon());
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (m_editor && !m_editor->maybeSave()) {
        event->ignore();
        return;
    }
    if (m_exportThread) {
        const auto answer = QMessageBox::question(
            this, tr("Export"), tr("An export is still being written. Quit anyway? The export is cancelled and no file is written."));
        if (answer != QMessageBox::Yes) {
            event->ignore();
            return;
        }
    }
    if (m_running) {
        m_cancelRequested = true;
        m_job->cancel();
    }
    Settings::instance()->setLaunchParams(m_params->params());
    Settings::instance()->setEngine(m_params->engine());
    Settings::instance()->setBackend(m_params->backend());
    Settings::instance()->setRuleFiles(ruleFileSettings(m_rules));
    saveSettings();
    QMainWindow::closeEvent(event);
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("MainWindow"));
    if (settings.value(QStringLiteral("version")).toInt() == kMainWindowVersion) {
        restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
        restoreState(settings.value(QStringLiteral("state")).toByteArray(), kMainWindowVersion);
        m_mainSplitter->restoreState(settings.value(QStringLiteral("mainSplitter")).toByteArray());
        m_rightSplitter->restoreState(settings.value(QStringLiteral("rightSplitter")).toByteArray());
    } else {
        resize(1400, 880);
    }
}

void MainWindow::saveSettings()
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("MainWindow"));
    settings.setValue(QStringLiteral("version"), kMainWindowVersion);
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("state"), saveState(kMainWindowVersion));
    settings.setValue(QStringLiteral("mainSplitter"), m_mainSplitter->saveState());
    settings.setValue(QStringLiteral("rightSplitter"), m_rightSplitter->saveState());
    settings.endGroup();
    settings.sync();
    if (settings.status() != QSettings::NoError)
        qWarning() << "could not save the window layout to" << settings.fileName() << settings.status();
}

} // namespace Hitscope
