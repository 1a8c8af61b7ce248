// SPDX-License-Identifier: GPL-3.0-or-later
#include "scanner.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include "scan/batcher.h"

namespace Hitscope {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Batches travel reader -> scanner through `full` and come back through `empty`, so at most a few
// haystacks exist at once and none is page-faulted in anew.
class BatchQueue
{
public:
    void push(std::unique_ptr<FileBatch> b)
    {
        std::lock_guard lock(m_mutex);
        m_items.push_back(std::move(b));
        m_cv.notify_all();
    }
    // Returns null once closed and drained.
    std::unique_ptr<FileBatch> pop()
    {
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [&] { return !m_items.empty() || m_closed; });
        if (m_items.empty())
            return nullptr;
        auto b = std::move(m_items.front());
        m_items.pop_front();
        return b;
    }
    void close()
    {
        std::lock_guard lock(m_mutex);
        m_closed = true;
        m_cv.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<std::unique_ptr<FileBatch>> m_items;
    bool m_closed = false;
};

// Reads bytes for start finding: from the batch when held there, else from the file (only unbounded
// patterns can start before the chunk).
class ByteSource
{
public:
    ByteSource(const FileBatch &batch, const BatchFile &file)
        : m_batch(batch)
        , m_file(file)
    {
    }
    ~ByteSource()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    uint8_t operator()(int64_t offset)
    {
        if (offset >= m_file.holdBegin && offset < m_file.holdEnd)
            return *m_file.at(m_batch.haystack.get(), offset);
        if (offset < m_blockBegin || offset >= m_blockBegin + m_blockSize) {
            if (m_fd < 0)
                m_fd = ::open(m_file.path.constData(), O_RDONLY | O_CLOEXEC);
            m_blockBegin = offset & ~int64_t(kBlock - 1);
            const ssize_t n = m_fd >= 0 ? ::pread(m_fd, m_block, kBlock, m_blockBegin) : -1;
            m_blockSize = n > 0 ? n : 0;
            if (offset >= m_blockBegin + m_blockSize)
                return 0;
        }
        return m_block[offset - m_blockBegin];
    }

private:
    static constexpr int kBlock = 1 << 16;
    const FileBatch &m_batch;
    const BatchFile &m_file;
    int m_fd = -1;
    int64_t m_blockBegin = 0;
    int64_t m_blockSize = 0;
    uint8_t m_block[kBlock];
};

std::vector<int> rejectedPatterns(const PatternCatalog &catalog)
{
    std::vector<int> out;
    for (size_t p = 0; p < catalog.patterns.size(); ++p)
        if (catalog.patterns[p].group < 0)
            out.push_back(int(p));
    return out;
}

} // namespace

Scanner::Scanner(const RuleSet &rules, const PatternCatalog &catalog, Engine &engine)
    : m_rules(rules)
    , m_catalog(catalog)
    , m_engine(engine)
    , m_starts(rules)
    , m_yara(m_starts)
    , m_evaluator(rules, rejectedPatterns(catalog))
{
}

Scanner::~Scanner() = default;

void Scanner::setParams(const LaunchParams &params)
{
    std::lock_guard lock(m_paramsMutex);
    m_params = params;
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

void Scanner::resolve(const FileBatch &batch, const std::vector<RawHit> &raw, int threads,
                      std::vector<std::vector<Hit>> &perFile)
{
    perFile.assign(batch.files.size(), {});
    std::vector<std::vector<std::pair<uint32_t, int64_t>>> byFile(batch.files.size()); // (pattern, end)
    for (const RawHit &h : raw)
        byFile[h.batchFile].emplace_back(h.pattern, h.end);
    auto work = [&](size_t f) {
        const BatchFile &bf = batch.files[f];
        std::unique_ptr<ByteSource> source;
        StartFinder::ByteAt byteAt = [&](int64_t offset) {
            if (!source)
                source = std::make_unique<ByteSource>(batch, bf);
            return (*source)(offset);
        };
        // All ends of a pattern in one call, ascending: walks back from the ends of one long run share their
        // work there, where one call per end would be quadratic in the run's length.
        auto &hits = byFile[f];
        if (!std::is_sorted(hits.begin(), hits.end()))
            std::sort(hits.begin(), hits.end());
        auto &out = perFile[f];
        out.reserve(hits.size());
        std::vector<int64_t> ends, starts;
        for (size_t i = 0; i < hits.size();) {
            const uint32_t pattern = hits[i].first;
            ends.clear();
            for (; i < hits.size() && hits[i].first == pattern; ++i)
                ends.push_back(hits[i].second);
            const bool verify = pattern < m_catalog.patterns.size() && m_catalog.patterns[pattern].verify;
            if (const auto &yara = m_rules.patterns[pattern].yara) {
                m_yara.find(*yara, int(pattern), ends, bf.fileSize, byteAt, verify, out);
                continue;
            }
            m_starts.leftmostStarts(int(pattern), ends, bf.fileSize, byteAt, starts, verify);
            for (size_t k = 0; k < ends.size(); ++k) {
                // -1: no match ends there, as a verified pattern's relaxed DFA may report.
                if (starts[k] >= 0)
                    out.push_back({ int(pattern), starts[k], ends[k] - starts[k] + 1 });
            }
        }
    };
    if (threads <= 1 || raw.size() < 4096) {
        for (size_t f = 0; f < batch.files.size(); ++f)
            work(f);
        return;
    }
    std::atomic<size_t> next { 0 };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&] {
            for (size_t f = next++; f < batch.files.size(); f = next++)
                work(f);
        });
    for (auto &th : pool)
        th.join();
}

ScanSummary Scanner::run(const QByteArrayList &paths, const WalkOptions &walk, const LaunchParams &initial,
                         const Callbacks &callbacks)
{
    const auto t0 = Clock::now();
    m_cancel = false;
    setParams(initial);
    const int overlap = std::max(0, m_catalog.maxBoundedMatchLength() - 1);

    BatchQueue full;
    BatchQueue empty;
    constexpr int kBuffers = 3; // one being filled, one queued, one being scanned
    for (int i = 0; i < kBuffers; ++i)
        empty.push(std::make_unique<FileBatch>());

    std::thread reader([&] {
        int seenVersion = -1;
        auto readStart = Clock::now();
        Batcher batcher(
            overlap, [&] { return empty.pop(); },
            [&](std::unique_ptr<FileBatch> b) {
                // Recorded on the batch so the telemetry shows what reading cost.
                b->readMs = msSince(readStart);
                full.push(std::move(b));
                readStart = Clock::now();
            },
            &m_cancel);
        auto applySizes = [&] {
            if (m_paramsVersion.load() == seenVersion)
                return;
            seenVersion = m_paramsVersion.load();
            const LaunchParams p = currentParams();
            batcher.setSizes(std::min(p.batchBytes, m_engine.maxBatchBytes()), p.segmentBytes);
        };
        applySizes();
        FileWalker walker(walk);
        walker.walk(
            paths,
            [&](const FileEntry &e) {
                applySizes();
                batcher.addFile(e);
            },
            [&](const FileProblem &p) { batcher.addProblem(p); }, &m_cancel);
        if (!m_cancel)
            batcher.finish();
        full.close();
    });

    ScanSummary summary;
    const size_t numUnbounded = size_t(std::count_if(m_catalog.groups.begin(), m_catalog.groups.end(),
                                                      [](const DfaGroup &g) { return g.unbounded(); }));
    std::vector<uint32_t> carry;
    FileResult pending; // the file whose chunks continue into the next batch
    LaunchParams previous = initial;
    BatchResult result;
    std::vector<std::vector<Hit>> perFile;

    while (auto batch = full.pop()) {
        if (m_cancel) {
            empty.push(std::move(batch));
            continue;
        }
        const LaunchParams params = currentParams();
        const auto b0 = Clock::now();
        result = {};
        QString error;
        if (!m_engine.scan(*batch, m_catalog, params, carry, result, &error)) {
            summary.error = error;
            m_cancel = true;
            empty.push(std::move(batch));
            continue;
        }
        resolve(*batch, result.hits, params.threads > 0 ? params.threads : int(std::thread::hardware_concurrency()),
                perFile);

        for (const QString &n : result.notices)
            if (callbacks.notice)
                callbacks.notice(n);
        // The next chunk of a continuing file is the first file of the next batch.
        std::vector<uint32_t> nextCarry(numUnbounded, 0);
        for (const FileProblem &p : batch->problems) {
            ++summary.problems;
            if (callbacks.problem)
                callbacks.problem(p);
        }
        for (size_t f = 0; f < batch->files.size(); ++f) {
            const BatchFile &bf = batch->files[f];
            if (bf.failed)
                continue;
            if (bf.firstChunk) {
                pending = {};
                pending.fileIndex = bf.fileIndex;
                pending.path = bf.path;
            }
            pending.size = bf.fileSize;
            pending.hits.insert(pending.hits.end(), perFile[f].begin(), perFile[f].end());
            if (!bf.lastChunk) {
                std::copy_n(result.carryOut.begin() + ptrdiff_t(f * numUnbounded), numUnbounded, nextCarry.begin());
                continue;
            }
            std::sort(pending.hits.begin(), pending.hits.end());
            m_evaluator.evaluate(pending);
            ++summary.files;
            summary.bytes += bf.fileSize;
            summary.hits += int64_t(pending.hits.size());
            if (callbacks.fileDone)
                callbacks.fileDone(pending);
            pending = {};
        }
        carry = std::move(nextCarry);

        BatchTelemetry &t = result.telemetry;
        t.index = batch->index;
        t.files = int(batch->files.size());
        t.bytes = batch->ownedBytes;
        t.haystackBytes = batch->used;
        t.segments = int(batch->segments.size());
        t.wallMs = msSince(b0);
        t.readMs = batch->readMs;
        t.paramsChanged = !(params == previous);
        previous = params;
        ++summary.batches;
        if (callbacks.batchDone)
            callbacks.batchDone(t);
        empty.push(std::move(batch));
    }
    // Unblock a reader waiting for a buffer after a cancel.
    empty.close();
    reader.join();
    summary.cancelled = m_cancel && summary.error.isEmpty();
    summary.wallMs = msSince(t0);
    return summary;
}

} // namespace Hitscope
