// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <QString>

#include "automata/dfa.h"
#include "rules/ruleset.h"

namespace Hitscope {

struct AtomPrefilter;
class LazyDfa;

/// A set of patterns merged into one DFA.
struct DfaGroup
{
    Dfa dfa;
    /// A group of a tableless catalog (CompileOptions::tableless) has no tables: its patterns are
    /// found by the atom prefilter, whole or by their atoms, and `lazy` (when some are found by atoms) is
    /// walked in the windows around those, built as it is walked.
    bool tableless = false;
    std::shared_ptr<const LazyDfa> lazy;
    std::vector<int> patterns; ///< global pattern ids in this group
    /// Longest match of any pattern here, -1 if some pattern is unbounded. Bounded groups are scanned in
    /// overlapping segments; unbounded groups over whole files (state carried from chunk to chunk).
    int maxMatchLength = 0;
    bool unbounded() const { return maxMatchLength < 0; }
};

/// Per-pattern facts the host needs to turn an end offset into a hit.
struct PatternInfo
{
    int group = -1;     ///< -1 when the pattern was rejected
    int minLength = 0;
    int maxLength = 0;  ///< -1 unbounded
    /// The group's DFA holds a relaxed form of the pattern (counted repeats X{n,m} made X{n,}) because the
    /// exact one explodes: its ends are a superset of the true ones, and each must be confirmed with
    /// StartFinder (leftmostStarts with verify; -1 drops it). minLength and maxLength stay exact.
    bool verify = false;
    bool fixedLength() const { return minLength == maxLength; }
};

struct CompileOptions
{
    /// A merged group stops growing at this many DFA states; one pattern alone above it is rejected.
    int maxStatesPerGroup = 50000;
    /// A single pattern may use up to this many states before it is relaxed (PatternInfo::verify), and its
    /// relaxed form too before it is rejected as exploding.
    int maxStatesPerPattern = 50000;
    /// Threads building DFAs; 0: one per core.
    int threads = 0;
    /// Where compile() keeps, per set of patterns, the grouping it ended with, and finds it again: the next
    /// compile of the same patterns builds those groups directly and skips the merges that would fail (most of
    /// a large rule set's compile time). Every group DFA is still built; a hint that no longer fits is ignored.
    /// The groups' DFAs are kept there too (DfaCache): with a hint, the builds left are
    /// the patterns' own DFAs (each alone, to find those that explode).
    /// Empty: no hints.
    QString groupingHintDir;
    /// Patterns the atom prefilter can find (whole, or by their atoms and a walk of the windows around them) are
    /// put in tableless groups of kTablelessGroupSize, whose windows are walked by a LazyDfa. Compiling them then
    /// costs their atoms and NFAs, linear in the rule text, with no DFA built at all and none rejected for its
    /// size. Only the patterns without good atoms get DFA groups. The CPU engine screens such a catalog itself;
    /// the GPU engine marks where the screens' keys occur and has the host screen there (KeyFilter).
    bool tableless = false;
};

/**
 * Every accepted pattern of a RuleSet compiled into DFA groups. Patterns that cannot be compiled
 * (empty matches, state explosion) are listed in `rejections` and their rule's other patterns still run.
 */
struct PatternCatalog
{
    std::vector<DfaGroup> groups;
    std::vector<PatternInfo> patterns; ///< indexed by global pattern id
    std::vector<Rejection> rejections;
    /// Atoms of the groups the CPU engine may scan in windows instead of whole passes (null: none).
    std::shared_ptr<const AtomPrefilter> prefilter;
    double compileMs = 0;
    bool groupedFromHint = false; ///< the groups came from CompileOptions::groupingHintDir
    int groupsFromCache = 0;      ///< of those, the groups whose DFA was read from there (DfaCache), not built
    int solosFromCache = 0;       ///< single-pattern builds (explosion checks, relaxations) read from there

    size_t tableBytes() const;
    /// Groups without tables (CompileOptions::tableless).
    size_t tablelessGroups() const;
    /// Patterns per tableless group: windows open for a group where any of its patterns' atoms occurs, and
    /// the CPU engine keeps a bit per group and 64 bytes of a batch.
    static constexpr size_t kTablelessGroupSize = 64;
    /// Changes whenever the tables change (the GPU engine's test for tables it has uploaded). Computed on each
    /// call: it hashes every table, which a CPU scan need not pay for at start-up.
    uint64_t fingerprint() const;
    /// Longest bounded match over all bounded groups: segments overlap by this minus one.
    int maxBoundedMatchLength() const;
    /// Bytes a chunk of a file after its first must hold before those it owns: the segments' overlap and the
    /// byte before it, or the CPU engine's farthest window reach and the byte before it (AtomPrefilter).
    int chunkContext() const;
    /// Groups walked over whole files, whose states are carried from chunk to chunk.
    size_t unboundedGroups() const;

    static PatternCatalog compile(const RuleSet &rules, const CompileOptions &options = {});
    /// The user's cache folder for grouping hints (CompileOptions::groupingHintDir), shared by the CLI and
    /// the GUI.
    static QString defaultGroupingHintDir();
};

} // namespace Hitscope
