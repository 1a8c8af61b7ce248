// SPDX-License-Identifier: GPL-3.0-or-later
#include "cpuengineprofile.h"

#include "automata/atomprefilter.h"
#include "automata/patterncatalog.h"
#include "engine/batchresult.h"

namespace Hitscope {

CpuEngineProfile::CpuEngineProfile(int threads, const PatternCatalog &catalog, const AtomPrefilter *prefilter)
    : m_catalog(catalog)
    , m_prefilter(prefilter)
    , m_candidates(size_t(threads), std::vector<int64_t>(catalog.patterns.size(), 0))
    , m_groupMs(size_t(threads), std::vector<double>(catalog.groups.size(), 0))
    , m_screenMs(size_t(threads), 0)
{
}

void CpuEngineProfile::split(double ms, const std::vector<int> &among, const std::vector<int64_t> &candidates,
                             std::vector<double> &out) const
{
    if (ms <= 0 || among.empty())
        return;
    int64_t total = 0;
    for (int p : among)
        total += candidates[size_t(p)];
    for (int p : among)
        out[size_t(p)] += total > 0 ? ms * double(candidates[size_t(p)]) / double(total) : ms / double(among.size());
}

void CpuEngineProfile::into(BatchResult &result) const
{
    const size_t numPatterns = m_catalog.patterns.size();
    std::vector<int64_t> candidates(numPatterns, 0);
    for (const std::vector<int64_t> &perThread : m_candidates)
        for (size_t p = 0; p < numPatterns; ++p)
            candidates[p] += perThread[p];
    result.patternMs.assign(numPatterns, 0);
    result.patternMsWhole = true;
    std::vector<int> screenedFor;
    for (size_t g = 0; g < m_catalog.groups.size(); ++g) {
        double ms = 0;
        for (const std::vector<double> &perThread : m_groupMs)
            ms += perThread[g];
        const std::vector<int> &patterns = m_catalog.groups[g].patterns;
        if (!m_prefilter || !m_prefilter->covers(int(g))) {
            split(ms, patterns, candidates, result.patternMs);
            continue;
        }
        screenedFor.insert(screenedFor.end(), patterns.begin(), patterns.end());
        // Windows walk for the patterns found by atoms; those the screen finds whole cost them nothing.
        std::vector<int> windowed;
        for (int p : patterns)
            if (!m_prefilter->isScreened(p))
                windowed.push_back(p);
        split(ms, windowed.empty() ? patterns : windowed, candidates, result.patternMs);
    }
    double screenMs = 0;
    for (double ms : m_screenMs)
        screenMs += ms;
    split(screenMs, screenedFor, candidates, result.patternMs);
}

} // namespace Hitscope
