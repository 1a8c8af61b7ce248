// SPDX-License-Identifier: GPL-3.0-or-later
#include "cpuengine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace Hitscope {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// One DFA walk over file bytes [pos, end) of one batch file, reporting ends in [ownBegin, ownEnd).
struct Walk
{
    const uint8_t *data = nullptr; // byte at file offset `pos`
    int64_t pos = 0;
    int64_t end = 0;
    int64_t ownBegin = 0;
    int64_t ownEnd = 0;
    uint32_t state = 0;
    uint32_t batchFile = 0;
};

struct Event
{
    int64_t pos;
    uint32_t state;
};

uint32_t startState(const Dfa &dfa, const BatchFile &f, const uint8_t *haystack, int64_t scanBegin)
{
    if (scanBegin == 0)
        return dfa.start[Dfa::AtFileStart];
    const uint8_t before = *f.at(haystack, scanBegin - 1);
    return dfa.start[isWordByte(before) ? Dfa::AfterWord : Dfa::AfterNonWord];
}

class DfaWalker
{
public:
    DfaWalker(const Dfa &dfa, std::vector<RawHit> &hits)
        : m_dfa(dfa)
        , m_table(dfa.transitions.data())
        , m_classes(dfa.byteClass.data())
        , m_hits(hits)
    {
    }

    // Walks up to `stop` (file offset) and leaves the walk there.
    void run(Walk &w, int64_t stop)
    {
        uint32_t s = w.state;
        const uint8_t *p = w.data;
        const int64_t n = stop - w.pos;
        for (int64_t i = 0; i < n; ++i) {
            s = m_table[s + m_classes[p[i]]];
            if (s & Dfa::kAcceptFlag) [[unlikely]] {
                s &= Dfa::kStateMask;
                report(w, w.pos + i, s);
            }
        }
        w.state = s;
        w.data += n;
        w.pos = stop;
    }

    // Four walks in lock step for as long as all four have bytes, then each to its end.
    void run4(Walk *w)
    {
        int64_t n = w[0].end - w[0].pos;
        for (int k = 1; k < 4; ++k)
            n = std::min(n, w[k].end - w[k].pos);
        uint32_t s0 = w[0].state, s1 = w[1].state, s2 = w[2].state, s3 = w[3].state;
        const uint8_t *p0 = w[0].data, *p1 = w[1].data, *p2 = w[2].data, *p3 = w[3].data;
        for (int64_t i = 0; i < n; ++i) {
            s0 = m_table[s0 + m_classes[p0[i]]];
            s1 = m_table[s1 + m_classes[p1[i]]];
            s2 = m_table[s2 + m_classes[p2[i]]];
            s3 = m_table[s3 + m_classes[p3[i]]];
            if ((s0 | s1 | s2 | s3) & Dfa::kAcceptFlag) [[unlikely]] {
                if (s0 & Dfa::kAcceptFlag)
                    report(w[0], w[0].pos + i, s0 &= Dfa::kStateMask);
                if (s1 & Dfa::kAcceptFlag)
                    report(w[1], w[1].pos + i, s1 &= Dfa::kStateMask);
                if (s2 & Dfa::kAcceptFlag)
                    report(w[2], w[2].pos + i, s2 &= Dfa::kStateMask);
                if (s3 & Dfa::kAcceptFlag)
                    report(w[3], w[3].pos + i, s3 &= Dfa::kStateMask);
            }
        }
        const uint32_t s[4] = { s0, s1, s2, s3 };
        for (int k = 0; k < 4; ++k) {
            w[k].state = s[k];
            w[k].data += n;
            w[k].pos += n;
            run(w[k], w[k].end);
        }
    }

    // Matches decided only at the end of the file ($, trailing \b).
    void reportEof(const Walk &w, int64_t fileSize)
    {
        const int64_t end = fileSize - 1;
        if (end < w.ownBegin || end >= w.ownEnd)
            return;
        const uint32_t st = w.state / m_dfa.numClasses;
        for (uint32_t i = m_dfa.acceptIndex[st]; i < m_dfa.acceptIndex[st + 1]; ++i) {
            const uint32_t e = m_dfa.acceptEntries[i];
            if (Dfa::entryKind(e) == Dfa::Eof)
                m_hits.push_back({ w.batchFile, Dfa::entryPattern(e), end });
        }
    }

private:
    void report(const Walk &w, int64_t pos, uint32_t premultiplied)
    {
        const uint32_t st = premultiplied / m_dfa.numClasses;
        for (uint32_t i = m_dfa.acceptIndex[st]; i < m_dfa.acceptIndex[st + 1]; ++i) {
            const uint32_t e = m_dfa.acceptEntries[i];
            const Dfa::AcceptKind kind = Dfa::entryKind(e);
            if (kind == Dfa::Eof)
                continue;
            const int64_t end = kind == Dfa::Now ? pos : pos - 1;
            if (end >= w.ownBegin && end < w.ownEnd)
                m_hits.push_back({ w.batchFile, Dfa::entryPattern(e), end });
        }
    }

    const Dfa &m_dfa;
    const uint32_t *m_table;
    const uint8_t *m_classes;
    std::vector<RawHit> &m_hits;
};

// A unit of work: a run of up to four segments of one bounded group, or one chunk of an unbounded group.
struct Item
{
    int group;
    int firstSegment; // bounded: index into batch.segments; unbounded: -1
    int count;        // bounded: segments in this item
    uint32_t batchFile; // unbounded only
    int unboundedIndex;
    int64_t bytes;
};

} // namespace

QString CpuEngine::name() const
{
    return QStringLiteral("cpu");
}

bool CpuEngine::scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                     const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error)
{
    Q_UNUSED(error);
    const auto t0 = Clock::now();
    const uint8_t *haystack = batch.haystack.get();

    std::vector<int> unboundedGroups;
    for (int g = 0; g < int(catalog.groups.size()); ++g)
        if (catalog.groups[size_t(g)].unbounded())
            unboundedGroups.push_back(g);
    const size_t numUnbounded = unboundedGroups.size();

    std::vector<Item> items;
    for (size_t u = 0; u < numUnbounded; ++u)
        for (uint32_t f = 0; f < batch.files.size(); ++f) {
            const BatchFile &bf = batch.files[f];
            if (bf.holdEnd > bf.holdBegin)
                items.push_back({ unboundedGroups[u], -1, 0, f, int(u), bf.holdEnd - bf.ownBegin });
        }
    // Big unbounded chunks first so that no thread is left with one at the end.
    std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) { return a.bytes > b.bytes; });
    for (int g = 0; g < int(catalog.groups.size()); ++g) {
        if (catalog.groups[size_t(g)].unbounded())
            continue;
        for (int s = 0; s < int(batch.segments.size()); s += 4) {
            const int count = std::min<int>(4, int(batch.segments.size()) - s);
            items.push_back({ g, s, count, 0, -1, 0 });
        }
    }

    result.carryOut.assign(batch.files.size() * numUnbounded, 0);
    int threads = params.threads > 0 ? params.threads : int(std::max(1u, std::thread::hardware_concurrency()));
    threads = std::max(1, std::min<int>(threads, int(items.size())));
    std::vector<std::vector<RawHit>> perThread;
    perThread.resize(size_t(threads));
    std::vector<double> busyMs(size_t(threads), 0);
    std::atomic<size_t> next { 0 };

    auto worker = [&](int t) {
        const auto w0 = Clock::now();
        std::vector<RawHit> &hits = perThread[size_t(t)];
        for (size_t i = next++; i < items.size(); i = next++) {
            const Item &item = items[i];
            const Dfa &dfa = catalog.groups[size_t(item.group)].dfa;
            DfaWalker scanner(dfa, hits);
            if (item.firstSegment < 0) {
                const BatchFile &bf = batch.files[item.batchFile];
                Walk w;
                w.batchFile = item.batchFile;
                w.ownBegin = bf.ownBegin;
                w.ownEnd = bf.ownEnd;
                w.pos = bf.ownBegin;
                w.end = bf.holdEnd;
                w.state = bf.firstChunk ? dfa.start[Dfa::AtFileStart]
                                        : carryIn[item.batchFile * numUnbounded + size_t(item.unboundedIndex)];
                w.data = bf.at(haystack, w.pos);
                // The carried state is the one after the last owned byte, before the look-ahead byte.
                scanner.run(w, bf.ownEnd);
                result.carryOut[item.batchFile * numUnbounded + size_t(item.unboundedIndex)] = w.state;
                scanner.run(w, bf.holdEnd);
                if (bf.lastChunk)
                    scanner.reportEof(w, bf.fileSize);
                continue;
            }
            Walk walks[4];
            for (int k = 0; k < item.count; ++k) {
                const Segment &seg = batch.segments[size_t(item.firstSegment + k)];
                const BatchFile &bf = batch.files[seg.batchFile];
                Walk &w = walks[k];
                w.batchFile = seg.batchFile;
                w.ownBegin = seg.ownBegin;
                w.ownEnd = seg.ownEnd;
                w.pos = seg.scanBegin;
                w.end = seg.scanEnd;
                w.state = startState(dfa, bf, haystack, seg.scanBegin);
                w.data = bf.at(haystack, seg.scanBegin);
            }
            if (item.count == 4)
                scanner.run4(walks);
            else
                for (int k = 0; k < item.count; ++k)
                    scanner.run(walks[k], walks[k].end);
            for (int k = 0; k < item.count; ++k) {
                const BatchFile &bf = batch.files[walks[k].batchFile];
                if (walks[k].end == bf.fileSize)
                    scanner.reportEof(walks[k], bf.fileSize);
            }
        }
        busyMs[size_t(t)] = msSince(w0);
    };

    if (threads == 1) {
        worker(0);
    } else {
        std::vector<std::thread> pool;
        pool.reserve(size_t(threads));
        for (int t = 0; t < threads; ++t)
            pool.emplace_back(worker, t);
        for (auto &th : pool)
            th.join();
    }

    size_t total = 0;
    for (const auto &v : perThread)
        total += v.size();
    result.hits.clear();
    result.hits.reserve(total);
    for (auto &v : perThread)
        result.hits.insert(result.hits.end(), v.begin(), v.end());

    BatchTelemetry &t = result.telemetry;
    t.engine = name();
    t.backend = QStringLiteral("cpu");
    t.device = QStringLiteral("%1 threads").arg(threads);
    t.workItems = int64_t(items.size());
    t.workerGroups = threads;
    t.workgroupSize = 1;
    t.wallMs = msSince(t0);
    double busy = 0;
    for (double b : busyMs)
        busy += b;
    t.occupancy = t.wallMs > 0 ? std::min(1.0, busy / (t.wallMs * threads)) : 0;
    t.hits = int64_t(result.hits.size());
    return true;
}

} // namespace Hitscope
