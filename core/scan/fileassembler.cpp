// SPDX-License-Identifier: GPL-3.0-or-later
#include "fileassembler.h"

#include <algorithm>

#include "automata/patterncatalog.h"
#include "engine/filebatch.h"
#include "rules/ruleset.h"
#include "scan/ruleevaluator.h"
#include "scan/ruleprofiler.h"
#include "util/elapsed.h"
#include "util/parallel.h"

namespace Hitscope {

namespace {

std::vector<int> rejectedPatterns(const PatternCatalog &catalog)
{
    std::vector<int> out;
    for (size_t p = 0; p < catalog.patterns.size(); ++p)
        if (catalog.patterns[p].group < 0)
            out.push_back(int(p));
    return out;
}

// Packed into (offset, pattern) keys when they fit, which sorts millions of hits about twice as fast as
// comparing Hits.
void sortPacked(std::vector<Hit> &hits)
{
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

void beginFile(FileResult &r, const BatchFile &bf)
{
    r.fileIndex = bf.fileIndex;
    r.path = bf.path;
}

} // namespace

FileAssembler::FileAssembler(const RuleSet &rules, const PatternCatalog &catalog)
    : m_rules(rules)
    , m_rejected(rejectedPatterns(catalog))
    // Where conditions read YARA modules, libyara parses files for them: each file costs as much as thousands of
    // hits.
    , m_readsModules(RuleEvaluator::readsModules(rules))
    , m_keepHeads(std::any_of(rules.rules.begin(), rules.rules.end(), [](const Rule &r) { return r.isYara(); }))
{
}

FileAssembler::~FileAssembler() = default;

void FileAssembler::sortHits(std::vector<Hit> &hits)
{
    // Resolving leaves each pattern's hits ascending, so a file's hits are a few sorted runs (one pattern often
    // holds nearly all of them): merging the runs costs far less than sorting.
    std::vector<size_t> runs { 0 };
    for (size_t i = 1; i < hits.size() && runs.size() <= 64; ++i)
        if (hits[i] < hits[i - 1])
            runs.push_back(i);
    if (runs.size() > 64) {
        sortPacked(hits);
        return;
    }
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
}

void FileAssembler::assemble(const FileBatch &batch, std::vector<std::vector<Hit>> &perFile,
                             std::vector<std::vector<std::pair<int, int64_t>>> &perFileCounts, int threads)
{
    const auto g0 = Clock::now();
    gather(batch, perFile, perFileCounts, threads);
    const auto e0 = Clock::now();
    evaluate(threads);
    m_gatherMs = msBetween(g0, e0);
    m_evaluateMs = msSince(e0);
}

void FileAssembler::gather(const FileBatch &batch, std::vector<std::vector<Hit>> &perFile,
                           std::vector<std::vector<std::pair<int, int64_t>>> &perFileCounts, int threads)
{
    // A file's result goes to its place among the files that end in this batch (reported in order).
    const size_t numFiles = batch.files.size();
    m_slot.assign(numFiles, 0);
    size_t ending = 0;
    for (size_t f = 0; f < numFiles; ++f)
        if (!batch.files[f].failed && batch.files[f].lastChunk)
            m_slot[f] = ending++;
    m_done.clear();
    m_done.resize(ending);
    m_known.assign(ending, {});
    gatherSpanning(batch, perFile, perFileCounts);
    // Whole files, independent of each other: tens of thousands of small files make a batch.
    parallelFor(numFiles, numFiles < 1024 ? 1 : threads, [&](size_t f, int) {
        const BatchFile &bf = batch.files[f];
        if (bf.failed || !bf.firstChunk || !bf.lastChunk)
            return;
        FileResult &r = m_done[m_slot[f]];
        beginFile(r, bf);
        r.size = bf.fileSize;
        // The whole file is in this batch's buffer, which is not reused before the file is resolved.
        m_known[m_slot[f]] = { bf.at(batch.haystack.get(), 0), size_t(bf.holdEnd - bf.holdBegin) };
        r.hits = std::move(perFile[f]);
        r.counts = std::move(perFileCounts[f]);
    });
}

// Chunks of a file that began in an earlier batch or goes on into the next (the first and the last of the batch):
// gathered in m_pending, in order.
void FileAssembler::gatherSpanning(const FileBatch &batch, std::vector<std::vector<Hit>> &perFile,
                                   std::vector<std::vector<std::pair<int, int64_t>>> &perFileCounts)
{
    for (size_t f = 0; f < batch.files.size(); ++f) {
        const BatchFile &bf = batch.files[f];
        if (bf.failed || (bf.firstChunk && bf.lastChunk))
            continue;
        if (bf.firstChunk) {
            m_pending = {};
            beginFile(m_pending, bf);
            // Conditions read the start of the file from the bytes scanned rather than open every file again;
            // this batch's buffer is reused before the file's last chunk is resolved.
            if (m_keepHeads) {
                const int64_t n = std::min(FileResult::kHeadBytes, bf.holdEnd - bf.holdBegin);
                const uint8_t *at = bf.at(batch.haystack.get(), 0);
                m_pending.head.assign(at, at + n);
            }
        }
        m_pending.size = bf.fileSize;
        m_pending.hits.insert(m_pending.hits.end(), perFile[f].begin(), perFile[f].end());
        addCounts(m_pending.counts, perFileCounts[f]);
        if (!bf.lastChunk)
            continue;
        m_done[m_slot[f]] = std::move(m_pending);
        m_known[m_slot[f]] = m_done[m_slot[f]].head;
        m_pending = {};
    }
}

// Files are independent: their hits are ordered and their rules decided on several threads (a YARA scan can bring
// tens of millions of hits).
void FileAssembler::evaluate(int threads)
{
    size_t hits = 0;
    for (const FileResult &file : m_done)
        hits += file.hits.size();
    // Below this, starting threads costs more than it saves.
    if (!m_readsModules && hits + 64 * m_done.size() < (size_t(1) << 16))
        threads = 1;
    threads = std::max(1, std::min(threads, int(m_done.size())));
    while (m_evaluators.size() < size_t(threads)) {
        m_evaluators.push_back(std::make_unique<RuleEvaluator>(m_rules, m_rejected));
        m_evaluators.back()->setProfiling(m_profiling);
    }
    parallelFor(m_done.size(), threads, [&](size_t i, int worker) {
        sortHits(m_done[i].hits);
        m_evaluators[size_t(worker)]->evaluate(m_done[i], m_known[i]);
    });
}

void FileAssembler::addTallies(RuleProfiler &profiler) const
{
    for (const auto &evaluator : m_evaluators)
        if (const RuleTally *tally = evaluator->tally())
            profiler.addTally(*tally);
}

} // namespace Hitscope
