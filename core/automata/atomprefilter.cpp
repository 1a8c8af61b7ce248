// SPDX-License-Identifier: GPL-3.0-or-later
#include "atomprefilter.h"

#include <algorithm>

#include "automata/atomextractor.h"
#include "automata/dfacache.h"
#include "automata/dfabuilder.h"
#include "automata/patterncatalog.h"
#include "rules/ruleset.h"

namespace Hitscope {

namespace {

/// Below this many bits an atom occurs too often for windows to be cheaper than a pass.
constexpr int kMinQuality = 18;
/// Windows reach this far around an atom at most; longer patterns keep their pass.
constexpr int kMaxRadius = 4096;
constexpr int kMaxAtomStates = 60000;
/// A host group with the atoms, before minimization; past it the atoms get a pass of their own.
constexpr int kMaxHostStates = 60000;
/// An xor form's neighbouring bytes must differ this often (zero deltas also occur in every run of equal bytes);
/// the engine screens with the first four deltas, so they must differ there too.
constexpr int kMinXorChanges = 3;
constexpr int kMinXorScreenChanges = 2;
constexpr size_t kMinXorDeltas = 4;
/// Each xor form costs the engine a screening pass of its own: beyond this many, the rest get atoms per key.
constexpr size_t kMaxXorForms = 8;

/// The xor atoms of a YARA xor string, or none when a form is too short or too uniform to be distinctive.
std::vector<AtomPrefilter::XorAtom> xorAtomsOf(const Pattern &pattern, int group)
{
    std::vector<AtomPrefilter::XorAtom> out;
    if (!pattern.yara || pattern.yara->xorForms.empty())
        return out;
    for (const QByteArray &form : pattern.yara->xorForms) {
        AtomPrefilter::XorAtom a;
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

} // namespace

bool AtomPrefilter::suits(const Regex &regex, const PatternInfo &info)
{
    // Assertions look outside a window; relaxed DFAs report more than their pattern's atoms cover.
    if (info.verify || info.maxLength < 0 || info.maxLength > kMaxRadius || regex.usesAssertion(Assertion::FileStart)
        || regex.usesAssertion(Assertion::FileEnd) || regex.usesAssertion(Assertion::WordBoundary)
        || regex.usesAssertion(Assertion::NotWordBoundary))
        return false;
    const AtomExtractor::Result r = AtomExtractor::extract(regex);
    return !r.atoms.empty() && r.quality >= kMinQuality;
}

std::shared_ptr<const AtomPrefilter> AtomPrefilter::build(const RuleSet &rules, const PatternCatalog &catalog,
                                                          const std::vector<const Regex *> &groupRegex,
                                                          const QString &cacheDir)
{
    auto pre = std::make_shared<AtomPrefilter>();
    pre->groupRadius.assign(catalog.groups.size(), 0);
    std::vector<Regex> atomRegexes;
    int covered = 0;
    for (size_t g = 0; g < catalog.groups.size(); ++g) {
        const DfaGroup &group = catalog.groups[g];
        if (group.unbounded())
            continue;
        std::vector<AtomExtractor::Atom> atoms;
        std::vector<XorAtom> xorAtoms;
        int radius = 0;
        bool ok = true;
        for (int p : group.patterns) {
            const PatternInfo &info = catalog.patterns[size_t(p)];
            const Regex &regex = rules.patterns[size_t(p)].regex;
            AtomExtractor::Result r;
            if (!suits(regex, info)) {
                ok = false;
                break;
            }
            radius = std::max(radius, info.maxLength);
            std::vector<XorAtom> x = xorAtomsOf(rules.patterns[size_t(p)], int(g));
            if (!x.empty() && pre->xorAtoms.size() + xorAtoms.size() + x.size() <= kMaxXorForms) {
                xorAtoms.insert(xorAtoms.end(), x.begin(), x.end());
                continue;
            }
            if ((r = AtomExtractor::extract(regex)).atoms.empty()) {
                ok = false;
                break;
            }
            atoms.insert(atoms.end(), r.atoms.begin(), r.atoms.end());
        }
        if (!ok || radius <= 0)
            continue;
        pre->groupRadius[g] = radius;
        pre->xorAtoms.insert(pre->xorAtoms.end(), xorAtoms.begin(), xorAtoms.end());
        ++covered;
        for (const auto &atom : atoms) {
            Regex r;
            std::vector<int> seq;
            for (const ByteSet &set : atom)
                seq.push_back(r.addBytes(set));
            r.root = r.addConcat(std::move(seq));
            atomRegexes.push_back(std::move(r));
            pre->atomGroup.push_back(int(g));
            pre->atomLength.push_back(int(atom.size()));
        }
    }
    // The atom pass walks the atom DFA; with no atom at all there is nothing for it to walk.
    if (covered < 2 || atomRegexes.empty())
        return nullptr;
    pre->atomBase = uint32_t(rules.patterns.size());
    std::vector<DfaBuilder::Input> atomInputs;
    for (size_t i = 0; i < atomRegexes.size(); ++i)
        atomInputs.push_back({ &atomRegexes[i], int(pre->atomBase + i) });

    // A group with a pass of its own hosts the atoms when the two fit in one DFA: the smallest such group first,
    // since a larger table walks slower.
    const DfaCache cache(cacheDir);
    std::vector<int> hosts;
    for (size_t g = 0; g < catalog.groups.size(); ++g)
        if (!pre->covers(int(g)) && !catalog.groups[g].patterns.empty())
            hosts.push_back(int(g));
    std::stable_sort(hosts.begin(), hosts.end(), [&](int a, int b) {
        return catalog.groups[size_t(a)].dfa.numStates < catalog.groups[size_t(b)].dfa.numStates;
    });
    for (int g : hosts) {
        std::vector<DfaBuilder::Input> inputs;
        bool ok = true;
        for (int p : catalog.groups[size_t(g)].patterns) {
            ok = ok && size_t(p) < groupRegex.size() && groupRegex[size_t(p)];
            if (ok)
                inputs.push_back({ groupRegex[size_t(p)], p });
        }
        if (!ok)
            continue;
        inputs.insert(inputs.end(), atomInputs.begin(), atomInputs.end());
        DfaBuilder::Result built = cache.build(inputs, kMaxHostStates);
        if (built.exceededBudget)
            continue;
        pre->dfa = std::move(built.dfa);
        pre->hostGroup = g;
        return pre;
    }
    DfaBuilder::Result built = cache.build(atomInputs, kMaxAtomStates);
    if (built.exceededBudget)
        return nullptr;
    pre->dfa = std::move(built.dfa);
    return pre;
}

} // namespace Hitscope
