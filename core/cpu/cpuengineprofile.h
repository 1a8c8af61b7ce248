// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include "util/elapsed.h"

namespace Hitscope {

struct AtomPrefilter;
struct BatchResult;
struct PatternCatalog;

/**
 * Where the CPU engine's time went in one batch, per pattern (Engine::setProfiling). Each thread adds the time of
 * its work to what it was for: a group's pass or its windows to the group, the prefilter's screens to the screen;
 * and counts the screen's candidates per pattern: a screened pattern's ends, an atom's and an xor form's
 * occurrences. Then each group's time is split among its patterns in proportion to their candidates: windows open
 * where an atom occurs, so the pattern whose atom occurs most opens most of them. A group without candidates (a
 * pass over every byte, which costs per byte whatever its patterns) is split evenly. The screens' time is split the
 * same way among every pattern they look for: their loops cost per byte too, but what one string adds to them is
 * the candidates it brings to verify and mark, and a short atom brings millions.
 *
 * Threads write only their own slots; the split runs once they are done.
 */
class CpuEngineProfile
{
public:
    CpuEngineProfile(int threads, const PatternCatalog &catalog, const AtomPrefilter *prefilter);

    /// Thread `thread`'s candidate counts, one per pattern.
    int64_t *candidates(int thread) { return m_candidates[size_t(thread)].data(); }
    void addGroup(int thread, int group, Clock::time_point since)
    {
        m_groupMs[size_t(thread)][size_t(group)] += msSince(since);
    }
    void addScreen(int thread, Clock::time_point since) { m_screenMs[size_t(thread)] += msSince(since); }
    /// The split, into result.patternMs.
    void into(BatchResult &result) const;

private:
    /// Adds `ms` to the patterns of `among`, in proportion to their candidates, or evenly where none has any.
    void split(double ms, const std::vector<int> &among, const std::vector<int64_t> &candidates,
               std::vector<double> &out) const;

    const PatternCatalog &m_catalog;
    const AtomPrefilter *m_prefilter;
    std::vector<std::vector<int64_t>> m_candidates; ///< per thread, per pattern
    std::vector<std::vector<double>> m_groupMs;     ///< per thread, per group
    std::vector<double> m_screenMs;                 ///< per thread
};

} // namespace Hitscope
