// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <QString>

#include "rules/ruleset.h"

namespace Hitscope {

struct PatternCatalog;

/// Why one string of a rule may be slow to scan for (RuleCost).
struct RuleCostWarning
{
    enum class Kind : uint8_t {
        ShortAtom,     ///< the atom every match contains is under four bytes: it occurs everywhere
        CommonAtom,    ///< the atom is longer but of common bytes (zeros, spaces, a run of one byte)
        NoAtom,        ///< no atom at all: the string's automaton walks every byte
        LeadingRepeat, ///< starts with an unbounded or long repeat of almost any byte (`.*`, `[^x]*`)
        LargeJump,     ///< a gap of many arbitrary bytes (`[0-5000]`, `.{0,}`) inside the string
        ManyForms      ///< xor keys, wide and ascii, base64 or alternatives multiply into many forms
    };
    int rule = -1;    ///< RuleSet::rules index
    int pattern = -1; ///< RuleSet::patterns index
    Kind kind = Kind::NoAtom;
    QString text; ///< for people, naming the string: "$a: its atom is 1 byte ("x"): ..."
};

/**
 * Finds, without scanning, the strings that make a rule slow: what the atom extractor picks for each (the atoms
 * the CPU engine's screens look for before anything else runs), a leading `.*`, long jumps and many forms. It costs
 * an atom extraction per string and builds no automaton, so that a rule editor may run it as the user types.
 */
class RuleCost
{
public:
    /// Atoms shorter than this many bytes are short: YARA's atoms are four bytes, and in the elastic collection
    /// on a corpus of /usr a three-letter `"GET" nocase` brought more candidates than any other string.
    static constexpr int kShortAtom = 4;
    /// Atoms whose bits (AtomExtractor::Result::quality: 8 per rare exact byte) stay below this are common.
    static constexpr int kCommonAtomBits = 16;
    /// Repeats of almost any byte up to this many times are not a large jump.
    static constexpr int kLargeJump = 128;
    /// More forms than the CPU engine's screens take whole (AtomPrefilter::kMaxSequences).
    static constexpr int kManyForms = 16;

    /// Every accepted rule's warnings, by rule then pattern. With `catalog` (the rules compiled), patterns it
    /// rejected are left out, and a string is said to walk every byte exactly where its group has no atoms in the
    /// CPU engine's prefilter.
    static std::vector<RuleCostWarning> analyze(const RuleSet &rules, const PatternCatalog *catalog = nullptr);
    /// The warnings of one rule.
    static std::vector<RuleCostWarning> analyzeRule(const RuleSet &rules, int rule,
                                                    const PatternCatalog *catalog = nullptr);
};

} // namespace Hitscope
