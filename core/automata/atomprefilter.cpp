// SPDX-License-Identifier: GPL-3.0-or-later
#include "atomprefilter.h"

#include <algorithm>
#include <cmath>

#include "automata/atomextractor.h"
#include "automata/patterncatalog.h"
#include "pattern/prioritymatcher.h"
#include "rules/ruleset.h"

namespace Hitscope {

namespace {

/// From this many bits on an atom is rare enough for windows of any reach; below it, only where its windows
/// (estimated from the bits) would cover at most 1/kMaxWalkedShare of the data, and never below kLeastQuality.
constexpr int kMinQuality = 18;
constexpr int kLeastQuality = 12;
constexpr double kMaxWalkedShare = 64;
/// Windows reach this far around an atom at most; longer patterns keep their pass. YARA's scan limit: no
/// match YARA reports is longer.
constexpr int kMaxRadius = PriorityMatcher::kScanLimit;
/// An xor form's neighbouring bytes must differ this often (zero deltas also occur in every run of equal bytes);
/// the engine screens with the first four deltas, so they must differ there too.
constexpr int kMinXorChanges = 3;
constexpr int kMinXorScreenChanges = 2;
constexpr size_t kMinXorDeltas = 4;
/// Each xor form costs the engine a screening pass of its own: beyond this many, the rest share the delta screen.
constexpr size_t kMaxXorForms = 8;
} // namespace

std::vector<AtomPrefilter::XorAtom> AtomPrefilter::xorAtomsOf(const Pattern &pattern, int group)
{
    std::vector<AtomPrefilter::XorAtom> out;
    if (!pattern.yara || pattern.yara->xorForms.empty())
        return out;
    for (const QByteArray &form : pattern.yara->xorForms) {
        XorAtom a;
        a.group = group;
        a.first = uint8_t(form[0]);
        a.keyLow = pattern.yara->xorKeys.first;
        a.keyHigh = pattern.yara->xorKeys.second;
        int changes = 0;
        for (qsizetype i = 0; i + 1 < form.size(); ++i) {
            a.deltas.push_back(uint8_t(form[i] ^ form[i + 1]));
            changes += a.deltas.back() != 0 ? 1 : 0;
        }
        if (a.deltas.size() < kMinXorDeltas || changes < kMinXorChanges)
            return {};
        const auto screen = std::count_if(a.deltas.begin(), a.deltas.begin() + kMinXorDeltas,
                                          [](uint8_t d) { return d != 0; });
        if (screen < kMinXorScreenChanges)
            return {};
        out.push_back(std::move(a));
    }
    return out;
}

std::vector<SequenceScreen::Sequence> AtomPrefilter::sequencesOf(const Regex &regex, const PatternInfo &info)
{
    if (info.verify || info.maxLength < 0 || info.maxLength > kMaxLongSequence)
        return {};
    if (info.maxLength <= SequenceScreen::kMaxLength)
        return SequenceScreen::expand(regex, kMaxSequences);
    // Longer ones (PEiD's hex strings of a hundred positions, most of them ??) only the hash screen takes, or
    // where their fixed bytes all stand alone the sparse screen; a run of one byte is the screen's.
    std::vector<SequenceScreen::Sequence> sequences = SequenceScreen::expand(regex, kMaxSequences, kMaxLongSequence);
    for (const SequenceScreen::Sequence &s : sequences)
        if (SequenceScreen::isRun(s) || (!HashScreen::suits(s) && !SparseScreen::suits(s)))
            return {};
    return sequences;
}

int AtomPrefilter::windowReach(const Pattern &pattern, const PatternInfo &info)
{
    if (info.maxLength >= 0)
        return info.maxLength <= kMaxRadius ? info.maxLength : -1;
    // An unbounded YARA regex: every match YARA reports lies within kScanLimit bytes of its atom.
    const YaraString *yara = pattern.yara.get();
    const bool limited = yara && yara->matcher && yara->matcher->lengthLimited()
        && (!yara->wideMatcher || yara->wideMatcher->lengthLimited());
    return limited ? kMaxRadius : -1;
}

bool AtomPrefilter::suitsWindows(const Pattern &pattern, const PatternInfo &info)
{
    const int reach = windowReach(pattern, info);
    if (reach < 0)
        return false;
    // An xor string's forms are found by their deltas, whatever its atoms per key would be worth.
    if (!xorAtomsOf(pattern, 0).empty())
        return true;
    const AtomExtractor::Result r = AtomExtractor::extract(pattern.regex);
    if (r.atoms.empty() || r.quality < kLeastQuality)
        return false;
    // A match lies around its atom, within its reach either side; a marked block is 64 bytes.
    const double walked = std::ldexp(double(r.atoms.size()), -r.quality) * double(64 + 2 * reach + 1);
    return r.quality >= kMinQuality || walked <= 1 / kMaxWalkedShare;
}

bool AtomPrefilter::suits(const Pattern &pattern, const PatternInfo &info)
{
    return !sequencesOf(pattern.regex, info).empty() || suitsWindows(pattern, info);
}

void AtomPrefilter::addEntry(const SequenceScreen::Sequence &sequence, uint32_t tag)
{
    // Entries without a key of four positions stay in the screen unless it has grown large already: in the hash
    // screen each shorter key length costs every byte a look-up more.
    const int minKeyLength = screen.size() < 4 * kMaxScreenEntries ? 4 : 2;
    keyFilter.add(sequence);
    if (sequence.size() > size_t(SequenceScreen::kMaxLength)) {
        // Only the hash screen holds a sequence this long, or where it has no key the sparse screen
        // (sequencesOf() made sure one of them takes it).
        if (!hashScreen.add(sequence, tag, minKeyLength) && !hashScreen.add(sequence, tag, 2))
            sparseScreen.add(sequence, tag);
        return;
    }
    if (screen.size() < screenBudget || SequenceScreen::isRun(sequence) || !hashScreen.add(sequence, tag, minKeyLength))
        screen.add(sequence, tag);
}

std::shared_ptr<const AtomPrefilter> AtomPrefilter::build(const RuleSet &rules, const PatternCatalog &catalog)
{
    auto pre = std::make_shared<AtomPrefilter>();
    pre->coveredGroup.assign(catalog.groups.size(), 0);
    pre->groupLeft.assign(catalog.groups.size(), 0);
    pre->groupRight.assign(catalog.groups.size(), 0);
    pre->groupReach.assign(catalog.groups.size(), 0);
    pre->screened.assign(rules.patterns.size(), 0);
    pre->atomBase = uint32_t(rules.patterns.size());
    size_t tableless = 0;
    for (const DfaGroup &g : catalog.groups)
        tableless += g.tableless ? g.patterns.size() : 0;
    if (tableless > 4 * kMaxScreenEntries)
        pre->screenBudget = kScreenEntriesBesideHash;
    // Segments overlap by the longest bounded match: a screened match must fit in that overlap, wherever its
    // group is.
    const int overlapHolds = catalog.maxBoundedMatchLength();
    int covered = 0;
    for (size_t g = 0; g < catalog.groups.size(); ++g) {
        const DfaGroup &group = catalog.groups[g];
        std::vector<std::pair<int, std::vector<SequenceScreen::Sequence>>> sequences;
        std::vector<AtomExtractor::Atom> atoms;
        std::vector<int> atomPatterns;
        std::vector<XorAtom> xorAtoms, deltaXorAtoms;
        int left = 0, right = 0, reach = 0;
        bool ok = !group.patterns.empty();
        for (int p : group.patterns) {
            const PatternInfo &info = catalog.patterns[size_t(p)];
            const Regex &regex = rules.patterns[size_t(p)].regex;
            if (info.maxLength >= 0 && info.maxLength <= overlapHolds) {
                std::vector<SequenceScreen::Sequence> seqs = sequencesOf(regex, info);
                if (!seqs.empty()) {
                    sequences.emplace_back(p, std::move(seqs));
                    continue;
                }
            }
            if (!suitsWindows(rules.patterns[size_t(p)], info)) {
                ok = false;
                break;
            }
            const int patternReach = windowReach(rules.patterns[size_t(p)], info);
            std::vector<XorAtom> x = xorAtomsOf(rules.patterns[size_t(p)], int(g));
            for (XorAtom &a : x)
                a.pattern = p;
            reach = std::max(reach, patternReach);
            if (info.maxLength >= 0)
                right = std::max(right, patternReach);
            if (!x.empty()) {
                std::vector<XorAtom> &to =
                    pre->xorAtoms.size() + xorAtoms.size() + x.size() <= kMaxXorForms ? xorAtoms : deltaXorAtoms;
                to.insert(to.end(), x.begin(), x.end());
                left = std::max(left, patternReach);
                continue;
            }
            AtomExtractor::Result r = AtomExtractor::extract(regex);
            if (r.atoms.empty()) {
                ok = false;
                break;
            }
            left = std::max(left, r.maxBefore < 0 ? patternReach : std::min(r.maxBefore, patternReach));
            atoms.insert(atoms.end(), r.atoms.begin(), r.atoms.end());
            atomPatterns.insert(atomPatterns.end(), r.atoms.size(), p);
        }
        size_t entries = atoms.size();
        for (const auto &seqs : sequences)
            entries += seqs.second.size();
        // Beyond the screen's entries a group with tables keeps its pass (a list of ten thousand literals: one DFA
        // pass is cheaper than many of the screen's); a tableless group has no pass to fall back on, and its
        // entries go to the hash screen.
        if (!ok || (!group.tableless && pre->screen.size() + entries > kMaxScreenEntries))
            continue;
        ++covered;
        pre->coveredGroup[g] = 1;
        pre->groupLeft[g] = left;
        pre->groupRight[g] = right;
        pre->groupReach[g] = reach;
        pre->maxRadius = std::max(pre->maxRadius, reach);
        pre->xorAtoms.insert(pre->xorAtoms.end(), xorAtoms.begin(), xorAtoms.end());
        for (XorAtom &a : deltaXorAtoms) {
            SequenceScreen::Sequence deltas;
            for (uint8_t d : a.deltas) {
                deltas.emplace_back();
                deltas.back().set(d);
            }
            // Four positions where it has them (one look-up a byte); xorAtomsOf keeps none with fewer than four.
            const uint32_t tag = uint32_t(pre->deltaXorAtoms.size());
            if (!pre->xorDeltaScreen.add(deltas, tag, 4) && !pre->xorDeltaScreen.add(deltas, tag, 2))
                pre->xorAtoms.push_back(a); // a pass of its own, as the first ones: nothing is lost
            else
                pre->deltaXorAtoms.push_back(std::move(a));
        }
        for (const auto &[p, seqs] : sequences) {
            // Two sequences of different lengths, or overlapping ones, may end at the same offset, where a DFA
            // reports one end.
            pre->screened[size_t(p)] = seqs.size() > 1 ? 2 : 1;
            for (const SequenceScreen::Sequence &seq : seqs)
                pre->addEntry(seq, uint32_t(p));
        }
        for (size_t a = 0; a < atoms.size(); ++a) {
            pre->addEntry(atoms[a], pre->atomBase + uint32_t(pre->atomGroup.size()));
            pre->atomGroup.push_back(int(g));
            pre->atomLength.push_back(int(atoms[a].size()));
            pre->atomPattern.push_back(atomPatterns[a]);
        }
    }
    if (covered == 0)
        return nullptr;
    pre->screen.build();
    pre->hashScreen.build();
    pre->xorDeltaScreen.build();
    pre->keyFilter.build();
    return pre;
}

} // namespace Hitscope
