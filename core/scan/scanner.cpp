// SPDX-License-Identifier: GPL-3.0-or-later
#include "scanner.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <span>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include <QScopeGuard>

#include "scan/batcher.h"
#include "scan/fileassembler.h"
#include "scan/hitresolver.h"
#include "scan/ruleprofiler.h"
#include "scan/walkahead.h"
#include "util/elapsed.h"
#include "util/logcategories.h"
#include "util/owningqueue.h"
#include "util/parallel.h"
#include "util/runtimeswitches.h"
#include "util/threadname.h"

namespace Hitscope {

// A batch the engine has scanned, on its way to the resolver with what it needs.
struct Scanner::Scanned
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

// What the stages of one run share: the queues between them, the summary and whether the engine failed.
struct Scanner::Run
{
    explicit Run(const Callbacks &callbacks)
        : callbacks(callbacks)
    {
    }
    const Callbacks &callbacks;
    Clock::time_point t0 = Clock::now();
    LaunchParams startParams;
    OwningQueue<FileBatch> read; // read, for the engine to prepare
    OwningQueue<FileBatch> full; // prepared, for the engine to scan
    OwningQueue<FileBatch> empty;
    OwningQueue<Scanned> scanned;
    OwningQueue<Scanned> started;
    ScanSummary summary;
    // Set before m_cancel when the engine fails: batches scanned before the failure are still resolved and
    // reported, as they were before resolving ran beside the scan.
    std::atomic_bool engineFailed { false };
};

namespace {
// Whether the batch's last file goes on in the next batch (a batch of problems alone has no file).
bool continuesAfter(const FileBatch &batch)
{
    return !batch.files.empty() && !batch.files.back().failed && !batch.files.back().lastChunk;
}

// The unbounded groups' states the batch's last file ends in: a continuing file is the last of its batch, and its
// next chunk the first file of the next batch.
std::vector<uint32_t> carriedOut(const FileBatch &batch, const BatchResult &result, size_t numUnbounded)
{
    const auto begin = result.carryOut.begin() + ptrdiff_t((batch.files.size() - 1) * numUnbounded);
    return std::vector<uint32_t>(begin, begin + ptrdiff_t(numUnbounded));
}

int threadsOf(const LaunchParams &params)
{
    return params.threads > 0 ? params.threads : hardwareThreads();
}
} // namespace

Scanner::Scanner(const RuleSet &rules, const PatternCatalog &catalog, Engine &engine)
    : m_rules(rules)
    , m_catalog(catalog)
    , m_engine(engine)
    , m_resolver(rules, catalog)
{
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
    Run run(callbacks);
    // When each batch was read, scanned and resolved, on stderr: which stage holds the others up.
    m_trace = RuntimeSwitches::pipelineTrace();
    m_cancel = false;
    setParams(initial);
    run.startParams = currentParams();
    m_engine.setCountedPatterns(m_resolver.counted());
    m_profile = {};
    if (m_profiling) {
        m_profiler = std::make_unique<RuleProfiler>(m_rules, m_catalog);
        m_profiler->setEveryMatchResolved(m_resolver.listsHits());
        m_resolver.setProfiler(m_profiler.get());
        m_engine.setProfiling(true);
    }
    // One being filled, one being prepared, one being scanned, the next one (which the engine may be moving to
    // its device meanwhile: Engine::setNext), one whose starts are found (which reads its haystack), one whose
    // files are reported (conditions read it too), one queued. Fewer where the engine needs no copy ahead
    // (Engine::scanBuffers()).
    for (int i = 0; i < m_engine.scanBuffers(); ++i)
        run.empty.push(std::make_unique<FileBatch>());

    std::thread reader([&] { readBatches(run, paths, walk, std::move(walked)); });
    std::thread preparer([&] { prepareBatches(run); });
    // Start finding runs on a thread of its own, in batch order, while the next batch is on the engine (the engine
    // stays on the calling thread: it may own the GPU device), and file results and callbacks on the thread after
    // it, while the next batch's starts are found: on the H200, resolving was the last stage, and each half held
    // the other.
    std::thread starter([&] { findStarts(run); });
    std::thread resolver([&] { reportFiles(run); });
    scanBatches(run);
    run.scanned.close();
    starter.join();
    resolver.join();
    // Unblock a reader waiting for a buffer after a cancel.
    run.empty.close();
    reader.join();
    preparer.join();
    run.summary.cancelled = m_cancel && run.summary.error.isEmpty();
    run.summary.wallMs = msSince(run.t0);
    if (m_profiler) {
        m_profile = m_profiler->profile(run.summary.bytes);
        m_resolver.setProfiler(nullptr);
        m_engine.setProfiling(false);
        m_profiler.reset();
    }
    return std::move(run.summary);
}

void Scanner::applySizes(Batcher &batcher, int &seenVersion)
{
    if (m_paramsVersion.load() == seenVersion)
        return;
    seenVersion = m_paramsVersion.load();
    const LaunchParams p = currentParams();
    batcher.setSizes(std::min(p.batchBytes, m_engine.maxBatchBytes()), p.segmentBytes);
    batcher.setRamp(p.rampBatches);
    // As many readers as scanning threads: one thread per core reads cached files about twice as fast as eight.
    const int threads = threadsOf(p);
    batcher.setReadThreads(threads);
    // Reading runs ahead of the other stages on a large machine; below them, its threads leave the cores to the
    // stage that holds the scan up (on the H200, resolving: 30,000 start units of a batch took 63 ms on 16
    // threads while 16 read threads and the engine's shared the cores).
    batcher.setReadNice(threads >= 8 ? kReadNice : 0);
    m_engine.setHostThreads(threads);
}

void Scanner::readBatches(Run &run, const QByteArrayList &paths, const WalkOptions &walk,
                          std::unique_ptr<WalkAhead> walked)
{
    nameThisThread("hs-plan");
    int seenVersion = -1;
    const int overlap = std::max(0, m_catalog.maxBoundedMatchLength() - 1);
    Batcher batcher(
        overlap, [&] { return run.empty.pop(); }, [&](std::unique_ptr<FileBatch> b) { run.read.push(std::move(b)); },
        &m_cancel);
    batcher.setAllocator([this](int64_t bytes) { return m_engine.newHaystack(bytes); });
    batcher.setChunkContext(m_catalog.chunkContext());
    applySizes(batcher, seenVersion);
    // The walk runs ahead on a thread of its own: once it has ended, the batcher knows what is left.
    if (!walked)
        walked = std::make_unique<WalkAhead>(paths, walkOptions(walk, currentParams().threads), &m_cancel);
    WalkAhead::Item item;
    while (!m_cancel) {
        const WalkAhead::Next n = walked->next(item, 2);
        if (n == WalkAhead::Next::End)
            break;
        if (n == WalkAhead::Next::Waiting) {
            // A batch read meanwhile leaves now, not when the slow walk (or its filters) finds a file.
            batcher.poll();
            continue;
        }
        batcher.setBytesAfter(walked->bytesAhead(), walked->unsizedAhead());
        if (!item.file) {
            batcher.addProblem(item.problem);
            continue;
        }
        applySizes(batcher, seenVersion);
        batcher.addFile(*item.file);
    }
    walked.reset(); // a walk cut short by a cancel stops here
    if (!m_cancel)
        batcher.finish();
    run.read.close();
}

// The engine's preparation of each batch (Engine::prepareBatch: the GPU's segment table, 6-13 ms of a 512 MiB
// batch on the H200) on a thread of its own: on the reader's thread it held the next read up.
void Scanner::prepareBatches(Run &run)
{
    nameThisThread("hs-prepare");
    while (auto b = run.read.pop()) {
        if (!m_cancel) {
            m_engine.prepareBatch(*b, m_catalog);
            m_engine.copyAhead(*b);
        }
        b->queued = Clock::now();
        run.full.push(std::move(b));
    }
    run.full.close();
}

bool Scanner::dropping(Run &run, bool &dropped, std::unique_ptr<FileBatch> &batch)
{
    // Once a batch is dropped, so are all after it: a file whose chunks spanned it would be reported without
    // them, should the engine then fail and later batches be reported after all.
    if (dropped || (m_cancel && !run.engineFailed)) {
        dropped = true;
        run.empty.push(std::move(batch));
        return true;
    }
    return false;
}

void Scanner::findStarts(Run &run)
{
    nameThisThread("hs-starts");
    bool drop = false;
    while (auto job = run.scanned.pop()) {
        if (dropping(run, drop, job->batch))
            continue;
        job->startsBegan = Clock::now();
        m_resolver.resolve(*job->batch, job->result, threadsOf(job->params), job->perFile, job->perFileCounts,
                           job->trace, m_trace);
        job->startsEnded = Clock::now();
        run.started.push(std::move(job));
    }
    run.started.close();
}

void Scanner::reportFiles(Run &run)
{
    nameThisThread("hs-resolve");
    FileAssembler files(m_rules, m_catalog);
    files.setProfiling(m_profiler != nullptr);
    LaunchParams previous = run.startParams; // as setParams() made them: sizes of 0 are the engine's
    Clock::time_point lastDone = run.t0;
    bool drop = false;
    while (auto job = run.started.pop()) {
        if (dropping(run, drop, job->batch))
            continue;
        reportBatch(run, *job, files, previous, lastDone);
        run.empty.push(std::move(job->batch));
    }
    if (m_profiler)
        files.addTallies(*m_profiler);
}

void Scanner::reportBatch(Run &run, Scanned &job, FileAssembler &files, LaunchParams &previous,
                          Clock::time_point &lastDone)
{
    const Callbacks &callbacks = run.callbacks;
    ScanSummary &summary = run.summary;
    const FileBatch &batch = *job.batch;
    const auto b0 = Clock::now();
    for (const QString &n : job.result.notices)
        if (callbacks.notice)
            callbacks.notice(n);
    for (const FileProblem &p : batch.problems) {
        ++summary.problems;
        if (callbacks.problem)
            callbacks.problem(p);
    }
    if (m_profiler)
        m_profiler->addBatch(job.result);
    files.assemble(batch, job.perFile, job.perFileCounts, threadsOf(job.params));
    const auto r3 = Clock::now();
    for (FileResult &file : files.files()) {
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
    files.files().clear();

    BatchTelemetry &t = job.result.telemetry;
    t.index = batch.index;
    t.files = int(batch.files.size());
    t.bytes = batch.ownedBytes;
    t.haystackBytes = batch.used;
    t.segments = int(batch.segments.size());
    t.engineMs = job.engineMs;
    // Its starts and its files, not the wait between the two stages.
    t.resolveMs = msBetween(job.startsBegan, job.startsEnded) + msSince(b0);
    // Batches overlap (one resolved while the next is scanned): a batch's wall time runs from its scan's start, or
    // the previous batch's end if later, to its own end, so that bytes / wall is the rate seen.
    const auto now = Clock::now();
    t.wallMs = msBetween(std::max(job.began, lastDone), now);
    lastDone = now;
    t.readMs = batch.readMs();
    t.bufferWaitMs = batch.bufferWaitMs;
    auto at = [&](Clock::time_point p) { return std::max(0.0, msBetween(run.t0, p)); };
    t.stages[BatchTelemetry::Read] = { at(batch.readBegan), at(batch.readEnded) };
    t.stages[BatchTelemetry::Prepare] = { at(batch.readEnded), at(batch.queued) };
    t.stages[BatchTelemetry::Scan] = { at(job.began), at(job.began) + job.engineMs };
    t.stages[BatchTelemetry::Starts] = { at(job.startsBegan), at(job.startsEnded) };
    t.stages[BatchTelemetry::Resolve] = { at(b0), at(now) };
    if (m_trace)
        tracePipeline(run, job, files, b0, r3, now);
    t.paramsChanged = !(job.params == previous);
    previous = job.params;
    ++summary.batches;
    if (callbacks.batchDone)
        callbacks.batchDone(t);
}

void Scanner::tracePipeline(const Run &run, const Scanned &job, const FileAssembler &files,
                            Clock::time_point filesBegan, Clock::time_point filesDecided, Clock::time_point now) const
{
    auto at = [&](Clock::time_point p) { return msBetween(run.t0, p); };
    const FileBatch &batch = *job.batch;
    const HitResolver::Trace &trace = job.trace;
    qCInfo(lcPipeline).noquote() << QString::asprintf(
        "pipeline batch %d: %.0f MiB; planned %.1f, waited for its buffer %.1f ms; read %.1f-%.1f, queued %.1f, "
        "engine %.1f-%.1f, resolved %.1f-%.1f ms (starts %.1f, files from %.1f: gathered %.1f, evaluated %.1f, "
        "reported %.1f); starts: grouped %.1f, cut %.1f, ordered %.1f, found %.1f (%.1f summed over units), "
        "gathered %.1f; longest of %zu start units %.1f ms: pattern %d, %zu ends, file of %lld bytes",
        job.result.telemetry.index, double(batch.used) / (1 << 20), at(batch.planned), batch.bufferWaitMs,
        at(batch.readBegan), at(batch.readEnded), at(batch.queued), at(job.began), at(job.began) + job.engineMs,
        at(job.startsBegan), at(now), msBetween(job.startsBegan, job.startsEnded), at(filesBegan), files.gatherMs(),
        files.evaluateMs(), msBetween(filesDecided, now), trace.group, trace.cut, trace.order, trace.starts,
        trace.unitsSum, trace.gather, trace.longest.units, trace.longest.ms, trace.longest.pattern,
        trace.longest.ends, static_cast<long long>(trace.longest.fileSize));
}

// Several batches at once, one per lane (Engine::concurrentScans(): a pool of devices). Lanes take the batches in
// order; a batch whose first file goes on from the batch before waits for that batch's carried states; scanned
// batches go on to the starts in order. After a failure no later batch is reported: its files may have chunks in
// the batch that failed.
void Scanner::scanConcurrently(Run &run, int lanes)
{
    const size_t numUnbounded = m_catalog.unboundedGroups();
    struct Order
    {
        std::mutex take; // batches are taken one lane at a time, in order
        std::mutex mutex;
        std::condition_variable changed;
        int64_t taken = 0;
        int64_t published = 0;
        int64_t failedAt = INT64_MAX;
        std::map<int64_t, std::unique_ptr<Scanned>> done;          // null: not scanned
        std::map<int64_t, std::unique_ptr<FileBatch>> unscanned;   // goes back once it is its turn
        std::map<int64_t, std::vector<uint32_t>> carry;            // the states carried into that batch
    } order;
    // With order.mutex held.
    auto publish = [&](int64_t seq, std::unique_ptr<Scanned> job, std::unique_ptr<FileBatch> unscanned) {
        if (unscanned)
            order.unscanned.emplace(seq, std::move(unscanned));
        order.done.emplace(seq, std::move(job));
        for (auto it = order.done.begin(); it != order.done.end() && it->first == order.published;
             it = order.done.erase(it)) {
            if (it->second && it->first < order.failedAt)
                run.scanned.push(std::move(it->second));
            else if (it->second)
                run.empty.push(std::move(it->second->batch));
            if (auto u = order.unscanned.find(it->first); u != order.unscanned.end()) {
                run.empty.push(std::move(u->second));
                order.unscanned.erase(u);
            }
            ++order.published;
        }
        order.changed.notify_all();
    };
    auto lane = [&] {
        for (;;) {
            std::unique_ptr<FileBatch> batch;
            int64_t seq = 0;
            {
                std::lock_guard take(order.take);
                batch = run.full.pop();
                seq = order.taken++;
            }
            if (!batch)
                return;
            std::vector<uint32_t> carry(numUnbounded, 0);
            const bool continues = numUnbounded > 0 && !batch->files.empty() && !batch->files.front().firstChunk;
            std::unique_lock lock(order.mutex);
            // A failure of a later batch does not stop this one: only a stop, or a failure before it, does.
            auto stopped = [&] { return (m_cancel && !run.engineFailed) || seq > order.failedAt; };
            if (continues)
                order.changed.wait(lock, [&] { return order.carry.count(seq) || stopped(); });
            if (stopped() || (continues && !order.carry.count(seq))) {
                publish(seq, nullptr, std::move(batch));
                continue;
            }
            if (continues) {
                carry = std::move(order.carry[seq]);
                order.carry.erase(seq);
            }
            lock.unlock();
            auto job = std::make_unique<Scanned>();
            job->params = currentParams();
            job->began = Clock::now();
            QString error;
            const bool ok = m_engine.scan(*batch, m_catalog, job->params, carry, job->result, &error);
            job->engineMs = msSince(job->began);
            lock.lock();
            if (!ok) {
                if (seq < order.failedAt) {
                    order.failedAt = seq;
                    run.summary.error = error;
                }
                run.engineFailed = true;
                m_cancel = true;
                publish(seq, nullptr, std::move(batch));
                continue;
            }
            if (numUnbounded > 0 && continuesAfter(*batch))
                order.carry[seq + 1] = carriedOut(*batch, job->result, numUnbounded);
            job->batch = std::move(batch);
            publish(seq, std::move(job), nullptr);
        }
    };
    {
        const LaunchParams p = currentParams();
        m_engine.prepare(m_catalog, p, std::min(p.batchBytes, m_engine.maxBatchBytes()));
    }
    std::vector<std::thread> threads;
    for (int k = 1; k < lanes; ++k)
        threads.emplace_back([&, k] {
            nameThisThread("hs-lane-" + std::to_string(k));
            lane();
        });
    lane();
    for (std::thread &t : threads)
        t.join();
}

void Scanner::scanBatches(Run &run)
{
    if (m_engine.concurrentScans() > 1) {
        scanConcurrently(run, m_engine.concurrentScans());
        return;
    }
    const size_t numUnbounded = m_catalog.unboundedGroups();
    std::vector<uint32_t> carry;
    {
        // While the first batch is read.
        const LaunchParams p = currentParams();
        m_engine.prepare(m_catalog, p, std::min(p.batchBytes, m_engine.maxBatchBytes()));
    }
    std::unique_ptr<FileBatch> next;
    while (auto batch = next ? std::move(next) : run.full.pop()) {
        if (m_cancel) {
            m_engine.forgetNext(); // before the batch handed over as the next one goes back
            run.empty.push(std::move(batch));
            continue;
        }
        auto job = std::make_unique<Scanned>();
        job->params = currentParams();
        job->began = Clock::now();
        // The next batch when it is read already, so that the engine may start moving it while it scans this one.
        next = run.full.tryPop();
        if (next)
            m_engine.setNext(*next);
        QString error;
        if (!m_engine.scan(*batch, m_catalog, job->params, carry, job->result, &error)) {
            run.summary.error = error;
            run.engineFailed = true;
            m_cancel = true;
            run.empty.push(std::move(batch));
            continue;
        }
        job->engineMs = msSince(job->began);
        // The carry comes from the engine's result alone, so the next batch can start before this one is
        // resolved.
        carry = continuesAfter(*batch) ? carriedOut(*batch, job->result, numUnbounded)
                                       : std::vector<uint32_t>(numUnbounded, 0);
        job->batch = std::move(batch);
        run.scanned.push(std::move(job));
    }
    m_engine.forgetNext();
}

} // namespace Hitscope
