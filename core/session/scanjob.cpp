// SPDX-License-Identifier: GPL-3.0-or-later
#include "scanjob.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#ifdef Q_OS_LINUX
#include <sys/resource.h>
#include <unistd.h>
#endif

#include <QGuiApplication>
#include <QOffscreenSurface>
#include <QtGui/private/qguiapplication_p.h>
#include <qpa/qplatformintegration.h>

#include "automata/patterncatalog.h"
#include "cpu/cpuengine.h"
#include "gpu/gpuengine.h"
#include "report/previewreader.h"
#include "scan/scanner.h"
#include "session/devicepool.h"
#include "session/fallbackengine.h"
#include "session/rulesetup.h"

namespace Hitscope {

namespace {

constexpr int kPreviewBytes = 64;

// Nice value of the scan thread and of every thread it starts (Linux threads inherit it): the engines keep every
// core busy, and at the same priority the GUI thread and the display server waited for a core for up to a
// quarter of a second at a time (measured on 2 cores, docs/benchmarks.md). Idle cores still go to the scan.
constexpr int kScanNice = 10;

struct Request
{
    QStringList ruleFiles;
    QByteArrayList paths;
    WalkOptions walk;
    LaunchParams params;
    EngineChoice engine = EngineChoice::Auto;
    GpuBackend backend = GpuBackend::Auto;
    QOffscreenSurface *fallbackSurface = nullptr;
    YaraExternals externals;
    DeviceChoice devices;
    RuleSources sources;
    bool profiling = false;
};

} // namespace

/*
 * Lives on ScanJob::m_thread. run() blocks that thread for a whole scan, so cancel() and setParams() do not go
 * through its event loop: they reach the running Scanner directly, under m_mutex.
 */
class ScanJob::Worker : public QObject
{
public:
    explicit Worker(ScanJob *job)
        : m_job(job)
    {
    }

    void run(const Request &request);

    // Any thread.
    void cancel()
    {
        m_cancelled = true;
        std::lock_guard lock(m_mutex);
        if (m_scanner)
            m_scanner->cancel();
    }
    void setParams(const LaunchParams &params)
    {
        std::lock_guard lock(m_mutex);
        m_latestParams = params;
        if (m_scanner)
            m_scanner->setParams(resolved(params));
    }
    // The job's thread, before a run is queued.
    void reset()
    {
        m_cancelled = false;
        std::lock_guard lock(m_mutex);
        m_latestParams.reset();
    }

private:
    static LaunchParams resolved(LaunchParams p)
    {
        // Automatic batches (0: the engine's size, chosen by the Scanner) are adaptive, as the CLI's; a size the
        // user set is every batch's, so that its effect shows on the charts.
        p.rampBatches = p.batchBytes <= 0;
        return p;
    }
    // Runs `f` on the job's thread, after everything posted before it.
    template <typename F>
    void post(F &&f)
    {
        QMetaObject::invokeMethod(m_job, std::forward<F>(f), Qt::QueuedConnection);
    }
    void fail(const QString &message, bool stopped = false)
    {
        if (!stopped) // a stop was asked for: not worth a warning
            qWarning("Hitscope scan failed: %s", qPrintable(message));
        post([job = m_job, message] {
            job->m_running = false;
            Q_EMIT job->failed(message);
        });
    }

    static void lowerPriority();
    std::jthread startSizer(const Request &request, int64_t &totalBytes, int &totalFiles);
    void reportRules(const RuleSetup &setup);
    bool chooseGpu(const Request &request, std::unique_ptr<Engine> &gpu);
    static int addRows(const FileResult &fr, const RuleSet &rules, std::vector<char> &listed, QVector<HitRow> &rows);
    /// `profile`, when profiled, goes out just before finished().
    void finish(const ScanSummary &summary, const QString &stopped, const RuleProfile *profile);

    ScanJob *const m_job;
    std::atomic_bool m_cancelled { false };
    std::mutex m_mutex;
    Scanner *m_scanner = nullptr; // guarded by m_mutex
    std::optional<LaunchParams> m_latestParams; // guarded by m_mutex: setParams() during this run
};

void ScanJob::Worker::lowerPriority()
{
#ifdef Q_OS_LINUX
    // Linux nice values are per thread: this lowers only the scan thread, before it starts any other.
    const id_t self = id_t(gettid());
    if (getpriority(PRIO_PROCESS, self) < kScanNice && setpriority(PRIO_PROCESS, self, kScanNice) != 0)
        qWarning("Hitscope: could not lower the scan thread's priority");
#endif
}

// Sizes only, for the progress bar (problems are reported by the scan itself).
std::jthread ScanJob::Worker::startSizer(const Request &request, int64_t &totalBytes, int &totalFiles)
{
    return std::jthread([this, &request, &totalBytes, &totalFiles](std::stop_token stop) {
        std::atomic_bool stopped { false };
        FileWalker walker(request.walk);
        // The walker looks at one flag: the user's cancel and the jthread's stop reach it at every entry.
        walker.setOnEntry([&] {
            if (m_cancelled || stop.stop_requested())
                stopped = true;
        });
        walker.walk(
            request.paths,
            [&](const FileEntry &e) {
                totalBytes += e.size;
                ++totalFiles;
            },
            [](const FileProblem &) {}, &stopped);
    });
}

void ScanJob::Worker::reportRules(const RuleSetup &setup)
{
    ScanJob *const job = m_job;
    for (const Rejection &r : setup.rejections)
        post([job, r] { Q_EMIT job->ruleRejected(r.file, r.line, r.rule, r.reason); });
    // yara's warnings and the format a rule file was read as: told, nothing refused.
    for (const QString &note : setup.rules.notes)
        post([job, note] { Q_EMIT job->notice(note); });
}

// False after a fail(): no GPU engine, where one was asked for.
bool ScanJob::Worker::chooseGpu(const Request &request, std::unique_ptr<Engine> &gpu)
{
    RhiDeviceOptions options;
    options.backend = request.backend;
    options.fallbackSurface = request.fallbackSurface;
    QString notice, error;
    gpu = DevicePool::choose(request.devices, request.engine == EngineChoice::Gpu, options, &notice, &error);
    if (!error.isEmpty()) {
        // RhiDevice's reason already names the backend that was asked for.
        fail(ScanJob::tr("No GPU engine: %1").arg(error));
        return false;
    }
    if (!notice.isEmpty()) {
        const QString n = notice + QLatin1Char('.');
        post([job = m_job, n] { Q_EMIT job->notice(n); });
    }
    return true;
}

// `listed`, a flag per rule, is all clear before and after. Returns the number of rows added.
int ScanJob::Worker::addRows(const FileResult &fr, const RuleSet &rules, std::vector<char> &listed,
                             QVector<HitRow> &rows)
{
    const qsizetype before = rows.size();
    const PreviewReader preview(fr.path);
    // No reserve() per file: growing to the exact size each time copied the batch's rows once per file.
    for (const Hit &h : fr.hits) {
        const Pattern &p = rules.patterns[size_t(h.pattern)];
        listed[size_t(p.ruleIndex)] = 1;
        rows.push_back({ fr.path, rules.rules[size_t(p.ruleIndex)].name, p.id, h.offset, h.length,
                         preview.read(h.offset, h.length, kPreviewBytes) });
    }
    // A YARA rule can match with no string to show (a condition on filesize or header bytes, or only
    // private strings): one row says so, or the match would be invisible here.
    for (int r : fr.rules) {
        if (!listed[size_t(r)] && rules.rules[size_t(r)].isYara())
            rows.push_back({ fr.path, rules.rules[size_t(r)].name, QStringLiteral("(condition)"), 0, 0, {} });
    }
    for (const Hit &h : fr.hits)
        listed[size_t(rules.patterns[size_t(h.pattern)].ruleIndex)] = 0;
    return int(rows.size() - before);
}

void ScanJob::Worker::finish(const ScanSummary &summary, const QString &stopped, const RuleProfile *profile)
{
    if (!summary.error.isEmpty()) {
        fail(summary.error);
    } else if (summary.cancelled || m_cancelled) {
        fail(stopped, true);
    } else {
        if (profile)
            post([job = m_job, p = *profile] { Q_EMIT job->profileReady(p); });
        post([job = m_job, s = summary] {
            job->m_running = false;
            Q_EMIT job->finished(s.files, s.bytes, s.hits, s.wallMs);
        });
    }
}

void ScanJob::Worker::run(const Request &request)
{
    const QString stopped = ScanJob::tr("Scan stopped.");
    ScanJob *const job = m_job;
    lowerPriority();

    // Walked while the rules load and compile: the compile leaves the other cores idle most of its time.
    int64_t totalBytes = 0;
    int totalFiles = 0;
    // Every early return below ends the walk: the jthread asks it to stop, then joins it.
    std::jthread sizer = startSizer(request, totalBytes, totalFiles);

    RuleSetup::Options options;
    options.files = request.ruleFiles;
    options.externals = request.externals;
    options.sources = request.sources;
    options.compile.threads = request.params.threads;
    const RuleSetup setup = RuleSetup::run(options);
    const RuleSet &rules = setup.rules;
    const PatternCatalog &catalog = setup.catalog;
    reportRules(setup);

    if (!setup.usable()) {
        fail(request.ruleFiles.isEmpty()
                 ? ScanJob::tr("No rule file was given.")
                 : ScanJob::tr("No usable rule in %1.").arg(request.ruleFiles.join(QLatin1String(", "))));
        return;
    }
    if (m_cancelled) {
        fail(stopped, true);
        return;
    }

    // The engine is made, used and destroyed on this thread, which so owns the QRhi and its resources.
    std::unique_ptr<Engine> gpu;
    CpuEngine cpu;
    if (request.engine != EngineChoice::Cpu && !chooseGpu(request, gpu))
        return;
    Engine &engine = gpu ? static_cast<Engine &>(*gpu) : static_cast<Engine &>(cpu);
    QString description = ScanJob::tr("CPU");
    if (auto *one = dynamic_cast<FallbackEngine *>(gpu.get()))
        description = ScanJob::tr("GPU: %1 (%2)").arg(one->gpu().device().deviceName(), one->gpu().device().backendName());
    else if (auto *pool = dynamic_cast<DevicePool *>(gpu.get()))
        description = ScanJob::tr("GPU: %1").arg(pool->description());

    sizer.join();
    if (m_cancelled) {
        fail(stopped, true);
        return;
    }
    post([job, description, totalBytes, totalFiles] {
        Q_EMIT job->scanStarted(description, qint64(totalBytes), totalFiles);
    });

    Scanner scanner(rules, catalog, engine);
    scanner.setProfiling(request.profiling);
    LaunchParams params;
    {
        std::lock_guard lock(m_mutex);
        params = resolved(m_latestParams.value_or(request.params));
        m_scanner = &scanner;
    }

    QVector<HitRow> rows; // since the last batch: one hitsAvailable() per batch, not one signal per hit
    QVector<FileVerdict> verdicts; // since the last batch, as rows
    int rowsPosted = 0; // rows of every batch before: where the next file's hits begin in the GUI's table
    const auto postRows = [&] {
        if (!rows.isEmpty() || !verdicts.isEmpty()) {
            rowsPosted += int(rows.size());
            post([job, r = std::exchange(rows, {}), v = std::exchange(verdicts, {})] {
                if (!r.isEmpty())
                    Q_EMIT job->hitsAvailable(r);
                if (!v.isEmpty())
                    Q_EMIT job->filesMatched(v);
            });
        }
    };
    int64_t bytesDone = 0;
    int filesDone = 0;
    float lastProgress = -1;
    Scanner::Callbacks cb;
    std::vector<char> listed(rules.rules.size(), 0);
    cb.fileDone = [&](const FileResult &fr) {
        ++filesDone;
        if (fr.hits.empty() && fr.rules.empty())
            return;
        const int first = rowsPosted + int(rows.size());
        const int added = addRows(fr, rules, listed, rows);
        if (!fr.rules.empty())
            verdicts.push_back(FileVerdict::of(fr, rules, first, added));
    };
    cb.problem = [&](const FileProblem &p) { post([job, p] { Q_EMIT job->problemFound(p.path, p.reason); }); };
    cb.notice = [&](const QString &n) { post([job, n] { Q_EMIT job->notice(n); }); };
    cb.batchDone = [&](const BatchTelemetry &t) {
        // Scanner::run() clears its stop flag on entry: a cancel() that came just before is repeated here.
        if (m_cancelled)
            scanner.cancel();
        postRows();
        post([job, t] { Q_EMIT job->batchFinished(t); });
        bytesDone += t.bytes;
        const float fraction = totalBytes > 0 ? float(std::min<double>(1.0, double(bytesDone) / double(totalBytes)))
                                              : (totalFiles > 0 ? float(filesDone) / float(totalFiles) : 1.f);
        // Don't spam the progress bar: at most 1000 steps.
        if (fraction - lastProgress >= 0.001f || (fraction >= 1.f && lastProgress < 1.f)) {
            lastProgress = fraction;
            post([job, fraction, b = qint64(bytesDone), f = filesDone] { Q_EMIT job->progress(fraction, b, f); });
        }
    };

    ScanSummary summary;
    if (!m_cancelled)
        summary = scanner.run(request.paths, request.walk, params, cb);
    {
        std::lock_guard lock(m_mutex);
        m_scanner = nullptr;
    }
    postRows();
    finish(summary, stopped, request.profiling ? &scanner.profile() : nullptr);
}

ScanJob::ScanJob(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<HitRow>();
    qRegisterMetaType<QVector<HitRow>>();
    qRegisterMetaType<FileVerdict>();
    qRegisterMetaType<QVector<FileVerdict>>();
    qRegisterMetaType<BatchTelemetry>();
    qRegisterMetaType<LaunchParams>();
    qRegisterMetaType<WalkOptions>();
    qRegisterMetaType<EngineChoice>();
    qRegisterMetaType<GpuBackend>();
    qRegisterMetaType<RuleProfile>();

    m_thread.setObjectName(QStringLiteral("Hitscope scan"));
    m_worker = new Worker(this);
    m_worker->moveToThread(&m_thread);
    m_thread.start();
}

ScanJob::~ScanJob()
{
    m_worker->cancel();
    m_thread.quit();
    m_thread.wait();
    // The thread has ended, so the worker (and the engine it owned) are gone from it; deleting here is safe.
    delete m_worker;
    // After the device that may have used it (destroyed with the run, on the worker thread).
    delete m_fallbackSurface;
}

bool ScanJob::isRunning() const
{
    return m_running;
}

void ScanJob::start(const QStringList &ruleFiles, const QByteArrayList &paths, const WalkOptions &walk,
                    const LaunchParams &params, EngineChoice engine, GpuBackend backend)
{
    if (m_running) {
        // Ignored rather than answered with failed(): that would read as the end of the running scan.
        qWarning("Hitscope: a scan is already running; start() ignored");
        return;
    }
    // OpenGL needs its fallback surface made here, on the GUI thread, when a device is made on the worker.
    const bool mayUseOpenGl = backend == GpuBackend::Auto || backend == GpuBackend::OpenGL;
    if (engine != EngineChoice::Cpu && mayUseOpenGl && !m_fallbackSurface
        && qobject_cast<QGuiApplication *>(QCoreApplication::instance())) {
        QPlatformIntegration *platform = QGuiApplicationPrivate::platformIntegration();
        if (platform && platform->hasCapability(QPlatformIntegration::OpenGL))
            m_fallbackSurface = RhiDevice::createFallbackSurface();
    }
    m_running = true;
    m_worker->reset();
    Request request { ruleFiles, paths, walk, params, engine, backend, m_fallbackSurface, m_externals, m_devices,
                      m_sources, m_profiling };
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, request] { worker->run(request); }, Qt::QueuedConnection);
}

void ScanJob::setDevices(const DeviceChoice &devices)
{
    m_devices = devices;
}

void ScanJob::setRuleSources(const RuleSources &sources)
{
    m_sources = sources;
}

void ScanJob::setProfiling(bool on)
{
    m_profiling = on;
}

void ScanJob::setExternals(const YaraExternals &externals)
{
    m_externals = externals;
}

void ScanJob::setParams(const LaunchParams &params)
{
    m_worker->setParams(params);
}

void ScanJob::cancel()
{
    m_worker->cancel();
}

} // namespace Hitscope
