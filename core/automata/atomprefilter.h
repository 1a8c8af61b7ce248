// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>
#include <vector>

#include "automata/dfa.h"
#include "rules/ruleset.h"

namespace Hitscope {

struct PatternCatalog;
struct PatternInfo;

/**
 * Lets the CPU engine skip whole passes: for DFA groups whose patterns all have distinctive atoms
 * (AtomExtractor) and a bounded length, one scan for every atom of every such group replaces a pass per
 * group, and each group's DFA then runs only in windows around its atoms' occurrences. A match contains one
 * of its pattern's atoms, so it lies inside the window of that occurrence: the hits are exactly those of a
 * full pass. The GPU engine does not need it (its passes are cheap) and ignores it.
 *
 * Where a group keeps a whole pass of its own (weak or unbounded patterns), the atoms ride along in it: `dfa`
 * is then that group's patterns and every atom in one DFA (`hostGroup`), and the CPU engine walks it instead of
 * the group's own, one pass less over every byte. Its states are not the group's: a chunk's carried state is
 * only meaningful to an engine that walks the same DFA.
 */
struct AtomPrefilter
{
    /// Every atom, with the host group's patterns when there is one. Accept entries of atoms carry
    /// atomBase + atom index, those of the host's patterns their global pattern ids.
    Dfa dfa;
    int hostGroup = -1;             ///< the catalog group `dfa` stands in for, or -1: `dfa` is atoms alone
    uint32_t atomBase = 0;          ///< accept entries at or above this are atoms
    std::vector<int> atomGroup;     ///< per atom: its catalog group
    std::vector<int> atomLength;    ///< per atom: its length in bytes
    std::vector<int> groupRadius;   ///< per catalog group: its longest match, 0 when the group is scanned whole

    /// A YARA xor string's form (YaraString::xorForms), found by the XOR of neighbouring bytes, which no key
    /// changes: one look-up for all keys (up to 256), where atoms would need one atom per key (and all 256 byte
    /// classes in the atom DFA).
    struct XorAtom
    {
        int group = 0;
        std::vector<uint8_t> deltas; ///< form[i] ^ form[i + 1], one fewer than the form's bytes
        uint8_t first = 0;           ///< form[0]: the key of an occurrence at s is data[s] ^ first
        int keyLow = 0;
        int keyHigh = 0;
        /// Whether a copy of the form under a key of the range starts at p (form length bytes readable).
        bool occursAt(const uint8_t *p) const
        {
            const int key = p[0] ^ first;
            if (key < keyLow || key > keyHigh)
                return false;
            for (size_t i = 0; i < deltas.size(); ++i)
                if (uint8_t(p[i] ^ p[i + 1]) != deltas[i])
                    return false;
            return true;
        }
    };
    std::vector<XorAtom> xorAtoms;

    bool covers(int group) const { return group < int(groupRadius.size()) && groupRadius[size_t(group)] > 0; }

    /// Whether a pattern can be scanned around its atoms: bounded, exact (not relaxed), no assertions, strong
    /// atoms. The catalog keeps such patterns in groups of their own, so that one weak pattern does not cost
    /// a whole group its prefilter.
    static bool suits(const Regex &regex, const PatternInfo &info);

    /// Null when fewer than two groups would be covered (then a pass for the atoms saves nothing) or when no
    /// pattern has an ordinary atom (a set of xor strings alone: they are then scanned by full passes).
    /// `groupRegex`: per pattern id, the regex its group's DFA was built from (the relaxed form of a pattern
    /// that needs verifying); a host group's patterns are built into `dfa` from these. `cacheDir`: where
    /// DfaCache keeps the built DFA for the next compile (empty: nowhere).
    static std::shared_ptr<const AtomPrefilter> build(const RuleSet &rules, const PatternCatalog &catalog,
                                                      const std::vector<const Regex *> &groupRegex,
                                                      const QString &cacheDir = {});
};

} // namespace Hitscope
