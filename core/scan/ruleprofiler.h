// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "scan/ruleprofile.h"

namespace Hitscope {

struct BatchResult;
struct PatternCatalog;
struct RuleSet;

/// What one RuleEvaluator measured per rule (RuleEvaluator::setProfiling), added to the profile when it is done.
struct RuleTally
{
    std::vector<int64_t> conditionNs; ///< per rule
    std::vector<int64_t> files;       ///< per rule: files whose condition held
    std::vector<int64_t> matches;     ///< per rule: its strings' matches as its condition saw them
    int64_t timedNs = 0;              ///< the sum of conditionNs
};

/**
 * Gathers a scan's profile per rule (Scanner::setProfiling) from the stages that measure it: each batch's engine
 * time per pattern and the ends it reported, the time of finding each pattern's starts, and the evaluators'
 * tallies of conditions and matched files. Then profile() adds the reasons (RuleCost's, measured ones) and orders
 * the rules, slowest first.
 */
class RuleProfiler
{
public:
    RuleProfiler(const RuleSet &rules, const PatternCatalog &catalog);
    ~RuleProfiler();

    /// Whether every match is resolved (Scanner::setListHits(true)): hits are then the matches as YARA counts
    /// them, one per start (the evaluators' tally); otherwise the ends the engines reported. Before the scan.
    void setEveryMatchResolved(bool every) { m_everyMatch = every; }
    /// A scanned batch's engine times and ends. One thread at a time (the Scanner's report stage).
    void addBatch(const BatchResult &result);
    /// Nanoseconds spent finding the starts of `pattern`'s matches. Any thread.
    void addResolve(int pattern, int64_t ns);
    /// An evaluator's tally. Any thread.
    void addTally(const RuleTally &tally);
    /// Every rule's row, slowest first; `bytes`: the bytes scanned (for the density of matches).
    RuleProfile profile(int64_t bytes) const;

private:
    const RuleSet &m_rules;
    const PatternCatalog &m_catalog;
    std::vector<double> m_engineMs;  ///< per rule
    std::vector<int64_t> m_hits;     ///< per pattern
    bool m_engineSplit = true;
    bool m_anyBatch = false;
    bool m_everyMatch = false;
    std::unique_ptr<std::atomic<int64_t>[]> m_resolveNs; ///< per rule
    mutable std::mutex m_tallyMutex;
    RuleTally m_tally;
};

} // namespace Hitscope
