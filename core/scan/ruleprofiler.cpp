// SPDX-License-Identifier: GPL-3.0-or-later
#include "ruleprofiler.h"

#include "automata/patterncatalog.h"
#include "automata/rulecost.h"
#include "engine/batchresult.h"
#include "rules/ruleset.h"

namespace Hitscope {

RuleProfiler::RuleProfiler(const RuleSet &rules, const PatternCatalog &catalog)
    : m_rules(rules)
    , m_catalog(catalog)
    , m_engineMs(rules.rules.size(), 0)
    , m_hits(rules.patterns.size(), 0)
    , m_resolveNs(new std::atomic<int64_t>[rules.rules.size()]())
{
    m_tally.conditionNs.assign(rules.rules.size(), 0);
    m_tally.files.assign(rules.rules.size(), 0);
    m_tally.matches.assign(rules.rules.size(), 0);
}

RuleProfiler::~RuleProfiler() = default;

void RuleProfiler::addBatch(const BatchResult &result)
{
    m_anyBatch = true;
    // An engine that measured nothing (the GPU's kernels alone) or only its host's part leaves the rules without
    // their engine time.
    if (result.patternMs.size() != m_rules.patterns.size() || !result.patternMsWhole)
        m_engineSplit = false;
    for (size_t p = 0; p < result.patternMs.size() && p < m_rules.patterns.size(); ++p)
        m_engineMs[size_t(m_rules.patterns[p].ruleIndex)] += result.patternMs[p];
    for (const RawHit &h : result.hits)
        ++m_hits[h.pattern];
    for (const RawCount &c : result.counts)
        m_hits[c.pattern] += c.count;
}

void RuleProfiler::addResolve(int pattern, int64_t ns)
{
    m_resolveNs[size_t(m_rules.patterns[size_t(pattern)].ruleIndex)].fetch_add(ns, std::memory_order_relaxed);
}

void RuleProfiler::addTally(const RuleTally &tally)
{
    std::lock_guard lock(m_tallyMutex);
    for (size_t r = 0; r < tally.conditionNs.size() && r < m_tally.conditionNs.size(); ++r) {
        m_tally.conditionNs[r] += tally.conditionNs[r];
        m_tally.files[r] += tally.files[r];
        m_tally.matches[r] += tally.matches[r];
    }
    m_tally.timedNs += tally.timedNs;
}

RuleProfile RuleProfiler::profile(int64_t bytes) const
{
    RuleProfile out;
    out.bytes = bytes;
    out.engineSplit = m_engineSplit || !m_anyBatch;
    std::vector<QStringList> costs(m_rules.rules.size());
    for (const RuleCostWarning &w : RuleCost::analyze(m_rules, &m_catalog))
        costs[size_t(w.rule)] << w.text;
    std::lock_guard lock(m_tallyMutex);
    for (size_t r = 0; r < m_rules.rules.size(); ++r) {
        const Rule &rule = m_rules.rules[r];
        RuleProfileRow row;
        row.rule = int(r);
        row.name = rule.name;
        row.file = rule.sourceFile;
        row.line = rule.line;
        row.hostMs = m_engineMs[r];
        if (out.engineSplit)
            row.engineMs = m_engineMs[r];
        row.conditionMs = double(m_tally.conditionNs[r]) / 1e6;
        row.resolveMs = double(m_resolveNs[r].load(std::memory_order_relaxed)) / 1e6;
        if (m_everyMatch)
            row.hits = m_tally.matches[r];
        else
            for (int p : rule.patterns)
                row.hits += m_hits[size_t(p)];
        row.files = m_tally.files[r];
        row.reasons = RuleProfile::measuredReasons(row, bytes) + costs[r];
        out.rows.push_back(std::move(row));
    }
    out.sort();
    return out;
}

} // namespace Hitscope
