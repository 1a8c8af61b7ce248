// SPDX-License-Identifier: GPL-3.0-or-later
#include "hitresolver.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include <fcntl.h>
#include <unistd.h>

#include <QScopeGuard>

#include "scan/ruleevaluator.h"
#include "scan/ruleprofiler.h"
#include "util/elapsed.h"
#include "util/parallel.h"

namespace Hitscope {

namespace {

// Reads bytes for start finding from the file: those before the chunk that only an unbounded pattern's start
// reaches (ByteAt reads the chunk's own from the batch).
class ByteSource
{
public:
    explicit ByteSource(const QByteArray &path)
        : m_path(path)
    {
    }
    ~ByteSource()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    uint8_t operator()(int64_t offset)
    {
        if (offset < m_blockBegin || offset >= m_blockBegin + m_blockSize) {
            if (m_fd < 0)
                m_fd = ::open(m_path.constData(), O_RDONLY | O_CLOEXEC);
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
    const QByteArray &m_path;
    int m_fd = -1;
    int64_t m_blockBegin = 0;
    int64_t m_blockSize = 0;
    uint8_t m_block[kBlock];
};

} // namespace

HitResolver::HitResolver(const RuleSet &rules, const PatternCatalog &catalog)
    : m_rules(rules)
    , m_catalog(catalog)
    , m_starts(rules)
    , m_yara(m_starts)
{
}

// Each end of a fixed-length YARA string is one match, owned by one chunk: its ends are its matches. Not so for
// fullword or fixed-offset strings (some ends are dropped) or relaxed DFAs (ends are verified).
bool HitResolver::endsAreMatches(size_t pattern) const
{
    const auto &yara = m_rules.patterns[pattern].yara;
    return yara && yara->fixedLength > 0 && !yara->fullword && yara->fixedOffset < 0
        && pattern < m_catalog.patterns.size() && !m_catalog.patterns[pattern].verify
        && m_catalog.patterns[pattern].group >= 0;
}

void HitResolver::setListHits(bool list)
{
    m_counted.clear();
    m_matchesNeeded.clear();
    if (list)
        return;
    std::vector<std::vector<bool>> located(m_rules.rules.size());
    std::vector<std::vector<int64_t>> needed(m_rules.rules.size());
    for (size_t r = 0; r < m_rules.rules.size(); ++r) {
        if (!m_rules.rules[r].condition)
            continue;
        located[r] = m_rules.rules[r].condition->stringsNeedingOffsets(m_rules.rules[r].patterns.size());
        needed[r] = m_rules.rules[r].condition->matchesNeeded(m_rules.rules[r].patterns.size());
    }
    std::vector<bool> counted(m_rules.patterns.size(), false);
    std::vector<int64_t> matchesNeeded(m_rules.patterns.size(), Condition::kAllMatches);
    for (size_t p = 0; p < m_rules.patterns.size(); ++p) {
        if (!m_rules.patterns[p].yara)
            continue;
        const auto r = size_t(m_rules.patterns[p].ruleIndex);
        const Rule &rule = m_rules.rules[r];
        const auto local = size_t(std::find(rule.patterns.begin(), rule.patterns.end(), int(p)) - rule.patterns.begin());
        if (local < needed[r].size())
            matchesNeeded[p] = needed[r][local];
        if (endsAreMatches(p))
            counted[p] = local < located[r].size() && !located[r][local];
    }
    if (std::find(counted.begin(), counted.end(), true) != counted.end())
        m_counted = std::move(counted);
    m_matchesNeeded = std::move(matchesNeeded);
}

// Units of work: the ends of one pattern in one file, ascending (walks back from the ends of one long run share
// their work, where one call per end would be quadratic in the run's length).
struct HitResolver::Unit
{
    uint32_t file;
    size_t begin, end;
    uint32_t run; // the first unit of the same pattern in the same file, in `units`' order
    bool cut;     // may stop at the matches its condition needs (m_matchesNeeded)
};

// One batch's hits on their way through resolve().
struct HitResolver::Work
{
    const FileBatch &batch;
    const BatchResult &result;
    int threads;
    // (pattern, end) of the listed hits, and (pattern, count) of the counted ones, grouped by file: those of
    // file f from first[f] (firstRun[f]) on.
    std::vector<size_t> first, firstRun;
    std::vector<std::pair<uint32_t, int64_t>> byFile;
    std::vector<std::pair<int, int64_t>> runsByFile;
    std::vector<std::vector<Unit>> fileUnits;
    std::vector<Unit> units;
    std::vector<uint32_t> order; // largest units first
    std::vector<std::vector<Hit>> unitHits;
};

namespace {
// Ascending (pattern, end); millions of hits in one file (runs of zeros against a hex string, say) sort about
// twice as fast packed into one integer each.
template<typename It>
void sortEnds(It b, It e)
{
    if (std::is_sorted(b, e))
        return;
    constexpr int kEndBits = 43;
    const bool packable = std::all_of(b, e, [](const auto &h) {
        return h.first < (1u << (63 - kEndBits)) && h.second >= 0 && h.second < (int64_t(1) << kEndBits);
    });
    if (!packable) {
        std::sort(b, e);
        return;
    }
    std::vector<uint64_t> keys;
    keys.reserve(size_t(e - b));
    for (auto it = b; it != e; ++it)
        keys.push_back(uint64_t(it->first) << kEndBits | uint64_t(it->second));
    std::sort(keys.begin(), keys.end());
    auto it = b;
    for (uint64_t k : keys)
        *it++ = { uint32_t(k >> kEndBits), int64_t(k & ((uint64_t(1) << kEndBits) - 1)) };
}

// A file's counts, ascending by pattern, one entry each. (An engine may correct a count with a negative one: see
// CpuEngine's speculative pieces.)
template<typename It>
void sumCounts(It rb, It re, std::vector<std::pair<int, int64_t>> &c)
{
    std::sort(rb, re, [](const auto &x, const auto &y) { return x.first < y.first; });
    for (auto it = rb; it != re; ++it) {
        if (!c.empty() && c.back().first == it->first)
            c.back().second += it->second;
        else
            c.push_back(*it);
    }
    std::erase_if(c, [](const std::pair<int, int64_t> &e) { return e.second == 0; });
}
} // namespace

void HitResolver::resolve(const FileBatch &batch, const BatchResult &result, int threads,
                          std::vector<std::vector<Hit>> &perFile,
                          std::vector<std::vector<std::pair<int, int64_t>>> &counts, Trace &trace, bool traced)
{
    const auto t0 = traced ? Clock::now() : Clock::time_point {};
    const size_t numFiles = batch.files.size();
    perFile.assign(numFiles, {});
    counts.assign(numFiles, {});
    // Below this, starting threads costs more than it saves.
    if (threads <= 1 || result.hits.size() + result.counts.size() + numFiles < 4096)
        threads = 1;
    Work work { batch, result, threads, {}, {}, {}, {}, {}, {}, {}, {} };
    groupByFile(work);
    const auto tGrouped = traced ? Clock::now() : Clock::time_point {};
    work.fileUnits.assign(numFiles, {});
    parallelFor(numFiles, threads, [&](size_t f, int) {
        if (work.firstRun[f] < work.firstRun[f + 1])
            sumCounts(work.runsByFile.begin() + ptrdiff_t(work.firstRun[f]),
                      work.runsByFile.begin() + ptrdiff_t(work.firstRun[f + 1]), counts[f]);
        sortEnds(work.byFile.begin() + ptrdiff_t(work.first[f]), work.byFile.begin() + ptrdiff_t(work.first[f + 1]));
        cutUnits(work, f);
    });
    flattenUnits(work);
    const auto tCut = traced ? Clock::now() : Clock::time_point {};
    orderUnits(work);
    const auto tOrdered = traced ? Clock::now() : Clock::time_point {};
    const double unitsMs = findStarts(work, trace, traced);
    const auto tStarts = traced ? Clock::now() : Clock::time_point {};
    gatherFiles(work, perFile);
    if (traced) {
        trace.group = msBetween(t0, tGrouped);
        trace.cut = msBetween(tGrouped, tCut);
        trace.order = msBetween(tCut, tOrdered);
        trace.starts = msBetween(tOrdered, tStarts);
        trace.unitsSum = unitsMs;
        trace.gather = msSince(tStarts);
    }
}

// (pattern, end), and the counted strings' runs, grouped by file with counting sorts: engines report hits in no
// particular order. What is left per file is ordered on the worker threads.
void HitResolver::groupByFile(Work &work) const
{
    const std::vector<RawHit> &raw = work.result.hits;
    const size_t numFiles = work.batch.files.size();
    // Counted strings' ends are only counted, per file (see setListHits). Engines report a pattern's ends in runs
    // (one walk at a time), so runs are counted first.
    auto isCounted = [&](const RawHit &h) { return !m_counted.empty() && m_counted[h.pattern]; };
    struct Run
    {
        uint32_t file;
        uint32_t pattern;
        int64_t count;
    };
    std::vector<Run> runs;
    std::vector<size_t> &first = work.first;
    std::vector<size_t> &firstRun = work.firstRun;
    first.assign(numFiles + 1, 0);
    for (const RawHit &h : raw) {
        if (!isCounted(h)) {
            ++first[h.batchFile + 1];
            continue;
        }
        if (runs.empty() || runs.back().file != h.batchFile || runs.back().pattern != h.pattern)
            runs.push_back({ h.batchFile, h.pattern, 0 });
        ++runs.back().count;
    }
    for (const RawCount &c : work.result.counts)
        runs.push_back({ c.batchFile, c.pattern, c.count });
    firstRun.assign(numFiles + 1, 0);
    for (const Run &r : runs)
        ++firstRun[r.file + 1];
    for (size_t f = 0; f < numFiles; ++f) {
        first[f + 1] += first[f];
        firstRun[f + 1] += firstRun[f];
    }
    work.byFile.resize(first[numFiles]);
    work.runsByFile.resize(runs.size());
    std::vector<size_t> fill(first.begin(), first.end() - 1);
    for (const RawHit &h : raw)
        if (!isCounted(h))
            work.byFile[fill[h.batchFile]++] = { h.pattern, h.end };
    std::copy(firstRun.begin(), firstRun.end() - 1, fill.begin());
    for (const Run &r : runs)
        work.runsByFile[fill[r.file]++] = { int(r.pattern), r.count };
}

// A long run of a plain pattern is cut into pieces so that one busy file does not leave the other threads idle;
// StartFinder gives the same answers for any subset of the ends. A YARA string's run is cut only between ends far
// enough apart that no start lies in the spans of both sides.
void HitResolver::cutUnits(Work &work, size_t f) const
{
    constexpr size_t kPiece = 1 << 14;
    const std::vector<std::pair<uint32_t, int64_t>> &byFile = work.byFile;
    std::vector<Unit> &units = work.fileUnits[f];
    for (size_t i = work.first[f]; i < work.first[f + 1];) {
        const uint32_t pattern = byFile[i].first;
        size_t j = i;
        while (j < work.first[f + 1] && byFile[j].first == pattern)
            ++j;
        // YARA keeps a string's first kMaxStringMatches matches per file. Where the ends are the matches, the ends
        // after the first kMaxStringMatches + 1 of this chunk can never be among them (the one extra tells the
        // evaluator that the cap was reached): runs of zeros against a hex string of zeros bring millions.
        const size_t last = endsAreMatches(pattern) ? std::min(j, i + size_t(RuleEvaluator::kMaxStringMatches) + 1) : j;
        if (m_rules.patterns[pattern].yara) {
            cutYaraUnits(work, f, i, j, last);
        } else {
            for (size_t k = i; k < last; k += kPiece)
                units.push_back({ uint32_t(f), k, std::min(last, k + kPiece), 0, false });
        }
        i = j;
    }
}

// A YARA string's ends are cut only where two lie further apart than its longest match (YaraMatchFinder): no start
// is then tried by two units. A URL regex brought tens of thousands of ends in one file, one unit on one thread
// while the others waited.
void HitResolver::cutYaraUnits(Work &work, size_t f, size_t i, size_t j, size_t last) const
{
    constexpr size_t kYaraPiece = 1 << 10; // a YARA string's end costs a few microseconds
    const uint32_t pattern = work.byFile[i].first;
    const YaraString &yara = *m_rules.patterns[pattern].yara;
    const bool limited = YaraMatchFinder::lengthLimited(yara);
    std::vector<Unit> &units = work.fileUnits[f];
    const auto run = uint32_t(units.size());
    // A string that may have more matches in the file than YARA records is resolved in full: YARA's warning that
    // its matches were capped (FileResult::capped) needs them counted. The file's other chunks hold at most one end
    // per byte; YARA reports a match per start, and a string of variable length can have several starts per end
    // (/a{1,8}b/ eight), but no more than the file's bytes.
    const BatchFile &chunk = work.batch.files[f];
    const int64_t ends = int64_t(j - i) + chunk.fileSize - (chunk.ownEnd - chunk.ownBegin);
    int64_t matches = ends;
    if (yara.fixedLength <= 0) {
        const int maxLength = m_catalog.patterns[pattern].maxLength;
        const int64_t longest = maxLength >= 0 ? maxLength
            : limited                          ? PriorityMatcher::kScanLimit
                                               : chunk.fileSize;
        const int64_t startsPerEnd = std::max<int64_t>(1, longest - yara.minLength + 1);
        matches = ends > chunk.fileSize / startsPerEnd ? chunk.fileSize : ends * startsPerEnd;
    }
    const bool cut = matches <= RuleEvaluator::kMaxStringMatches;
    for (size_t k = i; k < last;) {
        size_t e = limited ? std::min(last, k + kYaraPiece) : last;
        while (e < last && work.byFile[e].second - work.byFile[e - 1].second <= PriorityMatcher::kScanLimit)
            ++e;
        units.push_back({ uint32_t(f), k, e, run, cut });
        k = e;
    }
}

void HitResolver::flattenUnits(Work &work) const
{
    for (const auto &fileUnits : work.fileUnits) {
        const auto base = uint32_t(work.units.size());
        for (Unit unit : fileUnits) {
            unit.run += base;
            work.units.push_back(unit);
        }
    }
}

void HitResolver::orderUnits(Work &work) const
{
    // Large units first, so that none is left alone at the end.
    work.order.resize(work.units.size());
    for (size_t i = 0; i < work.order.size(); ++i)
        work.order[i] = uint32_t(i);
    const std::vector<Unit> &units = work.units;
    if (work.threads > 1)
        std::stable_sort(work.order.begin(), work.order.end(), [&](uint32_t a, uint32_t b) {
            return units[a].end - units[a].begin > units[b].end - units[b].begin;
        });
}

double HitResolver::findStarts(Work &work, Trace &trace, bool traced) const
{
    const std::vector<Unit> &units = work.units;
    // Matches found so far per run of units (a string in a file), for strings whose condition needs only a few:
    // once a run has them, its other units are skipped. Each unit finds at most that many too, so a file's total
    // reaches the number needed exactly when all its matches would.
    std::unique_ptr<std::atomic<int64_t>[]> found(
        m_matchesNeeded.empty() ? nullptr : new std::atomic<int64_t>[units.size()]());
    work.unitHits.assign(units.size(), {});
    std::mutex longestMutex;
    double unitsMs = 0;
    trace = {};
    trace.longest.units = units.size();
    parallelFor(units.size(), work.threads, [&](size_t k, int) {
        const Unit &unit = units[work.order[k]];
        const bool timed = traced || m_profiler;
        const auto u0 = timed ? Clock::now() : Clock::time_point {};
        findUnitStarts(work, unit, found.get(), work.unitHits[work.order[k]]);
        if (!timed)
            return;
        const auto u1 = Clock::now();
        if (m_profiler)
            m_profiler->addResolve(int(work.byFile[unit.begin].first),
                                   std::chrono::duration_cast<std::chrono::nanoseconds>(u1 - u0).count());
        if (!traced)
            return;
        const double ms = msBetween(u0, u1);
        std::lock_guard lock(longestMutex);
        unitsMs += ms;
        if (ms > trace.longest.ms)
            trace.longest = { ms, int(work.byFile[unit.begin].first), unit.end - unit.begin, units.size(),
                              work.batch.files[unit.file].fileSize };
    });
    return unitsMs;
}

void HitResolver::findUnitStarts(const Work &work, const Unit &unit, std::atomic<int64_t> *found,
                                 std::vector<Hit> &out) const
{
    const FileBatch &batch = work.batch;
    const BatchFile &bf = batch.files[unit.file];
    std::unique_ptr<ByteSource> file;
    const StartFinder::ByteAt byteAt(bf.at(batch.haystack.get(), bf.holdBegin), bf.holdBegin, bf.holdEnd,
                                     [&](int64_t offset) {
                                         if (!file)
                                             file = std::make_unique<ByteSource>(bf.path);
                                         return (*file)(offset);
                                     });
    const uint32_t pattern = work.byFile[unit.begin].first;
    std::vector<int64_t> ends, starts;
    ends.reserve(unit.end - unit.begin);
    for (size_t i = unit.begin; i < unit.end; ++i)
        ends.push_back(work.byFile[i].second);
    const bool verify = pattern < m_catalog.patterns.size() && m_catalog.patterns[pattern].verify;
    if (const auto &yara = m_rules.patterns[pattern].yara) {
        const int64_t needed = found && unit.cut ? m_matchesNeeded[pattern] : Condition::kAllMatches;
        if (needed == Condition::kAllMatches) {
            m_yara.find(*yara, int(pattern), ends, bf.fileSize, byteAt, verify, out);
            return;
        }
        std::atomic<int64_t> &sofar = found[unit.run];
        if (sofar.load(std::memory_order_relaxed) >= needed)
            return;
        m_yara.find(*yara, int(pattern), ends, bf.fileSize, byteAt, verify, out, size_t(needed));
        sofar += int64_t(out.size());
        return;
    }
    m_starts.leftmostStarts(int(pattern), ends, bf.fileSize, byteAt, starts, verify);
    out.reserve(ends.size());
    for (size_t i = 0; i < ends.size(); ++i) {
        // -1: no match ends there, as a verified pattern's relaxed DFA may report.
        if (starts[i] >= 0)
            out.push_back({ int(pattern), starts[i], ends[i] - starts[i] + 1 });
    }
}

void HitResolver::gatherFiles(Work &work, std::vector<std::vector<Hit>> &perFile) const
{
    const size_t numFiles = work.batch.files.size();
    std::vector<size_t> firstUnit(numFiles + 1, 0);
    for (size_t f = 0; f < numFiles; ++f)
        firstUnit[f + 1] = firstUnit[f] + work.fileUnits[f].size();
    parallelFor(numFiles, work.threads, [&](size_t f, int) {
        const size_t b = firstUnit[f], e = firstUnit[f + 1];
        if (e - b == 1) {
            perFile[f] = std::move(work.unitHits[b]);
            return;
        }
        size_t total = 0;
        for (size_t k = b; k < e; ++k)
            total += work.unitHits[k].size();
        perFile[f].reserve(total);
        for (size_t k = b; k < e; ++k)
            perFile[f].insert(perFile[f].end(), work.unitHits[k].begin(), work.unitHits[k].end());
    });
}

} // namespace Hitscope
