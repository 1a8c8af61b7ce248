// SPDX-License-Identifier: GPL-3.0-or-later
// hitscope-bench: scans a folder with Hitscope and, in the same run, with its peers (Vectorscan, yara) and
// the read-only ceiling, and prints one table. Speed is measured here, never in unit tests.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>

#include <sys/stat.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>

#include "automata/atomprefilter.h"
#include "automata/patterncatalog.h"
#include "cpu/cpuengine.h"
#include "engine/enginechoice.h"
#include "gpu/gpuengine.h"
#include "gpu/headlessplatform.h"
#include "scan/batcher.h"
#include "peers.h"
#include "scan/filewalker.h"
#include "session/devicepool.h"
#include "session/fallbackengine.h"
#include "session/rulesetup.h"
#include "scan/scanner.h"
#include "util/bytesize.h"
#include "util/heaptuning.h"
#include "util/openfilelimit.h"

using namespace Hitscope;

namespace {

void usage()
{
    std::fputs("Usage: hitscope-bench [options] -r RULES [-r RULES...] DIR\n"
               "  -r, --rules FILE     rule list (.txt literals, .tsv regexes), repeatable\n"
               "      --yara-rules F   YARA rules for the yara peer (default: the lists converted)\n"
               "  -d NAME=VALUE        YARA external variable for Hitscope and yara, repeatable (as yara -d)\n"
               "      --engine E       cpu (default) or gpu; gpu also measures the kernel with data resident\n"
               "      --workgroup-size N, --worker-groups N   GPU launch parameters\n"
               "      --devices LIST   GPUs for the end-to-end scan, as the CLI's --devices (default: all)\n"
               "  -j, --threads N      threads for Hitscope and every peer (default: all cores)\n"
               "      --repeat N       runs of each contender; the best is reported (default 3)\n"
               "      --batch-bytes N, --segment-bytes N   Hitscope launch parameters\n"
               "      --fixed-batches  every batch of --batch-bytes (default: smaller first and last ones, as the CLI)\n"
               "      --no-yara, --no-vectorscan           leave a peer out\n"
               "      --no-prefilter   the CPU engine makes a pass per group (no atom prefilter)\n"
               "      --gpu-dfas       every string in DFA tables (the GPU walks them over every byte; default:\n"
               "                       the GPU marks where atoms occur and the host checks there)\n"
               "      --list-hits      resolve every YARA match as `hitscope-cli -s` does (default: as without -s,\n"
               "                       strings only counted by their conditions are counted)\n"
               "      --kernel-only    GPU: only the kernel with data resident (for tuning)\n"
               "      --group-states N DFA states at which a merged group stops growing (compile option)\n"
               "      --json FILE      also write the table as JSON\n",
               stdout);
}

// Times the engine's part of a scan (Scanner resolves hit starts and reports files on another thread).
class TimedEngine : public Engine
{
public:
    explicit TimedEngine(Engine &inner)
        : m_inner(inner)
    {
    }
    QString name() const override { return m_inner.name(); }
    int concurrentScans() const override { return m_inner.concurrentScans(); }
    int scanBuffers() const override { return m_inner.scanBuffers(); }
    int64_t maxBatchBytes() const override { return m_inner.maxBatchBytes(); }
    int64_t preferredSegmentBytes() const override { return m_inner.preferredSegmentBytes(); }
    void setHostThreads(int threads) override { m_inner.setHostThreads(threads); }
    void setCountedPatterns(const std::vector<bool> &counted) override { m_inner.setCountedPatterns(counted); }
    Haystack newHaystack(int64_t bytes) override { return m_inner.newHaystack(bytes); }
    void prepare(const PatternCatalog &catalog, const LaunchParams &params, int64_t batchBytes) override
    {
        m_inner.prepare(catalog, params, batchBytes);
    }
    void prepareBatch(FileBatch &batch, const PatternCatalog &catalog) const override
    {
        m_inner.prepareBatch(batch, catalog);
    }
    void copyAhead(const FileBatch &batch) override { m_inner.copyAhead(batch); }
    void setNext(const FileBatch &next) override { m_inner.setNext(next); }
    void forgetNext() override { m_inner.forgetNext(); }
    bool scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
              const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error) override
    {
        QElapsedTimer t;
        t.start();
        const bool ok = m_inner.scan(batch, catalog, params, carryIn, result, error);
        std::lock_guard lock(m_mutex); // several devices' scans at once
        ms += double(t.nsecsElapsed()) / 1e6;
        return ok;
    }
    double ms = 0;

private:
    Engine &m_inner;
    std::mutex m_mutex;
};

struct Row
{
    QString name;
    double seconds = 0;
    int64_t bytes = 0;
    QString hits;
    QString note;
};

} // namespace

int main(int argc, char **argv)
{
    keepFreedHeapMemory();
    raiseOpenFileLimit();
    auto app = createGpuApplication(argc, argv);
    QStringList rulesFiles;
    QStringList defines; ///< "-d", "NAME=VALUE" pairs, for yara and hitscope-cli as they are
    bool useGpu = false;
    DeviceChoice devices;
    bool segmentSet = false;
    bool batchSet = false;
    QString yaraRules, jsonOut, dir;
    int threads = QThread::idealThreadCount();
    int repeat = 3;
    bool yara = true, vectorscan = true, kernelOnly = false, noPrefilter = false, listHits = false, fullDfas = false;
    bool fixedBatches = false;
    LaunchParams params;
    CompileOptions compileOptions;
    const QStringList args = QCoreApplication::arguments();
    for (int i = 1; i < args.size(); ++i) {
        const QString &a = args[i];
        auto next = [&]() -> QString { return i + 1 < args.size() ? args[++i] : QString(); };
        auto size = [&](const QString &option, int64_t *out) {
            const QByteArray v = next().toLatin1();
            int64_t bytes = 0;
            if (!parseByteSize(v.constData(), &bytes) || bytes <= 0) {
                std::fprintf(stderr, "hitscope-bench: option %s: '%s' is not a size\n", qPrintable(option), v.constData());
                return false;
            }
            *out = bytes;
            return true;
        };
        if (a == QLatin1String("-r") || a == QLatin1String("--rules"))
            rulesFiles << next();
        else if (a == QLatin1String("--yara-rules"))
            yaraRules = next();
        else if (a == QLatin1String("-d") || a == QLatin1String("--define"))
            defines << QStringLiteral("-d") << next();
        else if (a == QLatin1String("-j") || a == QLatin1String("--threads"))
            threads = next().toInt();
        else if (a == QLatin1String("--repeat"))
            repeat = std::max(1, next().toInt());
        else if (a == QLatin1String("--batch-bytes")) {
            // As the CLI takes it ("512M"): a number alone once made a batch of 0 bytes of "512M", and so one
            // batch per file in the resident-kernel pass, which then ran for hours on a large corpus.
            if (!size(a, &params.batchBytes))
                return 1;
            batchSet = true;
        } else if (a == QLatin1String("--fixed-batches"))
            fixedBatches = true;
        else if (a == QLatin1String("--segment-bytes")) {
            if (!size(a, &params.segmentBytes))
                return 1;
            segmentSet = true;
        } else if (a == QLatin1String("--devices")) {
            QString why;
            if (!DeviceChoice::parse(next(), &devices, &why)) {
                std::fprintf(stderr, "hitscope-bench: --devices: %s\n", qPrintable(why));
                return 1;
            }
        } else if (a == QLatin1String("--engine")) {
            // The bench compares one engine with its peers: auto is the GPU here.
            EngineChoice choice = EngineChoice::Cpu;
            const QString name = next();
            if (!parseEngineChoice(name, &choice)) {
                std::fprintf(stderr, "hitscope-bench: --engine must be cpu, gpu or auto, not '%s'\n", qPrintable(name));
                return 1;
            }
            useGpu = choice != EngineChoice::Cpu;
        }
        else if (a == QLatin1String("--workgroup-size"))
            params.workgroupSize = next().toInt();
        else if (a == QLatin1String("--worker-groups"))
            params.workerGroups = next().toInt();
        else if (a == QLatin1String("--no-prefilter"))
            noPrefilter = true;
        else if (a == QLatin1String("--gpu-dfas"))
            fullDfas = true;
        else if (a == QLatin1String("--list-hits"))
            listHits = true;
        else if (a == QLatin1String("--no-yara"))
            yara = false;
        else if (a == QLatin1String("--no-vectorscan"))
            vectorscan = false;
        else if (a == QLatin1String("--group-states"))
            compileOptions.maxStatesPerGroup = next().toInt();
        else if (a == QLatin1String("--kernel-only"))
            kernelOnly = true;
        else if (a == QLatin1String("--json"))
            jsonOut = next();
        else if (a == QLatin1String("-h") || a == QLatin1String("--help")) {
            usage();
            return 0;
        } else if (a.startsWith(QLatin1Char('-'))) {
            std::fprintf(stderr, "hitscope-bench: unknown option %s\n", qPrintable(a));
            return 1;
        } else
            dir = a;
    }
    if (rulesFiles.isEmpty() || dir.isEmpty()) {
        usage();
        return 1;
    }
    threads = std::max(1, threads);
    params.threads = threads;
    params.rampBatches = !fixedBatches;
    compileOptions.threads = threads;

    // Rules: load and compile, timed (no grouping cache: every run compiles as the first). The tableless catalog
    // needs the prefilter: --no-prefilter gets every DFA.
    RuleSetup::Options setupOptions;
    setupOptions.files = rulesFiles;
    for (qsizetype i = 1; i < defines.size(); i += 2) {
        const QByteArray d = defines[i].toUtf8();
        const qsizetype eq = d.indexOf('=');
        if (eq > 0)
            setupOptions.externals[d.left(eq)] = YaraExternal::fromDefinition(d.mid(eq + 1));
    }
    setupOptions.compile = compileOptions;
    setupOptions.fullDfas = noPrefilter || fullDfas;
    setupOptions.groupingCache = false;
    RuleSetup setup = RuleSetup::run(setupOptions);
    const RuleSet &rules = setup.rules;
    PatternCatalog &catalog = setup.catalog;
    const double loadMs = setup.loadMs;
    if (noPrefilter)
        catalog.prefilter.reset();
    int states = 0;
    for (const DfaGroup &g : catalog.groups)
        states += int(g.dfa.numStates);
    std::printf("rules: %zu patterns from %s; load %.0f ms, compile %.0f ms; %zu groups, %d DFA states, "
                "%.1f MiB of tables; %zu rejected\n",
                rules.patterns.size(), qPrintable(rulesFiles.join(QLatin1String(", "))), loadMs, catalog.compileMs,
                catalog.groups.size(), states, double(catalog.tableBytes()) / (1 << 20),
                setup.rejections.size());
    for (const Rejection &r : catalog.rejections)
        std::printf("  rejected: %s\n", qPrintable(r.toString()));
    std::printf("groups (states/classes/patterns, u = unbounded, a = CPU screens it, no pass):");
    for (size_t gi = 0; gi < catalog.groups.size(); ++gi) {
        const DfaGroup &g = catalog.groups[gi];
        std::printf(" %u/%u/%zu%s%s", g.dfa.numStates, g.dfa.numClasses, g.patterns.size(), g.unbounded() ? "u" : "",
                    catalog.prefilter && catalog.prefilter->covers(int(gi)) ? "a" : "");
    }
    std::printf("\n");
    // A figure for no patterns at all would be a reading speed, not a scan's.
    if (!setup.usable()) {
        std::fprintf(stderr, "hitscope-bench: no usable rule in %s\n", qPrintable(rulesFiles.join(QLatin1String(", "))));
        return 1;
    }
    if (catalog.prefilter) {
        const AtomPrefilter &pre = *catalog.prefilter;
        const auto screened = std::count_if(pre.screened.begin(), pre.screened.end(), [](uint8_t s) { return s; });
        std::printf("CPU screen: %td patterns found whole, %zu atoms, %zu sequences in %d passes, %zu in the hash "
                    "screen (%.1f MiB), %zu xor forms; %zu tableless groups\n",
                    screened, pre.atomGroup.size(), pre.screen.size(), pre.screen.passes(), pre.hashScreen.size(),
                    double(pre.hashScreen.bytes()) / (1 << 20), pre.xorAtoms.size(), catalog.tablelessGroups());
        const KeyFilter &keys = pre.keyFilter;
        std::printf("GPU key screen: %zu sequences, the longest %d bytes; exact keys of 1 to 8 bytes:", keys.sequences(),
                    keys.longest());
        for (int length = 1; length <= KeyFilter::kMaxKeyLength; ++length)
            std::printf(" %zu", keys.keysOfLength(length));
        std::printf(" (%.1f KiB)\n", double(keys.words().size()) * 4 / 1024);
    }
    const bool yaraFile = rulesFiles.size() == 1
        && (rulesFiles.front().endsWith(QLatin1String(".yar")) || rulesFiles.front().endsWith(QLatin1String(".yara")));
    if (yara && yaraFile && !kernelOnly) {
        // A rule collection's cost before any byte is scanned: both as whole commands on an empty folder, with
        // a cold grouping cache for Hitscope (a HOME of its own), as a user's first run.
        const QDir binDir(QCoreApplication::applicationDirPath());
        QString cli = binDir.filePath(QStringLiteral("../cli/hitscope-cli"));
        if (!QFileInfo(cli).isExecutable())
            cli = binDir.filePath(QStringLiteral("hitscope-cli"));
        const QString yaraPath = QStandardPaths::findExecutable(QStringLiteral("yara"));
        QTemporaryDir empty, home;
        qputenv("XDG_CACHE_HOME", QFile::encodeName(home.path()));
        const QString n = QString::number(threads);
        auto bestOf = [&](const QString &program, const QStringList &args) {
            PeerResult b;
            b.seconds = 1e30;
            for (int k = 0; k < repeat; ++k) {
                QDir(home.path()).removeRecursively();
                QDir().mkpath(home.path());
                const PeerResult r = runCommand(program, args);
                if (!r.note.isEmpty())
                    return r;
                if (r.seconds < b.seconds)
                    b = r;
            }
            return b;
        };
        const PeerResult h = QFileInfo(cli).isExecutable()
            ? bestOf(cli, QStringList { QStringLiteral("scan"), QStringLiteral("--engine"), useGpu ? QStringLiteral("gpu") : QStringLiteral("cpu"),
                            QStringLiteral("-w"), QStringLiteral("-j"), n } + defines + QStringList { QStringLiteral("-r"), rulesFiles.front(), empty.path() })
            : PeerResult { 0, 0, 0, QStringLiteral("hitscope-cli not found beside the bench") };
        const PeerResult y = yaraPath.isEmpty() ? PeerResult { 0, 0, 0, QStringLiteral("yara not found") }
                                                : bestOf(yaraPath, QStringList { QStringLiteral("-w") } + defines
                                                                            + QStringList { rulesFiles.front(), empty.path() });
        qunsetenv("XDG_CACHE_HOME");
        std::printf("compile (whole command, empty folder, cold cache): hitscope-cli %.3f s, %.1f MiB peak RSS%s%s; "
                    "yara %.3f s, %.1f MiB peak RSS%s%s\n",
                    h.seconds, double(h.peakRssKiB) / 1024, h.note.isEmpty() ? "" : " NOTE: ", qPrintable(h.note),
                    y.seconds, double(y.peakRssKiB) / 1024, y.note.isEmpty() ? "" : " NOTE: ", qPrintable(y.note));
    }

    // Corpus.
    std::vector<QByteArray> files;
    int64_t corpusBytes = 0;
    FileWalker(WalkOptions {}).walk({ QFile::encodeName(dir) },
                                    [&](const FileEntry &e) {
                                        files.push_back(e.path);
                                        corpusBytes += e.size;
                                    },
                                    [](const FileProblem &) {});
    std::printf("corpus: %s, %zu files, %.2f GiB; %d threads; best of %d runs\n\n", qPrintable(dir), files.size(),
                double(corpusBytes) / (1 << 30), threads, repeat);

    std::vector<Row> rows;
    auto best = [&](auto &&fn) {
        PeerResult bestR;
        bestR.seconds = 1e30;
        for (int k = 0; k < repeat; ++k) {
            PeerResult r = fn();
            if (r.seconds < bestR.seconds || !r.note.isEmpty())
                bestR = r;
            if (!r.note.isEmpty())
                break;
        }
        return bestR;
    };

    if (kernelOnly) {
        yara = vectorscan = false;
        repeat = std::max(repeat, 2);
    } else {
        const PeerResult ceiling = best([&] { return readCeiling(files, threads); });
        rows.push_back({ QStringLiteral("read only (ceiling)"), ceiling.seconds, corpusBytes, QStringLiteral("-"), {} });
        // The scan's walk lists what the readers read: it must keep ahead of them. Timed with the scan's options.
        const WalkOptions walkOptions = Scanner::walkOptions(WalkOptions {}, threads);
        const PeerResult walk = best([&] {
            const auto w0 = std::chrono::steady_clock::now();
            int64_t n = 0;
            FileWalker(walkOptions).walk({ QFile::encodeName(dir) }, [&](const FileEntry &) { ++n; },
                                            [](const FileProblem &) {});
            PeerResult r;
            r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
            r.matches = n;
            return r;
        });
        rows.push_back({ QStringLiteral("walk only (listing)"), walk.seconds, corpusBytes,
                         QStringLiteral("%1 files; folders listed on %2 threads besides; files %3")
                             .arg(walk.matches)
                             .arg(walkOptions.listThreads)
                             .arg(walkOptions.statRegularFiles ? QLatin1String("lstat()ed")
                                                               : QLatin1String("sized by the batcher")),
                         {} });
    }

    CpuEngine cpuEngine;
    std::unique_ptr<Engine> gpuEngines;
    GpuEngine *gpuEngine = nullptr; // one device: its kernel is also timed with the data resident
    if (useGpu) {
        QString notice, gpuError;
        gpuEngines = DevicePool::choose(devices, true, RhiDeviceOptions {}, &notice, &gpuError);
        if (!gpuEngines) {
            std::fprintf(stderr, "hitscope-bench: no GPU engine: %s\n", qPrintable(gpuError));
            return 1;
        }
        if (!segmentSet)
            params.segmentBytes = gpuEngines->preferredSegmentBytes();
        params.timeoutMs = 0;
        if (auto *one = dynamic_cast<FallbackEngine *>(gpuEngines.get())) {
            gpuEngine = &one->gpu();
            std::printf("gpu: %s (%s); segment %lld bytes, workgroup %d\n",
                        qPrintable(gpuEngine->device().deviceName()), qPrintable(gpuEngine->device().backendName()),
                        static_cast<long long>(params.segmentBytes), params.workgroupSize);
        } else if (auto *pool = dynamic_cast<DevicePool *>(gpuEngines.get())) {
            std::printf("gpu: %s; segment %lld bytes, workgroup %d (kernel with the data resident: one device, "
                        "--devices N)\n",
                        qPrintable(pool->description()), static_cast<long long>(params.segmentBytes),
                        params.workgroupSize);
        }
    }
    Engine &engine = gpuEngines ? *gpuEngines : static_cast<Engine &>(cpuEngine);
    // As the CLI: the engine's own batch size unless one is given.
    if (!batchSet)
        params.batchBytes = engine.preferredBatchBytes();
    int64_t ourHits = 0;
    std::set<std::pair<int, int>> ourPairs;
    double gpuMs = 0;
    double engineMs = 0, readMs = 0, waitMs = 0, resolveMs = 0;
    int batches = 0;
    const PeerResult ours = kernelOnly ? PeerResult {} : best([&] {
        TimedEngine timed(engine);
        Scanner scanner(rules, catalog, timed);
        scanner.setListHits(listHits);
        int64_t hits = 0;
        std::set<std::pair<int, int>> pairs;
        Scanner::Callbacks cb;
        cb.fileDone = [&](const FileResult &fr) {
            hits += int64_t(fr.hits.size());
            for (const auto &c : fr.counts)
                hits += c.second;
            for (int r : fr.rules)
                pairs.insert({ r, fr.fileIndex });
        };
        double kernel = 0, read = 0, wait = 0, resolving = 0;
        int n = 0;
        cb.batchDone = [&](const BatchTelemetry &t) {
            kernel += t.gpuMs;
            read += t.readMs;
            wait += t.bufferWaitMs;
            resolving += t.resolveMs;
            ++n;
        };
        cb.notice = [](const QString &msg) { std::fprintf(stderr, "notice: %s\n", qPrintable(msg)); };
        QElapsedTimer tt;
        tt.start();
        scanner.run({ QFile::encodeName(dir) }, WalkOptions {}, params, cb);
        PeerResult r;
        r.seconds = double(tt.nsecsElapsed()) / 1e9;
        ourHits = hits;
        ourPairs = std::move(pairs);
        gpuMs = kernel;
        engineMs = timed.ms;
        readMs = read;
        waitMs = wait;
        resolveMs = resolving;
        batches = n;
        return r;
    });
    if (!kernelOnly)
        rows.push_back({ QStringLiteral("hitscope %1 end to end").arg(useGpu ? QStringLiteral("gpu") : QStringLiteral("cpu -j%1").arg(threads)),
                     ours.seconds, corpusBytes,
                     QStringLiteral("%1 hits, %2 rule/file pairs, %3 batches").arg(ourHits).arg(ourPairs.size()).arg(batches), {} });
    if (!kernelOnly) {
        // Where an end-to-end run's time went: the engine's calls, resolving hit starts and reporting files, and
        // the reader thread filling batches; the three run beside each other, on batches in a row.
        rows.push_back({ QStringLiteral("hitscope engine.scan calls"), engineMs / 1000, corpusBytes,
                         QStringLiteral("upload, kernel, read-back, host bookkeeping; summed over batches"), {} });
        rows.push_back({ QStringLiteral("hitscope resolving"), resolveMs / 1000, corpusBytes,
                         QStringLiteral("hit starts, file results, callbacks; summed over batches"), {} });
        rows.push_back({ QStringLiteral("hitscope reader filling"), readMs / 1000, corpusBytes,
                         QStringLiteral("reading alone, summed over batches (overlaps the scanning)"), {} });
        rows.push_back({ QStringLiteral("hitscope reader waiting"), waitMs / 1000, 0,
                         QStringLiteral("for a free buffer, summed over batches (the stages behind were busy)"), {} });
    }
    if (gpuEngine) {
        if (!kernelOnly)
            rows.push_back({ QStringLiteral("hitscope gpu kernel in scan"), gpuMs / 1000, corpusBytes,
                         QStringLiteral("GPU timestamps summed over the batches of the scan"), {} });
        // Kernel with the data resident: each batch uploaded once, its dispatches timed several times.
        double residentMs = 0;
        int64_t residentBytes = 0;
        QString kernelError;
        std::vector<std::unique_ptr<FileBatch>> pool;
        Batcher batcher(
            std::max(0, catalog.maxBoundedMatchLength() - 1), [] { return std::make_unique<FileBatch>(); },
            [&](std::unique_ptr<FileBatch> b) {
                if (!kernelError.isEmpty())
                    return;
                const double ms = gpuEngine->residentKernelMs(*b, catalog, params, std::max(2, repeat), &kernelError);
                residentMs += std::max(0.0, ms);
                residentBytes += b->ownedBytes;
            });
        batcher.setSizes(std::min(params.batchBytes, gpuEngine->maxBatchBytes()), params.segmentBytes);
        for (const QByteArray &f : files) {
            struct stat st;
            if (::stat(f.constData(), &st) == 0)
                batcher.addFile({ f, int64_t(st.st_size) });
        }
        batcher.finish();
        rows.push_back({ QStringLiteral("hitscope gpu kernel, resident"), residentMs / 1000, residentBytes,
                         QStringLiteral("best of %1 per batch").arg(std::max(2, repeat)), kernelError });
    }

    QString error;
    const std::vector<PeerPattern> peerPatterns = readPeerPatterns(rulesFiles, &error);
    if (vectorscan) {
        const PeerResult vs = best([&] { return runVectorscan(peerPatterns, files, threads); });
        rows.push_back({ QStringLiteral("vectorscan block -j%1").arg(threads), vs.seconds, corpusBytes,
                         QStringLiteral("%1 match ends").arg(vs.matches), vs.note });
    }
    if (yara) {
        QTemporaryDir tmp;
        QString yr = yaraRules;
        // YARA rule files go to yara as they are.
        if (yr.isEmpty() && yaraFile)
            yr = rulesFiles.front();
        if (yr.isEmpty()) {
            yr = tmp.path() + QLatin1String("/rules.yar");
            writeYaraRules(peerPatterns, yr);
        }
        const PeerResult y = best([&] { return runYara(yr, dir, threads, defines); });
        rows.push_back({ QStringLiteral("yara -p %1").arg(threads), y.seconds, corpusBytes,
                         QStringLiteral("%1 rule/file pairs").arg(y.matches), y.note });
    }

    std::printf("%-28s %10s %10s  %s\n", "contender", "seconds", "GB/s", "result");
    QJsonArray jrows;
    for (const Row &r : rows) {
        const double gbs = r.seconds > 0 ? double(r.bytes) / r.seconds / 1e9 : 0;
        // A row of time alone (no bytes of its own) has no rate.
        const QByteArray rate = r.bytes > 0 ? QByteArray::number(gbs, 'f', 3) : QByteArrayLiteral("-");
        std::printf("%-28s %10.3f %10s  %s%s%s\n", qPrintable(r.name), r.seconds, rate.constData(), qPrintable(r.hits),
                    r.note.isEmpty() ? "" : "  NOTE: ", qPrintable(r.note));
        jrows.append(QJsonObject { { QStringLiteral("name"), r.name },
                                   { QStringLiteral("seconds"), r.seconds },
                                   { QStringLiteral("gbs"), gbs },
                                   { QStringLiteral("result"), r.hits },
                                   { QStringLiteral("note"), r.note } });
    }
    if (!jsonOut.isEmpty()) {
        QFile f(jsonOut);
        if (f.open(QIODevice::WriteOnly))
            f.write(QJsonDocument(QJsonObject { { QStringLiteral("rows"), jrows },
                                                { QStringLiteral("corpus_bytes"), qint64(corpusBytes) },
                                                { QStringLiteral("compile_ms"), catalog.compileMs },
                                                { QStringLiteral("table_bytes"), qint64(catalog.tableBytes()) } })
                        .toJson());
    }
    return 0;
}
