// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>

#include <QByteArrayList>
#include <QObject>
#include <QStringList>
#include <QThread>

#include "engine/batchtelemetry.h"
#include "engine/devicechoice.h"
#include "engine/enginechoice.h"
#include "engine/hit.h"
#include "engine/launchparams.h"
#include "gpu/gpudeviceinfo.h"
#include "report/fileverdict.h"
#include "report/hitrow.h"
#include "rules/rulesources.h"
#include "rules/yaraconditioncompiler.h"
#include "scan/filewalker.h"
#include "scan/ruleprofile.h"

class QOffscreenSurface;

namespace Hitscope {

struct RuleSet;
struct PatternCatalog;

/**
 * Runs a scan on a thread of its own (which owns the GPU device and every QRhi resource, when the GPU engine
 * is used) and reports through queued signals, so the GUI thread never blocks. Every start() ends with
 * exactly one of finished() or failed(); a cancel counts as a failure ("Scan stopped.").
 * Launch parameters may change while it runs: setParams() applies from the next batch.
 *
 * Threading: create and use it on one thread (the GUI thread); every signal is emitted on that thread, in order
 * (hits and telemetry of a run always arrive before its finished() or failed()). cancel() and setParams() may
 * also be called from any thread.
 */
class ScanJob : public QObject
{
    Q_OBJECT
public:
    explicit ScanJob(QObject *parent = nullptr);
    ~ScanJob() override;

    /// True from start() until its finished() or failed() has been emitted. Call on the job's thread.
    bool isRunning() const;

public Q_SLOTS:
    /// Loads the rule files, compiles them, and scans `paths`. Rejected rules are reported through
    /// ruleRejected() before the scan starts; if no rule is usable, failed() is emitted.
    /// A `params.segmentBytes` of 0 or less means the engine's preferred segment size (as the CLI's default).
    /// `backend` restricts the GPU engine to one QRhi backend, as the CLI's --backend: when it offers no compute,
    /// EngineChoice::Auto scans on the CPU after a notice() that says why, and EngineChoice::Gpu fails.
    /// A start() while a scan runs is ignored with a warning (the running scan still ends with its own single
    /// finished() or failed(); a failed() for the ignored call would read as the running scan's end).
    void start(const QStringList &ruleFiles, const QByteArrayList &paths, const Hitscope::WalkOptions &walk,
               const Hitscope::LaunchParams &params, Hitscope::EngineChoice engine,
               Hitscope::GpuBackend backend = Hitscope::GpuBackend::Auto);
    void setParams(const Hitscope::LaunchParams &params);
    /// YARA external variables (yara's -d) for the scans started after this call.
    void setExternals(const Hitscope::YaraExternals &externals);
    /// Texts the scans started after this call load instead of rule files on disk (an editor's unsaved buffer
    /// for its path; RuleSources): nothing is written to the user's folders.
    void setRuleSources(const Hitscope::RuleSources &sources);
    /// The GPU devices the next start() uses (default: every hardware GPU; see DevicePool::choose).
    void setDevices(const Hitscope::DeviceChoice &devices);
    /// Whether the scans started after this call profile their rules (Scanner::setProfiling; off by default):
    /// profileReady() then comes before finished().
    void setProfiling(bool on);
    void cancel();

Q_SIGNALS:
    void scanStarted(const QString &engineDescription, qint64 totalBytes, int totalFiles);
    void ruleRejected(const QString &file, int line, const QString &rule, const QString &reason);
    void hitsAvailable(const QVector<Hitscope::HitRow> &rows);
    /// The files of the hits just given that matched rules, right after hitsAvailable(): each verdict's rows
    /// count from the first row this run gave.
    void filesMatched(const QVector<Hitscope::FileVerdict> &files);
    void problemFound(const QByteArray &path, const QString &reason);
    void notice(const QString &message);
    void batchFinished(const Hitscope::BatchTelemetry &telemetry);
    /// 0..1, throttled to steps of at least 0.1%; files are the files completed so far.
    void progress(float fraction, qint64 bytesDone, int filesDone);
    /// The rules' profile, slowest first, just before finished() of a scan started with setProfiling(true).
    void profileReady(const Hitscope::RuleProfile &profile);
    void finished(qint64 files, qint64 bytes, qint64 hits, double wallMs);
    void failed(const QString &message);

private:
    class Worker;

    QThread m_thread;
    Worker *m_worker = nullptr;
    bool m_running = false;
    Hitscope::YaraExternals m_externals;
    Hitscope::RuleSources m_sources;
    Hitscope::DeviceChoice m_devices;
    bool m_profiling = false;
    /// OpenGL fallback surface for a device made on the worker thread: it must come from the GUI thread.
    QOffscreenSurface *m_fallbackSurface = nullptr;
};

} // namespace Hitscope

Q_DECLARE_METATYPE(Hitscope::GpuBackend)
