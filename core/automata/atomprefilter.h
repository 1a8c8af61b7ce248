// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>
#include <vector>

#include "automata/dfa.h"
#include "automata/hashscreen.h"
#include "automata/keyfilter.h"
#include "automata/sequencescreen.h"
#include "automata/sparsescreen.h"
#include "rules/ruleset.h"

namespace Hitscope {

struct PatternCatalog;
struct PatternInfo;

/**
 * Lets the CPU engine skip whole passes. Patterns made of fixed byte positions (literals, nocase text, hex
 * strings without jumps, small alternations of those) are found whole by one SequenceScreen, with no DFA;
 * the other patterns of a group are found by their atoms (AtomExtractor) in the same screen, and the group's
 * DFA then runs only in windows around them. A match contains one of its pattern's atoms, so it lies inside
 * the window of that occurrence: the hits are exactly those of a full pass. A group whose patterns all fit
 * one way or the other is covered: it gets no pass of its own. The GPU engine does not need any of this (its
 * passes are cheap) and ignores it.
 */
struct AtomPrefilter
{
    /// Sequence patterns' sequences, tagged with their pattern id, and the atoms of the covered groups' other
    /// patterns, tagged atomBase + atom index.
    SequenceScreen screen;
    /// The entries beyond the first kMaxScreenEntries (where the screen's passes would multiply), but for runs
    /// of one byte and entries without a key of two positions, which the screen keeps.
    HashScreen hashScreen;
    /// Sequences longer than the screen's (up to kMaxLongSequence) that have no hash screen key: their fixed
    /// bytes all stand alone between wildcards.
    SparseScreen sparseScreen;
    /// Keys of every entry of the three screens above, for the GPU engine, which marks where they occur and has
    /// the host run the screens only there.
    KeyFilter keyFilter;
    uint32_t atomBase = 0;
    std::vector<int> atomGroup;      ///< per atom: its catalog group
    std::vector<int> atomLength;     ///< per atom: its length in bytes
    std::vector<int> atomPattern;    ///< per atom: the pattern it is an atom of (profiles count its occurrences)
    std::vector<uint8_t> coveredGroup; ///< per catalog group: no pass of its own
    /// Per catalog group, around a block where its atoms occur: a match starts at most groupLeft before it and
    /// ends at most groupRight after it (its bounded patterns), or groupReach (its longest reach, YARA's scan
    /// limit where an unbounded YARA regex is windowed: walks go on that far only while a match is in
    /// progress). 0 reach: no windows.
    std::vector<int> groupLeft, groupRight, groupReach;
    /// The longest reach: a chunk of a file must hold this many bytes before the bytes it owns, so that the
    /// windows of a match that ends in them find it whole (PatternCatalog::chunkContext()).
    int maxRadius = 0;
    /// Per pattern: 1 when the screen finds it (group DFAs then must not report it), 2 when moreover two of its
    /// sequences may end at one offset (the screen's matches of it are made unique).
    std::vector<uint8_t> screened;

    /// A YARA xor string's form (YaraString::xorForms), found by the XOR of neighbouring bytes, which no key
    /// changes: one look-up for all keys (up to 256), where atoms would need one atom per key (and all 256 byte
    /// classes in the atom DFA).
    struct XorAtom
    {
        int group = 0;
        int pattern = -1; ///< the string it is a form of
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
    /// The first kMaxXorForms forms, each screened by XorScreen in a pass of its own (fastest for a few).
    std::vector<XorAtom> xorAtoms;
    /// The forms beyond those: their deltas in one HashScreen over the XORs of neighbouring input bytes (a
    /// delta's match ends at the form's start + deltas - 1), tagged with their index in deltaXorAtoms. A
    /// collection's hundreds of xor strings then cost one look-up per byte, not 256 atoms each.
    HashScreen xorDeltaScreen;
    std::vector<XorAtom> deltaXorAtoms;
    /// The xor atoms of a YARA xor string, or none when a form is too short or too uniform to be distinctive.
    static std::vector<XorAtom> xorAtomsOf(const Pattern &pattern, int group);

    bool covers(int group) const { return group < int(coveredGroup.size()) && coveredGroup[size_t(group)]; }
    bool isScreened(int pattern) const { return pattern < int(screened.size()) && screened[size_t(pattern)]; }

    /// A pattern's sequences when the screens can find it whole (at most kMaxSequences, none longer than
    /// kMaxLongSequence, and those longer than SequenceScreen::kMaxLength with a hash screen key or two single
    /// bytes for the sparse screen; no assertion, exact), else none.
    static std::vector<SequenceScreen::Sequence> sequencesOf(const Regex &regex, const PatternInfo &info);
    static constexpr size_t kMaxSequences = 16;
    /// Sequences longer than the screen's kMaxLength, up to this, go to the hash screen: a hex string of a
    /// hundred positions, most of them ??, is then verified where its key occurs, as YARA verifies at its atom,
    /// instead of walked by a DFA whose states multiply with every ?? (PEiD's packer signatures).
    static constexpr int kMaxLongSequence = 1024;

    /// How far around an atom a window must reach to hold every match of the pattern that contains it: its
    /// longest match, or for an unbounded YARA regex YARA's scan limit (PriorityMatcher::kScanLimit: YARA
    /// reports no longer match, and a DFA end of a longer one is tried for none). -1: windows cannot.
    static int windowReach(const Pattern &pattern, const PatternInfo &info);
    /// Whether windows around atoms can find a pattern: a reach, and atoms rare enough for windows of that
    /// reach, or for a YARA xor string distinctive forms (xorAtomsOf). Assertions and relaxed DFAs are fine: windows start in the context of the byte before them and
    /// end a byte after their reach, and the ends of a relaxed DFA are verified anyway.
    static bool suitsWindows(const Pattern &pattern, const PatternInfo &info);
    /// Whether a pattern costs its group no pass: a sequence pattern, or one that suits windows. The catalog
    /// keeps such patterns in groups of their own, so that one weak pattern does not cost a whole group its
    /// prefilter.
    static bool suits(const Pattern &pattern, const PatternInfo &info);

    /// Adds a sequence or atom to the screen, or beyond its kMaxScreenEntries to the hash screen.
    void addEntry(const SequenceScreen::Sequence &sequence, uint32_t tag);
    /// Null when no group would be covered.
    /// Entries of the screen from which on the hash screen takes them (every 16 cost the screen a pass).
    static constexpr size_t kMaxScreenEntries = 160;
    /// The screen's entries where the hash screen will hold thousands anyway: it then costs its passes for
    /// little (its sequences would cost the hash screen no more).
    static constexpr size_t kScreenEntriesBesideHash = 32;
    size_t screenBudget = kMaxScreenEntries;
    static std::shared_ptr<const AtomPrefilter> build(const RuleSet &rules, const PatternCatalog &catalog);
};

} // namespace Hitscope
