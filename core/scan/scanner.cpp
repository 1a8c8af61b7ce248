// SPDX-License-Identifier: GPL-3.0-or-later
#include "scanner.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <span>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include <QScopeGuard>

#include "scan/batcher.h"
#include "scan/hitresolver.h"
#include "scan/walkahead.h"
#include "util/elapsed.h"
#include "util/logcategories.h"
#include "util/owningqueue.h"
#include "util/parallel.h"
#include "util/runtimeswitches.h"
#include "util/threadname.h"

namespace Hitscope {

namespace {

// A batch the engine has scanned, on its way to the resolver with what it needs.
struct Scanned
{
    std::unique_ptr<FileBatch> batch;
    BatchResult result;
    LaunchParams params;
    Clock::time_point began;
    double engineMs = 0;
    // Filled when its starts are found, for the stage that reports its files.
    std::vector<std::vector<Hit>> perFile;
    std::vector<std::vector<std::pair<int, int64_t>>> perFileCounts;
    HitResolver::Trace trace;
    Clock::time_point startsBegan, startsEnded;
};

std::vector<int> rejectedPatterns(const PatternCatalog &catalog)
{
    std::vector<int> out;
    for (size_t p = 0; p < catalog.patterns.size(); ++p)
        if (catalog.patterns[p].group < 0)
            out.push_back(int(p));
    return out;
}

/// Hits in Hit::operator< order; packed into (offset, pattern) keys when they fit, which sorts millions
/// of hits about twice as fast as comparing Hits.
void sortHits(std::vector<Hit> &hits)
{
    // Resolving leaves each pattern's hits ascending, so a file's hits are a few sorted runs (one pattern
    // often holds nearly all of them): merging the runs costs far less than sorting.
    std::vector<size_t> runs { 0 };
    for (size_t i = 1; i < hits.size() && runs.size() <= 64; ++i)
        if (hits[i] < hits[i - 1])
            runs.push_back(i);
    if (runs.size() <= 64) {
        runs.push_back(hits.size());
        while (runs.size() > 2) {
            std::vector<size_t> merged { 0 };
            for (size_t r = 0; r + 2 < runs.size(); r += 2) {
                std::inplace_merge(hits.begin() + ptrdiff_t(runs[r]), hits.begin() + ptrdiff_t(runs[r + 1]),
                                   hits.begin() + ptrdiff_t(runs[r + 2]));
                merged.push_back(runs[r + 2]);
            }
            if (runs.size() % 2 == 0) // an odd number of runs: the last one waits for the next round
                merged.push_back(runs.back());
            runs = std::move(merged);
        }
        return;
    }
    constexpr int kPatternBits = 23;
    const bool packable = std::all_of(hits.begin(), hits.end(), [](const Hit &h) {
        return h.pattern >= 0 && h.pattern < (1 << kPatternBits) && h.offset >= 0
            && h.offset < (int64_t(1) << (63 - kPatternBits));
    });
    if (!packable) {
        std::sort(hits.begin(), hits.end());
        return;
    }
    std::vector<std::pair<uint64_t, int64_t>> keys;
    keys.reserve(hits.size());
    for (const Hit &h : hits)
        keys.emplace_back(uint64_t(h.offset) << kPatternBits | uint64_t(h.pattern), h.length);
    std::sort(keys.begin(), keys.end());
    for (size_t i = 0; i < keys.size(); ++i)
        hits[i] = { int(keys[i].first & ((uint64_t(1) << kPatternBits) - 1)), int64_t(keys[i].first >> kPatternBits),
                    keys[i].second };
}

/// Adds a chunk's counted matches to its file's (both ascending by pattern).
void addCounts(std::vector<std::pair<int, int64_t>> &total, const std::vector<std::pair<int, int64_t>> &chunk)
{
    if (total.empty()) {
        total = chunk;
        return;
    }
    for (const auto &[pattern, n] : chunk) {
        const auto it = std::lower_bound(total.begin(), total.end(), std::make_pair(pattern, int64_t(0)),
                                         [](const auto &a, const auto &b) { return a.first < b.first; });
        if (it != total.end() && it->first == pattern)
            it->second += n;
        else
            total.insert(it, { pattern, n });
    }
}

} // namespace

Scanner::Scanner(const RuleSet &rules, const PatternCatalog &catalog, Engine &engine)
    : m_rules(rules)
    , m_catalog(catalog)
    , m_engine(engine)
    , m_resolver(rules, catalog)
{
    m_anyYara = std::any_of(rules.rules.begin(), rules.rules.end(), [](const Rule &r) { return r.isYara(); });
}

Scanner::~Scanner() = default;

void Scanner::setParams(const LaunchParams &params)
{
    std::lock_guard lock(m_paramsMutex);
    m_params = params;
    if (m_params.batchBytes <= 0)
        m_params.batchBytes = m_engine.preferredBatchBytes();
    if (m_params.segmentBytes <= 0)
        m_params.segmentBytes = m_engine.preferredSegmentBytes();
    ++m_paramsVersion;
}

LaunchParams Scanner::currentParams()
{
    std::lock_guard lock(m_paramsMutex);
    return m_params;
}

void Scanner::cancel()
{
    m_cancel = true;
}

void Scanner::setListHits(bool list)
{
    m_resolver.setListHits(list);
}


int Scanner::walkListThreads(int threads)
{
    // On the H200's 16 cores the one-thread walk listed files as fast as 16 threads read and scanned them.
    return threads >= 8 ? std::min(4, threads / 4) : 0;
}

WalkOptions Scanner::walkOptions(const WalkOptions &walk, int threads)
{
    // The batcher opens every file it reads and reports one it cannot open: the walk need not open them too,
    // but for large ones, which would take a batch's room unread.
    WalkOptions options = walk;
    options.testReadableFrom = 1 << 20;
    options.listThreads = walkListThreads(threads > 0 ? threads : hardwareThreads());
    options.listNice = kReadNice;
    // Below 8 threads (no listing threads) CPU time is what counts, and the batcher opens every file anyway: it
    // learns the sizes there, and the walk's lstat() per file (6% of a scan's CPU time in a 2-core VM) goes.
    // With listing threads they stat ahead of the walk, beside the scan, while the batcher's one thread would
    // open the files in turn: the opens stay on the read threads.
    options.statRegularFiles = options.listThreads > 0;
    return options;
}

ScanSummary Scanner::run(const QByteArrayList &paths, const WalkOptions &walk, const LaunchParams &initial,
                         const Callbacks &callbacks, std::unique_ptr<WalkAhead> walked)
{
    const auto t0 = Clock::now();
    // When each batch was read, scanned and resolved, on stderr: which stage holds the others up.
    const bool trace = RuntimeSwitches::pipelineTrace();
    m_trace = trace;
    m_cancel = false;
    setParams(initial);
    const LaunchParams startParams = currentParams();
    const int overlap = std::max(0, m_catalog.maxBoundedMatchLength() - 1);
    m_engine.setCountedPatterns(m_resolver.counted());

    OwningQueue<FileBatch> read; // read, for the engine to prepare
    OwningQueue<FileBatch> full; // prepared, for the engine to scan
    OwningQueue<FileBatch> empty;
    OwningQueue<Scanned> scanned;
    // One being filled, one being prepared, one being scanned, the next one (which the engine may be moving to
    // its device meanwhile: Engine::setNext), one whose starts are found (which reads its haystack), one whose
    // files are reported (conditions read it too), one queued. Fewer where the engine needs no copy ahead
    // (Engine::scanBuffers()).
    for (int i = 0; i < m_engine.scanBuffers(); ++i)
        empty.push(std::make_unique<FileBatch>());

    std::thread reader([&] {
        nameThisThread("hs-plan");
        int seenVersion = -1;
        Batcher batcher(
            overlap, [&] { return empty.pop(); },
            [&](std::unique_ptr<FileBatch> b) { read.push(std::move(b)); },
            &m_cancel);
        batcher.setAllocator([this](int64_t bytes) { return m_engine.newHaystack(bytes); });
        batcher.setChunkContext(m_catalog.chunkContext());
        auto applySizes = [&] {
            if (m_paramsVersion.load() == seenVersion)
                return;
            seenVersion = m_paramsVersion.load();
            const LaunchParams p = currentParams();
            batcher.setSizes(std::min(p.batchBytes, m_engine.maxBatchBytes()), p.segmentBytes);
            batcher.setRamp(p.rampBatches);
            // As many readers as scanning threads: one thread per core reads cached files about twice as fast
            // as eight.
            const int threads = p.threads > 0 ? p.threads : hardwareThreads();
            batcher.setReadThreads(threads);
            // Reading runs ahead of the other stages on a large machine; below them, its threads leave the cores
            // to the stage that holds the scan up (on the H200, resolving: 30,000 start units of a batch took
            // 63 ms on 16 threads while 16 read threads and the engine's shared the cores).
            batcher.setReadNice(threads >= 8 ? kReadNice : 0);
            m_engine.setHostThreads(threads);
        };
        applySizes();
        // The walk runs ahead on a thread of its own: once it has ended, the batcher knows what is left.
        if (!walked)
            walked = std::make_unique<WalkAhead>(paths, walkOptions(walk, currentParams().threads), &m_cancel);
        WalkAhead &walker = *walked;
        WalkAhead::Item item;
        while (!m_cancel) {
            const WalkAhead::Next n = walker.next(item, 2);
            if (n == WalkAhead::Next::End)
                break;
            if (n == WalkAhead::Next::Waiting) {
                // A batch read meanwhile leaves now, not when the slow walk (or its filters) finds a file.
                batcher.poll();
                continue;
            }
            batcher.setBytesAfter(walker.bytesAhead(), walker.unsizedAhead());
            if (!item.file) {
                batcher.addProblem(item.problem);
                continue;
            }
            applySizes();
            batcher.addFile(*item.file);
        }
        walked.reset(); // a walk cut short by a cancel stops here
        if (!m_cancel)
            batcher.finish();
        read.close();
    });
    // The engine's preparation of each batch (Engine::prepareBatch: the GPU's segment table, 6-13 ms of a 512 MiB
    // batch on the H200) on a thread of its own: on the reader's thread it held the next read up.
    std::thread preparer([&] {
        nameThisThread("hs-prepare");
        while (auto b = read.pop()) {
            if (!m_cancel) {
                m_engine.prepareBatch(*b, m_catalog);
                m_engine.copyAhead(*b);
            }
            b->queued = Clock::now();
            full.push(std::move(b));
        }
        full.close();
    });

    ScanSummary summary;
    // Set before m_cancel when the engine fails: batches scanned before the failure are still resolved and
    // reported, as they were before resolving ran beside the scan.
    std::atomic_bool engineFailed { false };

    // Start finding runs here, in batch order, while the next batch is on the engine (the engine stays on the
    // calling thread: it may own the GPU device), and file results and callbacks on the thread after it, while
    // the next batch's starts are found: on the H200, resolving was the last stage, and each half held the other.
    OwningQueue<Scanned> started;
    std::thread starter([&] {
        nameThisThread("hs-starts");
        // Once a batch is dropped, so are all after it: a file whose chunks spanned it would be reported without
        // them, should the engine then fail and later batches be reported after all.
        bool dropping = false;
        while (auto job = scanned.pop()) {
            if (dropping || (m_cancel && !engineFailed)) {
                dropping = true;
                empty.push(std::move(job->batch));
                continue;
            }
            const int threads = job->params.threads > 0 ? job->params.threads : hardwareThreads();
            job->startsBegan = Clock::now();
            m_resolver.resolve(*job->batch, job->result, threads, job->perFile, job->perFileCounts, job->trace,
                               m_trace);
            job->startsEnded = Clock::now();
            started.push(std::move(job));
        }
        started.close();
    });
    std::thread resolver([&] {
        nameThisThread("hs-resolve");
        FileResult pending; // the file whose chunks continue into the next batch
        std::vector<FileResult> done; // files whose last chunk is in the batch being resolved
        std::vector<std::span<const uint8_t>> known; // per file of `done`: its first bytes in memory
        // One evaluator per thread: each keeps its buffers between files.
        std::vector<std::unique_ptr<RuleEvaluator>> evaluators;
        const std::vector<int> rejected = rejectedPatterns(m_catalog);
        // Where conditions read YARA modules, libyara parses files for them: each file costs as much as
        // thousands of hits.
        const bool readsModules = RuleEvaluator::readsModules(m_rules);
        // `known[i]`: the bytes of files[i] from its start that are in memory.
        auto finishFiles = [&](std::vector<FileResult> &files, const std::vector<std::span<const uint8_t>> &known,
                               int threads) {
            size_t hits = 0;
            for (const FileResult &file : files)
                hits += file.hits.size();
            // Below this, starting threads costs more than it saves.
            if (!readsModules && hits + 64 * files.size() < (size_t(1) << 16))
                threads = 1;
            threads = std::max(1, std::min(threads, int(files.size())));
            while (evaluators.size() < size_t(threads))
                evaluators.push_back(std::make_unique<RuleEvaluator>(m_rules, rejected));
            parallelFor(files.size(), threads, [&](size_t i, int worker) {
                sortHits(files[i].hits);
                evaluators[size_t(worker)]->evaluate(files[i], known[i]);
            });
        };
        LaunchParams previous = startParams; // as setParams() made them: sizes of 0 are the engine's
        auto lastDone = t0;
        bool dropping = false; // as in the starter
        while (auto job = started.pop()) {
            std::unique_ptr<FileBatch> batch = std::move(job->batch);
            if (dropping || (m_cancel && !engineFailed)) {
                dropping = true;
                empty.push(std::move(batch));
                continue;
            }
            const auto r0 = job->startsBegan;
            const auto r1 = job->startsEnded;
            const auto b0 = Clock::now();
            const LaunchParams &params = job->params;
            BatchResult &result = job->result;
            const int threads = params.threads > 0 ? params.threads : hardwareThreads();
            std::vector<std::vector<Hit>> &perFile = job->perFile;
            std::vector<std::vector<std::pair<int, int64_t>>> &perFileCounts = job->perFileCounts;

            for (const QString &n : result.notices)
                if (callbacks.notice)
                    callbacks.notice(n);
            for (const FileProblem &p : batch->problems) {
                ++summary.problems;
                if (callbacks.problem)
                    callbacks.problem(p);
            }
            // A file's result goes to its place among the files that end in this batch (reported in order).
            const size_t numFiles = batch->files.size();
            std::vector<size_t> slot(numFiles, 0);
            size_t ending = 0;
            for (size_t f = 0; f < numFiles; ++f)
                if (!batch->files[f].failed && batch->files[f].lastChunk)
                    slot[f] = ending++;
            done.resize(ending);
            known.assign(ending, {});
            auto begin = [&](FileResult &r, const BatchFile &bf) {
                r.fileIndex = bf.fileIndex;
                r.path = bf.path;
            };
            // Chunks of a file that began in an earlier batch or goes on into the next (the first and the last
            // of the batch): gathered in `pending`, in order.
            for (size_t f = 0; f < numFiles; ++f) {
                const BatchFile &bf = batch->files[f];
                if (bf.failed || (bf.firstChunk && bf.lastChunk))
                    continue;
                if (bf.firstChunk) {
                    pending = {};
                    begin(pending, bf);
                    // Conditions read the start of the file from the bytes scanned rather than open every file
                    // again; this batch's buffer is reused before the file's last chunk is resolved.
                    if (m_anyYara) {
                        const int64_t n = std::min(FileResult::kHeadBytes, bf.holdEnd - bf.holdBegin);
                        const uint8_t *at = bf.at(batch->haystack.get(), 0);
                        pending.head.assign(at, at + n);
                    }
                }
                pending.size = bf.fileSize;
                pending.hits.insert(pending.hits.end(), perFile[f].begin(), perFile[f].end());
                addCounts(pending.counts, perFileCounts[f]);
                if (!bf.lastChunk)
                    continue;
                done[slot[f]] = std::move(pending);
                known[slot[f]] = done[slot[f]].head;
                pending = {};
            }
            // Whole files, independent of each other: tens of thousands of small files make a batch.
            parallelFor(numFiles, numFiles < 1024 ? 1 : threads, [&](size_t f, int) {
                const BatchFile &bf = batch->files[f];
                if (bf.failed || !bf.firstChunk || !bf.lastChunk)
                    return;
                FileResult &r = done[slot[f]];
                begin(r, bf);
                r.size = bf.fileSize;
                // The whole file is in this batch's buffer, which is not reused before the file is resolved.
                known[slot[f]] = { bf.at(batch->haystack.get(), 0), size_t(bf.holdEnd - bf.holdBegin) };
                r.hits = std::move(perFile[f]);
                r.counts = std::move(perFileCounts[f]);
            });
            // Files are independent: their hits are ordered and their rules decided on several threads (a
            // YARA scan can bring tens of millions of hits), then reported in order.
            const auto r2 = Clock::now();
            finishFiles(done, known, threads);
            const auto r3 = Clock::now();
            for (FileResult &file : done) {
                if (!file.moduleError.isEmpty()) {
                    // Reported, as yara reports a file it cannot scan; its conditions read the modules as undefined.
                    ++summary.problems;
                    if (callbacks.problem)
                        callbacks.problem(FileProblem { file.path, file.moduleError });
                }
                ++summary.files;
                summary.bytes += file.size;
                summary.hits += int64_t(file.hits.size());
                for (const auto &c : file.counts)
                    summary.hits += c.second;
                if (callbacks.fileDone)
                    callbacks.fileDone(file);
            }
            done.clear();
            known.clear();

            BatchTelemetry &t = result.telemetry;
            t.index = batch->index;
            t.files = int(batch->files.size());
            t.bytes = batch->ownedBytes;
            t.haystackBytes = batch->used;
            t.segments = int(batch->segments.size());
            t.engineMs = job->engineMs;
            // Its starts and its files, not the wait between the two stages.
            t.resolveMs = msBetween(r0, r1) + msSince(b0);
            // Batches overlap (one resolved while the next is scanned): a batch's wall time runs from its scan's
            // start, or the previous batch's end if later, to its own end, so that bytes / wall is the rate seen.
            const auto now = Clock::now();
            t.wallMs = std::chrono::duration<double, std::milli>(now - std::max(job->began, lastDone)).count();
            lastDone = now;
            t.readMs = batch->readMs();
            t.bufferWaitMs = batch->bufferWaitMs;
            if (trace) {
                auto at = [&](Clock::time_point p) {
                    return std::chrono::duration<double, std::milli>(p - t0).count();
                };
                qCInfo(lcPipeline).noquote() << QString::asprintf(
                             "pipeline batch %d: %.0f MiB; planned %.1f, waited for its buffer %.1f ms; read "
                             "%.1f-%.1f, queued %.1f, engine %.1f-%.1f, resolved %.1f-%.1f ms (starts %.1f, "
                             "files from %.1f: gathered %.1f, evaluated %.1f, reported %.1f); starts: grouped %.1f, "
                             "cut %.1f, ordered %.1f, found %.1f (%.1f summed over units), gathered %.1f; longest of "
                             "%zu start units %.1f ms: pattern %d, %zu ends, file of %lld bytes",
                             t.index, double(batch->used) / (1 << 20), at(batch->planned), batch->bufferWaitMs,
                             at(batch->readBegan), at(batch->readEnded), at(batch->queued), at(job->began),
                             at(job->began) + job->engineMs, at(r0), at(now), at(r1) - at(r0), at(b0), at(r2) - at(b0),
                             at(r3) - at(r2), at(now) - at(r3), job->trace.group, job->trace.cut, job->trace.order,
                             job->trace.starts, job->trace.unitsSum, job->trace.gather, job->trace.longest.units,
                             job->trace.longest.ms, job->trace.longest.pattern, job->trace.longest.ends,
                             static_cast<long long>(job->trace.longest.fileSize));
            }
            t.paramsChanged = !(params == previous);
            previous = params;
            ++summary.batches;
            if (callbacks.batchDone)
                callbacks.batchDone(t);
            empty.push(std::move(batch));
        }
    });

    const size_t numUnbounded = m_catalog.unboundedGroups();
    std::vector<uint32_t> carry;
    {
        // While the first batch is read.
        const LaunchParams p = currentParams();
        m_engine.prepare(m_catalog, p, std::min(p.batchBytes, m_engine.maxBatchBytes()));
    }
    std::unique_ptr<FileBatch> next;
    while (auto batch = next ? std::move(next) : full.pop()) {
        if (m_cancel) {
            m_engine.forgetNext(); // before the batch handed over as the next one goes back
            empty.push(std::move(batch));
            continue;
        }
        auto job = std::make_unique<Scanned>();
        job->params = currentParams();
        job->began = Clock::now();
        // The next batch when it is read already, so that the engine may start moving it while it scans this one.
        next = full.tryPop();
        if (next)
            m_engine.setNext(*next);
        QString error;
        if (!m_engine.scan(*batch, m_catalog, job->params, carry, job->result, &error)) {
            summary.error = error;
            engineFailed = true;
            m_cancel = true;
            empty.push(std::move(batch));
            continue;
        }
        job->engineMs = msSince(job->began);
        // The carry comes from the engine's result alone, so the next batch can start before this one is
        // resolved. The next chunk of a continuing file is the first file of the next batch.
        std::vector<uint32_t> nextCarry(numUnbounded, 0);
        for (size_t f = 0; f < batch->files.size(); ++f) {
            const BatchFile &bf = batch->files[f];
            if (!bf.failed && !bf.lastChunk)
                std::copy_n(job->result.carryOut.begin() + ptrdiff_t(f * numUnbounded), numUnbounded,
                            nextCarry.begin());
        }
        carry = std::move(nextCarry);
        job->batch = std::move(batch);
        scanned.push(std::move(job));
    }
    m_engine.forgetNext();
    scanned.close();
    starter.join();
    resolver.join();
    // Unblock a reader waiting for a buffer after a cancel.
    empty.close();
    reader.join();
    preparer.join();
    summary.cancelled = m_cancel && summary.error.isEmpty();
    summary.wallMs = msSince(t0);
    return summary;
}

} // namespace Hitscope
