// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>
#include <memory>

#include <QElapsedTimer>
#include <QMainWindow>
#include <QStringList>
#include <QVector>

#include "engine/batchtelemetry.h"
#include "engine/launchparams.h"
#include "report/filereport.h"
#include "rulediagnostic.h"

class QAction;
class QLabel;
class QProgressBar;
class QModelIndex;
class QSplitter;
class QTableView;
class QTabWidget;
class QThread;
class QTimer;

namespace Hitscope {

struct RuleSet;

class BatchCharts;
class BatchTimeline;
class TelemetryLog;
class DropZone;
class FilesTableModel;
class FilesView;
class HitsTableModel;
class HitsView;
class LatencyProbe;
class LaunchParamsPanel;
class ProblemsPanel;
class ProfileView;
class RuleEditor;
class RuleSetPanel;
class RuleSummaryModel;
class ScanJob;
struct HitExportState;

/// The desktop application's window: targets and rule sets on the left, live charts and the hits table on the
/// right, progress in the status bar. The scan runs in ScanJob's own thread; this window only reacts to signals.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    DropZone *dropZone() const { return m_dropZone; }
    RuleSetPanel *ruleSetPanel() const { return m_rules; }
    LaunchParamsPanel *launchParamsPanel() const { return m_params; }
    BatchCharts *charts() const { return m_charts; }
    BatchTimeline *timeline() const { return m_timeline; }
    HitsView *hitsView() const { return m_hitsView; }
    HitsTableModel *hitsModel() const { return m_model; }
    FilesView *filesView() const { return m_filesView; }
    FilesTableModel *filesModel() const { return m_files; }
    QTabWidget *resultTabs() const { return m_tabs; }
    /// The rule editor's window (made on first use).
    RuleEditor *ruleEditor();
    QAction *ruleEditorAction() const { return m_ruleEditorAction; }
    ProfileView *profileView() const { return m_profileView; }
    /// Tools > Profile rules (persisted): scans measure each rule's cost for the Profile tab.
    QAction *profileRulesAction() const { return m_profileRulesAction; }
    RuleSummaryModel *ruleSummaryModel() const { return m_ruleSummary; }
    /// Every batch of the last (or running) scan, for export; the charts keep only a window.
    const QVector<BatchTelemetry> &telemetry() const;
    TelemetryLog *telemetryLog() const { return m_telemetry; }
    QAction *exportHitsAction() const { return m_exportHitsAction; }
    QAction *exportTelemetryAction() const { return m_exportTelemetryAction; }
    ProblemsPanel *problemsPanel() const { return m_problems; }
    ScanJob *scanJob() const { return m_job; }
    QAction *scanAction() const { return m_scanAction; }
    QAction *cancelAction() const { return m_cancelAction; }
    /// Settings menu: draw the charts with OpenGL (persisted; falls back to software with a banner).
    QAction *chartsOpenGlAction() const { return m_chartsOpenGlAction; }
    bool isScanning() const { return m_running; }
    /// Measures the GUI thread's event-loop latency while a scan runs (started on scanStarted).
    LatencyProbe *latencyProbe() const { return m_latency; }
    /// An export of hits is being written (exportHitsTo()).
    bool isExportingHits() const { return m_exportThread != nullptr; }
    /// The names showView() takes.
    static QStringList viewNames();
    /// Brings a view of the results to the front (for `--view` and the documentation's pictures): "files" also
    /// selects the top file so its details show. False for an unknown name.
    bool showView(const QString &name);

public Q_SLOTS:
    /// Validates the inputs, then starts a scan of the listed targets with the enabled rule files.
    /// Returns false (having told the user why) when nothing could start.
    bool onScan();
    void onCancel();
    void onExportHits();
    /// Writes every hit so far to `path` on a thread of its own, with a progress dialog that can cancel it:
    /// millions of hits take seconds, and the window (and a running scan) goes on meanwhile. Ends with
    /// hitsExportFinished().
    void exportHitsTo(const QString &path);
    void onExportTelemetry();
    /// Shows the rule editor; with a path, opens that file in it (after asking about unsaved changes).
    void openRuleEditor(const QString &path = {});
    /// Asks where, then writes the Files view's list as HTML, JSON or CSV (by the name's suffix).
    void onExportFiles();
    /// Writes the Files view's list, as shown, to `path` on a thread of its own, as exportHitsTo() does. Ends with
    /// exportFinished().
    void exportFilesTo(const QString &path);
    /// Opens the hex view of the hit at `index` of the hits table (a proxy index).
    void onHitActivated(const QModelIndex &index);
    void onModuleDataRequested(const QModelIndex &index);
    /// Makes `params` (chosen in the parameter sweep) the current launch parameters.
    void onSweepParamsChosen(const Hitscope::LaunchParams &params);

Q_SIGNALS:
    /// An export of hits ended: written (the status message), or failed or cancelled (the reason).
    void hitsExportFinished(bool ok, const QString &message);
    /// Any export ended (hits or files).
    void exportFinished(bool ok, const QString &message);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void setupActions();
    void setupMenus();
    QString askExportPath(const QString &title, const QString &baseName, const QString &filters = {});
    void setupLayout();
    void connectJob();
    void setRunning(bool running);
    void syncRuleEditor();
    /// Runs `write` on the export thread, with a progress dialog of `total` steps that can cancel it.
    void startExport(const QString &title, const QString &label, const QString &path, qint64 total,
                     const std::function<bool(HitExportState &)> &write, const QString &done, bool hits);
    static QList<RuleDiagnostic> costWarnings(const RuleSet &rules, const QString &file);
    void applyChartsOpenGl();
    void showBanner(const QString &text);
    void warn(const QString &title, const QString &text);
    void onProgress(float fraction, qint64 bytesDone, int filesDone);
    void onFinished(qint64 files, qint64 bytes, qint64 hits, double wallMs);
    void onFailed(const QString &message);
    void updateTabTitles();
    void restoreSettings();
    void saveSettings();

    ScanJob *m_job = nullptr;
    HitsTableModel *m_model = nullptr;
    DropZone *m_dropZone = nullptr;
    RuleSetPanel *m_rules = nullptr;
    LaunchParamsPanel *m_params = nullptr;
    BatchCharts *m_charts = nullptr;
    BatchTimeline *m_timeline = nullptr;
    HitsView *m_hitsView = nullptr;
    FilesTableModel *m_files = nullptr;
    FilesView *m_filesView = nullptr;
    ProblemsPanel *m_problems = nullptr;
    QTabWidget *m_tabs = nullptr;
    QTableView *m_rulesTable = nullptr;
    QSplitter *m_mainSplitter = nullptr;
    QSplitter *m_rightSplitter = nullptr;
    QLabel *m_banner = nullptr;
    QTimer *m_bannerTimer = nullptr;
    QProgressBar *m_progressBar = nullptr;
    QLabel *m_progressLabel = nullptr;
    QAction *m_scanAction = nullptr;
    QAction *m_cancelAction = nullptr;
    QAction *m_exportHitsAction = nullptr;
    QAction *m_exportTelemetryAction = nullptr;
    QAction *m_chartsOpenGlAction = nullptr;
    QAction *m_ruleEditorAction = nullptr;
    QAction *m_profileRulesAction = nullptr;
    ProfileView *m_profileView = nullptr;
    RuleEditor *m_editor = nullptr;
    RuleSummaryModel *m_ruleSummary = nullptr;
    LatencyProbe *m_latency = nullptr;
    TelemetryLog *m_telemetry = nullptr; // the scan's batches: what the charts plot and the export writes
    QThread *m_exportThread = nullptr;
    std::shared_ptr<HitExportState> m_export;
    QElapsedTimer m_elapsed;
    qint64 m_totalBytes = 0;
    int m_totalFiles = 0;
    bool m_running = false;
    bool m_cancelRequested = false;
    void updateReportScan(bool ended, bool complete);
    /// What the Files view's report says about the scan: set as it starts, completed as it ends.
    FileReport::Scan m_reportScan;
};

} // namespace Hitscope
