// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "automata/patterncatalog.h"
#include "automata/startfinder.h"
#include "engine/batchresult.h"
#include "engine/filebatch.h"
#include "engine/hit.h"
#include "rules/ruleset.h"
#include "scan/yaramatchfinder.h"

namespace Hitscope {

class RuleProfiler;

/**
 * Turns one batch's end offsets into hits: the start of each match (StartFinder; YaraMatchFinder for YARA's one
 * match per start), per file of the batch, on the worker pool, cut short where a condition needs no more
 * matches; and, where nothing prints the matches, which YARA strings are only counted (setListHits). The
 * Scanner's `hs-starts` stage runs it while the next batch is on the engine.
 */
class HitResolver
{
public:
    HitResolver(const RuleSet &rules, const PatternCatalog &catalog);

    /// What resolving one batch's starts measured, for HITSCOPE_PIPELINE_TRACE.
    struct Trace
    {
        // The longest unit of start finding and what it was.
        struct LongestUnit
        {
            double ms = 0;
            int pattern = -1;
            size_t ends = 0;
            size_t units = 0;
            int64_t fileSize = 0;
        } longest;
        // In ms: grouping the hits by file, cutting units, ordering them, finding starts (wall, and summed over
        // units), gathering each file's hits.
        double group = 0, cut = 0, order = 0, starts = 0, unitsSum = 0, gather = 0;
    };

    /// Whether callers see each hit (Scanner::setListHits). Set before the first resolve().
    void setListHits(bool list);
    /// Where the time of finding each pattern's starts goes (Scanner::setProfiling); null: not measured.
    void setProfiler(RuleProfiler *profiler) { m_profiler = profiler; }
    /// Whether every match is resolved (setListHits(true), the default): none is only counted or left out.
    bool listsHits() const { return m_matchesNeeded.empty(); }
    /// Per pattern: its matches are counted, not listed (setListHits(false)); empty when none is.
    const std::vector<bool> &counted() const { return m_counted; }
    /// The hits of each batch file (perFile) and the counted patterns' counts, from the engine's result.
    /// `traced`: fill `trace` (HITSCOPE_PIPELINE_TRACE).
    void resolve(const FileBatch &batch, const BatchResult &result, int threads,
                 std::vector<std::vector<Hit>> &perFile, std::vector<std::vector<std::pair<int, int64_t>>> &counts,
                 Trace &trace, bool traced);

private:
    struct Unit;
    struct Work;

    bool endsAreMatches(size_t pattern) const;
    void groupByFile(Work &work) const;
    void cutUnits(Work &work, size_t file) const;
    void cutYaraUnits(Work &work, size_t file, size_t begin, size_t end, size_t last) const;
    void flattenUnits(Work &work) const;
    void orderUnits(Work &work) const;
    /// Finds the starts of every unit; returns the milliseconds summed over units when `traced`.
    double findStarts(Work &work, Trace &trace, bool traced) const;
    void findUnitStarts(const Work &work, const Unit &unit, std::atomic<int64_t> *found, std::vector<Hit> &out) const;
    void gatherFiles(Work &work, std::vector<std::vector<Hit>> &perFile) const;

    const RuleSet &m_rules;
    const PatternCatalog &m_catalog;
    StartFinder m_starts;
    YaraMatchFinder m_yara;
    std::vector<bool> m_counted;
    /// Per pattern: how many of its matches per file are worth resolving (setListHits(false)); empty: all.
    std::vector<int64_t> m_matchesNeeded;
    RuleProfiler *m_profiler = nullptr;
};

} // namespace Hitscope
