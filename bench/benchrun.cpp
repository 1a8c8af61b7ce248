// SPDX-License-Identifier: GPL-3.0-or-later
#include "benchrun.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include <sys/stat.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "automata/atomprefilter.h"
#include "gpu/gpuengine.h"
#include "scan/batcher.h"
#include "scan/filewalker.h"
#include "scan/scanner.h"
#include "session/devicepool.h"
#include "session/fallbackengine.h"
#include "timedengine.h"

namespace Hitscope {

BenchRun::BenchRun(const BenchOptions &options)
    : m_options(options)
{
}

int BenchRun::run()
{
    if (!loadRules())
        return 1;
    if (m_options.yara && m_options.yaraFile() && !m_options.kernelOnly)
        compareCompile();
    walkCorpus();
    measureReadAndWalk();
    if (!chooseEngine())
        return 1;
    runHitscope();
    measureResidentKernel();
    runPeers();
    printTable();
    return 0;
}

bool BenchRun::loadRules()
{
    // Rules: load and compile, timed (no grouping cache: every run compiles as the first). The tableless catalog
    // needs the prefilter: --no-prefilter gets every DFA.
    RuleSetup::Options setupOptions;
    setupOptions.files = m_options.rulesFiles;
    for (qsizetype i = 1; i < m_options.defines.size(); i += 2) {
        const QByteArray d = m_options.defines[i].toUtf8();
        const qsizetype eq = d.indexOf('=');
        if (eq > 0)
            setupOptions.externals[d.left(eq)] = YaraExternal::fromDefinition(d.mid(eq + 1));
    }
    setupOptions.compile = m_options.compileOptions;
    setupOptions.fullDfas = m_options.noPrefilter || m_options.fullDfas;
    setupOptions.groupingCache = false;
    m_setup = RuleSetup::run(setupOptions);
    if (m_options.noPrefilter)
        m_setup.catalog.prefilter.reset();
    printCatalog();
    // A figure for no patterns at all would be a reading speed, not a scan's.
    if (!m_setup.usable()) {
        std::fprintf(stderr, "hitscope-bench: no usable rule in %s\n",
                     qPrintable(m_options.rulesFiles.join(QLatin1String(", "))));
        return false;
    }
    printScreens();
    return true;
}

void BenchRun::printCatalog() const
{
    const PatternCatalog &catalog = m_setup.catalog;
    int states = 0;
    for (const DfaGroup &g : catalog.groups)
        states += int(g.dfa.numStates);
    std::printf("rules: %zu patterns from %s; load %.0f ms, compile %.0f ms; %zu groups, %d DFA states, "
                "%.1f MiB of tables; %zu rejected\n",
                m_setup.rules.patterns.size(), qPrintable(m_options.rulesFiles.join(QLatin1String(", "))),
                m_setup.loadMs, catalog.compileMs, catalog.groups.size(), states,
                double(catalog.tableBytes()) / (1 << 20), m_setup.rejections.size());
    for (const Rejection &r : catalog.rejections)
        std::printf("  rejected: %s\n", qPrintable(r.toString()));
    std::printf("groups (states/classes/patterns, u = unbounded, a = CPU screens it, no pass):");
    for (size_t gi = 0; gi < catalog.groups.size(); ++gi) {
        const DfaGroup &g = catalog.groups[gi];
        std::printf(" %u/%u/%zu%s%s", g.dfa.numStates, g.dfa.numClasses, g.patterns.size(), g.unbounded() ? "u" : "",
                    catalog.prefilter && catalog.prefilter->covers(int(gi)) ? "a" : "");
    }
    std::printf("\n");
}

void BenchRun::printScreens() const
{
    const PatternCatalog &catalog = m_setup.catalog;
    if (!catalog.prefilter)
        return;
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

void BenchRun::compareCompile()
{
    const QStringList &rulesFiles = m_options.rulesFiles;
    const QStringList &defines = m_options.defines;
    // A rule collection's cost before any byte is scanned: both as whole commands on an empty folder, with
    // a cold grouping cache for Hitscope (a HOME of its own), as a user's first run.
    const QDir binDir(QCoreApplication::applicationDirPath());
    QString cli = binDir.filePath(QStringLiteral("../cli/hitscope-cli"));
    if (!QFileInfo(cli).isExecutable())
        cli = binDir.filePath(QStringLiteral("hitscope-cli"));
    const QString yaraPath = QStandardPaths::findExecutable(QStringLiteral("yara"));
    QTemporaryDir empty, home;
    qputenv("XDG_CACHE_HOME", QFile::encodeName(home.path()));
    const QString n = QString::number(m_options.threads);
    auto bestOf = [&](const QString &program, const QStringList &args) {
        PeerResult b;
        b.seconds = 1e30;
        for (int k = 0; k < m_options.repeat; ++k) {
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
        ? bestOf(cli,
                 QStringList { QStringLiteral("scan"), QStringLiteral("--engine"),
                               m_options.useGpu ? QStringLiteral("gpu") : QStringLiteral("cpu"), QStringLiteral("-w"),
                               QStringLiteral("-j"), n }
                     + defines + QStringList { QStringLiteral("-r"), rulesFiles.front(), empty.path() })
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

void BenchRun::walkCorpus()
{
    FileWalker(WalkOptions {}).walk({ QFile::encodeName(m_options.dir) },
                                    [&](const FileEntry &e) {
                                        m_files.push_back(e.path);
                                        m_corpusBytes += e.size;
                                    },
                                    [](const FileProblem &) {});
    std::printf("corpus: %s, %zu files, %.2f GiB; %d threads; best of %d runs\n\n", qPrintable(m_options.dir),
                m_files.size(), double(m_corpusBytes) / (1 << 30), m_options.threads, m_options.repeat);
}

void BenchRun::measureReadAndWalk()
{
    const int threads = m_options.threads;
    if (m_options.kernelOnly) {
        m_options.yara = m_options.vectorscan = false;
        m_options.repeat = std::max(m_options.repeat, 2);
        return;
    }
    const PeerResult ceiling = best([&] { return readCeiling(m_files, threads); });
    m_rows.push_back(
        { QStringLiteral("read only (ceiling)"), ceiling.seconds, m_corpusBytes, QStringLiteral("-"), {} });
    // The scan's walk lists what the readers read: it must keep ahead of them. Timed with the scan's options.
    const WalkOptions walkOptions = Scanner::walkOptions(WalkOptions {}, threads);
    const PeerResult walk = best([&] {
        const auto w0 = std::chrono::steady_clock::now();
        int64_t n = 0;
        FileWalker(walkOptions).walk({ QFile::encodeName(m_options.dir) }, [&](const FileEntry &) { ++n; },
                                     [](const FileProblem &) {});
        PeerResult r;
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
        r.matches = n;
        return r;
    });
    m_rows.push_back({ QStringLiteral("walk only (listing)"), walk.seconds, m_corpusBytes,
                       QStringLiteral("%1 files; folders listed on %2 threads besides; files %3")
                           .arg(walk.matches)
                           .arg(walkOptions.listThreads)
                           .arg(walkOptions.statRegularFiles ? QLatin1String("lstat()ed")
                                                             : QLatin1String("sized by the batcher")),
                       {} });
}

bool BenchRun::chooseEngine()
{
    LaunchParams &params = m_options.params;
    if (m_options.useGpu) {
        QString notice, gpuError;
        m_gpuEngines = DevicePool::choose(m_options.devices, true, RhiDeviceOptions {}, &notice, &gpuError);
        if (!m_gpuEngines) {
            std::fprintf(stderr, "hitscope-bench: no GPU engine: %s\n", qPrintable(gpuError));
            return false;
        }
        if (!m_options.segmentSet)
            params.segmentBytes = m_gpuEngines->preferredSegmentBytes();
        params.timeoutMs = 0;
        if (auto *one = dynamic_cast<FallbackEngine *>(m_gpuEngines.get())) {
            m_gpuEngine = &one->gpu();
            std::printf("gpu: %s (%s); segment %lld bytes, workgroup %d\n",
                        qPrintable(m_gpuEngine->device().deviceName()), qPrintable(m_gpuEngine->device().backendName()),
                        static_cast<long long>(params.segmentBytes), params.workgroupSize);
        } else if (auto *pool = dynamic_cast<DevicePool *>(m_gpuEngines.get())) {
            std::printf("gpu: %s; segment %lld bytes, workgroup %d (kernel with the data resident: one device, "
                        "--devices N)\n",
                        qPrintable(pool->description()), static_cast<long long>(params.segmentBytes),
                        params.workgroupSize);
        }
    }
    // As the CLI: the engine's own batch size unless one is given.
    if (!m_options.batchSet)
        params.batchBytes = engine().preferredBatchBytes();
    return true;
}

Engine &BenchRun::engine()
{
    return m_gpuEngines ? *m_gpuEngines : static_cast<Engine &>(m_cpuEngine);
}

void BenchRun::runHitscope()
{
    if (m_options.kernelOnly)
        return;
    int64_t ourHits = 0;
    std::set<std::pair<int, int>> ourPairs;
    double gpuMs = 0;
    double engineMs = 0, readMs = 0, waitMs = 0, resolveMs = 0;
    int batches = 0;
    // The counts and telemetry below are the last run's; the seconds are the best run's.
    const PeerResult ours = best([&] {
        TimedEngine timed(engine());
        Scanner scanner(m_setup.rules, m_setup.catalog, timed);
        scanner.setListHits(m_options.listHits);
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
        scanner.run({ QFile::encodeName(m_options.dir) }, WalkOptions {}, m_options.params, cb);
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
    const QString engineName
        = m_options.useGpu ? QStringLiteral("gpu") : QStringLiteral("cpu -j%1").arg(m_options.threads);
    m_rows.push_back({ QStringLiteral("hitscope %1 end to end").arg(engineName), ours.seconds, m_corpusBytes,
                       QStringLiteral("%1 hits, %2 rule/file pairs, %3 batches")
                           .arg(ourHits)
                           .arg(ourPairs.size())
                           .arg(batches),
                       {} });
    // Where an end-to-end run's time went: the engine's calls, resolving hit starts and reporting files, and
    // the reader thread filling batches; the three run beside each other, on batches in a row.
    m_rows.push_back({ QStringLiteral("hitscope engine.scan calls"), engineMs / 1000, m_corpusBytes,
                       QStringLiteral("upload, kernel, read-back, host bookkeeping; summed over batches"), {} });
    m_rows.push_back({ QStringLiteral("hitscope resolving"), resolveMs / 1000, m_corpusBytes,
                       QStringLiteral("hit starts, file results, callbacks; summed over batches"), {} });
    m_rows.push_back({ QStringLiteral("hitscope reader filling"), readMs / 1000, m_corpusBytes,
                       QStringLiteral("reading alone, summed over batches (overlaps the scanning)"), {} });
    m_rows.push_back({ QStringLiteral("hitscope reader waiting"), waitMs / 1000, 0,
                       QStringLiteral("for a free buffer, summed over batches (the stages behind were busy)"), {} });
    if (m_gpuEngine)
        m_rows.push_back({ QStringLiteral("hitscope gpu kernel in scan"), gpuMs / 1000, m_corpusBytes,
                           QStringLiteral("GPU timestamps summed over the batches of the scan"), {} });
}

void BenchRun::measureResidentKernel()
{
    if (!m_gpuEngine)
        return;
    const PatternCatalog &catalog = m_setup.catalog;
    const LaunchParams &params = m_options.params;
    const int repeat = m_options.repeat;
    // Kernel with the data resident: each batch uploaded once, its dispatches timed several times.
    double residentMs = 0;
    int64_t residentBytes = 0;
    QString kernelError;
    Batcher batcher(
        std::max(0, catalog.maxBoundedMatchLength() - 1), [] { return std::make_unique<FileBatch>(); },
        [&](std::unique_ptr<FileBatch> b) {
            if (!kernelError.isEmpty())
                return;
            const double ms = m_gpuEngine->residentKernelMs(*b, catalog, params, std::max(2, repeat), &kernelError);
            residentMs += std::max(0.0, ms);
            residentBytes += b->ownedBytes;
        });
    batcher.setSizes(std::min(params.batchBytes, m_gpuEngine->maxBatchBytes()), params.segmentBytes);
    for (const QByteArray &f : m_files) {
        struct stat st;
        if (::stat(f.constData(), &st) == 0)
            batcher.addFile({ f, int64_t(st.st_size) });
    }
    batcher.finish();
    m_rows.push_back({ QStringLiteral("hitscope gpu kernel, resident"), residentMs / 1000, residentBytes,
                       QStringLiteral("best of %1 per batch").arg(std::max(2, repeat)), kernelError });
}

void BenchRun::runPeers()
{
    const int threads = m_options.threads;
    QString error;
    const std::vector<PeerPattern> peerPatterns = readPeerPatterns(m_options.rulesFiles, &error);
    if (m_options.vectorscan) {
        const PeerResult vs = best([&] { return runVectorscan(peerPatterns, m_files, threads); });
        m_rows.push_back({ QStringLiteral("vectorscan block -j%1").arg(threads), vs.seconds, m_corpusBytes,
                           QStringLiteral("%1 match ends").arg(vs.matches), vs.note });
    }
    if (m_options.yara) {
        QTemporaryDir tmp;
        QString yr = m_options.yaraRules;
        // YARA rule files go to yara as they are.
        if (yr.isEmpty() && m_options.yaraFile())
            yr = m_options.rulesFiles.front();
        if (yr.isEmpty()) {
            yr = tmp.path() + QLatin1String("/rules.yar");
            writeYaraRules(peerPatterns, yr);
        }
        const PeerResult y = best([&] { return runYara(yr, m_options.dir, threads, m_options.defines); });
        m_rows.push_back({ QStringLiteral("yara -p %1").arg(threads), y.seconds, m_corpusBytes,
                           QStringLiteral("%1 rule/file pairs").arg(y.matches), y.note });
    }
}

void BenchRun::printTable() const
{
    std::printf("%-28s %10s %10s  %s\n", "contender", "seconds", "GB/s", "result");
    QJsonArray jrows;
    for (const Row &r : m_rows) {
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
    if (m_options.jsonOut.isEmpty())
        return;
    QFile f(m_options.jsonOut);
    if (f.open(QIODevice::WriteOnly))
        f.write(QJsonDocument(QJsonObject { { QStringLiteral("rows"), jrows },
                                            { QStringLiteral("corpus_bytes"), qint64(m_corpusBytes) },
                                            { QStringLiteral("compile_ms"), m_setup.catalog.compileMs },
                                            { QStringLiteral("table_bytes"), qint64(m_setup.catalog.tableBytes()) } })
                    .toJson());
}

} // namespace Hitscope
