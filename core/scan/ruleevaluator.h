// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "engine/hit.h"
#include "rules/ruleset.h"
#include "scan/ruleprofiler.h"
#include "util/elapsed.h"

namespace Hitscope {

class ModuleRuntime;

/**
 * Decides, once all of a file's hits are known, which rules match it: list rules when any of their patterns
 * hit, YARA rules when their condition holds (with YARA's private and global rules). Then keeps only the
 * hits people see: those of list rules, and those of reported YARA rules' strings that are not private.
 * One instance per scanning thread: it keeps its buffers between files.
 */
class RuleEvaluator
{
public:
    /// YARA's YR_MAX_STRING_MATCHES: matches of one string in one file past this many are not recorded.
    static constexpr int kMaxStringMatches = 1000000;

    /// `rejectedPatterns`: patterns the engines do not run (the catalog refused them); a YARA rule with one
    /// of them never matches, as its condition cannot be decided.
    explicit RuleEvaluator(const RuleSet &rules, const std::vector<int> &rejectedPatterns = {});
    ~RuleEvaluator();

    /// `file.hits` sorted (Hit::operator<); fills `file.rules` and filters `file.hits`. Reads the file
    /// (through `file.path`) only where a condition reads its bytes past `known`, the file's first bytes as
    /// scanned (file.head by default). Strings in `file.counts` count as that many matches (capped as YARA
    /// caps them).
    void evaluate(FileResult &file) { evaluate(file, file.head); }

    /// Whether a condition of `rules` reads a YARA module (or `entrypoint`): libyara then parses the files a
    /// condition reads it of.
    static bool readsModules(const RuleSet &rules);
    void evaluate(FileResult &file, std::span<const uint8_t> known);

    /// Whether each condition's time and each rule's matched files are tallied (Scanner::setProfiling); off, it
    /// costs a test per condition.
    void setProfiling(bool on);
    /// What was tallied since profiling was set on; null when it is off.
    const RuleTally *tally() const { return m_tally.get(); }

private:
    /// Evaluates the YARA rules from `first` on. The first module value a condition reads has libyara load the
    /// file's modules, and the rest is evaluated while they live.
    void evaluateFrom(size_t first, ConditionContext &context, size_t &current, FileResult &file,
                      std::span<const uint8_t> known);
    /// Marks a rule whose buffers the current file fills, so that they are cleared afterwards.
    void touch(int rule);
    /// Tallies the file's matches per rule: YARA strings' as recorded (capped as YARA caps them), list rules' hits.
    void tallyMatches(const std::vector<Hit> &hits);
    /// Tallies the time since `since` but `timedInside` (tallied already) as `rule`'s condition's.
    void addConditionNs(size_t rule, Clock::time_point since, int64_t timedInside = 0);

    const RuleSet &m_rules;
    std::vector<int> m_localIndex;  ///< per pattern: its index among its rule's strings
    std::vector<int> m_namespace;   ///< per rule: index of its YARA namespace, -1 for list rules
    int m_namespaces = 0;
    bool m_anyYara = false;
    // Buffers kept between files.
    std::vector<std::vector<std::vector<StringMatch>>> m_matches; ///< per rule, per string
    std::vector<std::vector<int64_t>> m_counts; ///< per rule, per string: counted matches, or -1 (listed)
    std::vector<int> m_touched;     ///< rules whose m_matches or m_counts are set
    std::vector<char> m_isTouched;  ///< per rule: in m_touched
    std::vector<char> m_result;     ///< per rule: the condition held
    std::vector<char> m_hit;        ///< per rule: a pattern hit (list rules)
    std::vector<char> m_failedGlobal; ///< per namespace
    std::vector<char> m_disabled;   ///< per rule
    std::vector<char> m_needsMatch; ///< per rule: false where none of its strings matched (Condition::needsAMatch)
    std::unique_ptr<ModuleRuntime> m_modules; ///< when a condition reads a module (or `entrypoint`)
    std::unique_ptr<RuleTally> m_tally;       ///< when profiled
};

} // namespace Hitscope
