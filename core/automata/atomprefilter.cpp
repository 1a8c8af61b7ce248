// SPDX-License-Identifier: GPL-3.0-or-later
#include "atomprefilter.h"

#include "automata/atomextractor.h"
#include "automata/dfabuilder.h"
#include "automata/patterncatalog.h"

namespace Hitscope {

namespace {

/// Below this many bits an atom occurs too often for windows to be cheaper than a pass.
constexpr int kMinQuality = 18;
/// Windows reach this far around an atom at most; longer patterns keep their pass.
constexpr int kMaxRadius = 4096;
constexpr int kMaxAtomStates = 60000;

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

std::shared_ptr<const AtomPrefilter> AtomPrefilter::build(const RuleSet &rules, const PatternCatalog &catalog)
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
        int radius = 0;
        bool ok = true;
        for (int p : group.patterns) {
            const PatternInfo &info = catalog.patterns[size_t(p)];
            const Regex &regex = rules.patterns[size_t(p)].regex;
            AtomExtractor::Result r;
            if (!suits(regex, info) || (r = AtomExtractor::extract(regex)).atoms.empty()) {
                ok = false;
                break;
            }
            radius = std::max(radius, info.maxLength);
            atoms.insert(atoms.end(), r.atoms.begin(), r.atoms.end());
        }
        if (!ok || radius <= 0)
            continue;
        pre->groupRadius[g] = radius;
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
    if (covered < 2)
        return nullptr;
    std::vector<DfaBuilder::Input> inputs;
    for (size_t i = 0; i < atomRegexes.size(); ++i)
        inputs.push_back({ &atomRegexes[i], int(i) });
    DfaBuilder::Result built = DfaBuilder::build(inputs, kMaxAtomStates);
    if (built.exceededBudget)
        return nullptr;
    pre->dfa = std::move(built.dfa);
    return pre;
}

} // namespace Hitscope
