// SPDX-License-Identifier: GPL-3.0-or-later
#include "ringdecoder.h"

#include <algorithm>
#include <vector>

#include "automata/patterncatalog.h"
#include "engine/batchresult.h"
#include "engine/filebatch.h"
#include "gpu/batchplan.h"
#include "gpu/scanlayout.h"
#include "util/parallel.h"

namespace Hitscope {

using namespace ScanLayout;

namespace {

// One slice of the ring, decoded on one thread.
class SliceDecoder
{
public:
    SliceDecoder(const BatchPlan &plan, const FileBatch &batch, const PatternCatalog &catalog,
                 const uint32_t *generations, bool filter, std::vector<RawHit> &hits, std::vector<RawCount> &counts)
        : m_plan(plan)
        , m_batch(batch)
        , m_catalog(catalog)
        , m_generations(generations)
        , m_filter(filter)
        , m_hits(hits)
        , m_counts(counts)
    {
    }

    void run(const uint32_t *entries, size_t begin, size_t end)
    {
        m_hits.reserve(end - begin);
        for (size_t i = begin; i < end; ++i)
            take(entries + i * kHitWords);
        endRun();
    }

    int64_t rerun = 0;
    int64_t countedEnds = 0;

private:
    // Whether the entry comes from its item's last scan.
    bool current(const uint32_t *e, uint32_t group, uint32_t seg)
    {
        const uint32_t u = m_plan.unboundedIndex[group];
        if (e[3] != 0) {
            ++rerun;
            return m_generations[u * m_plan.numSegments + seg] == e[3];
        }
        return !(m_filter && u != kNone && m_generations[u * m_plan.numSegments + seg] != 0);
    }

    void take(const uint32_t *e)
    {
        const uint32_t group = uint32_t(e[0] / m_plan.numSegments);
        const uint32_t seg = uint32_t(e[0] % m_plan.numSegments);
        if (!current(e, group, seg))
            return;
        const Segment &s = m_batch.segments[seg];
        if ((e[1] & kCountFlag) == 0) {
            m_hits.push_back({ s.batchFile, e[1], s.ownBegin + int64_t(e[2]) });
            return;
        }
        // Neighbouring lanes scan neighbouring segments of a file and write their counts side by side: equal
        // keys in a row (batch file, group, and the state or the pattern word) are summed before they are expanded.
        if (m_runCount == 0 || s.batchFile != m_runFile || group != m_runGroup || e[1] != m_runKey) {
            endRun();
            m_runFile = s.batchFile;
            m_runGroup = group;
            m_runKey = e[1];
        }
        m_runCount += e[2];
    }

    void endRun()
    {
        if (m_runCount == 0)
            return;
        if ((m_runKey & kStateFlag) != 0) {
            // Visits to a state whose ends at the byte are all counted: each visit is one end of each.
            const Dfa &d = m_catalog.groups[m_runGroup].dfa;
            const uint32_t st = m_runKey & ~(kCountFlag | kStateFlag);
            for (uint32_t a = d.acceptIndex[st]; a < d.acceptIndex[st + 1]; ++a) {
                if (Dfa::entryKind(d.acceptEntries[a]) != Dfa::Now)
                    continue;
                m_counts.push_back({ m_runFile, Dfa::entryPattern(d.acceptEntries[a]), m_runCount });
                countedEnds += m_runCount;
            }
        } else {
            m_counts.push_back({ m_runFile, m_runKey & ~kCountFlag, m_runCount });
            countedEnds += m_runCount;
        }
        m_runCount = 0;
    }

    const BatchPlan &m_plan;
    const FileBatch &m_batch;
    const PatternCatalog &m_catalog;
    const uint32_t *m_generations;
    const bool m_filter;
    std::vector<RawHit> &m_hits;
    std::vector<RawCount> &m_counts;
    uint32_t m_runFile = 0, m_runGroup = 0, m_runKey = 0;
    int64_t m_runCount = 0;
};

template<typename T>
void concatenate(const std::vector<std::vector<T>> &parts, std::vector<T> &out)
{
    size_t total = 0;
    for (const auto &p : parts)
        total += p.size();
    out.clear();
    out.reserve(total);
    for (const auto &p : parts)
        out.insert(out.end(), p.begin(), p.end());
}

} // namespace

RingDecoder::Totals RingDecoder::decode(const uint32_t *entries, uint32_t count, const uint32_t *generations,
                                        bool filter, const BatchPlan &plan, const FileBatch &batch,
                                        const PatternCatalog &catalog, int threads, BatchResult &result)
{
    const size_t slices = size_t(std::max(1, threads));
    std::vector<std::vector<RawHit>> hitParts(slices);
    std::vector<std::vector<RawCount>> countParts(slices);
    std::vector<int64_t> rerun(slices, 0), ends(slices, 0);
    parallelSlices(count, 1 << 16, int(slices), [&](size_t begin, size_t end, size_t k) {
        SliceDecoder slice(plan, batch, catalog, generations, filter, hitParts[k], countParts[k]);
        slice.run(entries, begin, end);
        rerun[k] = slice.rerun;
        ends[k] = slice.countedEnds;
    });
    concatenate(hitParts, result.hits);
    concatenate(countParts, result.counts);
    Totals totals;
    totals.hits = int64_t(result.hits.size());
    totals.counts = int64_t(result.counts.size());
    for (size_t k = 0; k < slices; ++k) {
        totals.rerunEntries += rerun[k];
        totals.countedEnds += ends[k];
    }
    return totals;
}

} // namespace Hitscope
