// SPDX-License-Identifier: GPL-3.0-or-later
#include "scantables.h"

#include <algorithm>

#include "automata/patterncatalog.h"
#include "gpu/scanlayout.h"

namespace Hitscope {

using namespace ScanLayout;

namespace {
// States whose ends before the end of the file are all counted and all at the byte itself: the kernel counts
// visits to them (a run of zeros) and never looks at their entries; the host does (RingDecoder).
void markCountedStates(const Dfa &d, const std::vector<bool> &counted, uint32_t *index)
{
    for (uint32_t st = 0; st < d.numStates; ++st) {
        bool any = false, all = true;
        for (uint32_t k = d.acceptIndex[st]; k < d.acceptIndex[st + 1]; ++k) {
            const uint32_t e = d.acceptEntries[k];
            if (Dfa::entryKind(e) == Dfa::Eof)
                continue;
            any = true;
            all = all && Dfa::entryKind(e) == Dfa::Now && counted[Dfa::entryPattern(e)];
        }
        if (any && all)
            index[st] |= kCountedState;
    }
}
} // namespace

bool ScanTables::build(const PatternCatalog &catalog, const std::vector<bool> &counted, ScanTables &out,
                       QString *error)
{
    std::vector<uint32_t> &trans = out.transitions;
    std::vector<uint32_t> &aux = out.aux;
    trans.clear();
    aux.assign(catalog.groups.size() * kGroupWords, 0);
    uint32_t unbounded = 0;
    for (size_t g = 0; g < catalog.groups.size(); ++g) {
        const Dfa &d = catalog.groups[g].dfa;
        uint32_t *desc = aux.data() + g * kGroupWords;
        desc[0] = uint32_t(trans.size());
        desc[1] = d.numClasses;
        std::copy(d.start.begin(), d.start.end(), desc + 5);
        desc[8] = catalog.groups[g].unbounded() ? unbounded++ : kNone;
        trans.insert(trans.end(), d.transitions.begin(), d.transitions.end());
    }
    for (size_t g = 0; g < catalog.groups.size(); ++g)
        if (catalog.groups[g].unbounded())
            aux.push_back(uint32_t(g));
    for (size_t g = 0; g < catalog.groups.size(); ++g) {
        const Dfa &d = catalog.groups[g].dfa;
        aux[g * kGroupWords + 2] = uint32_t(aux.size());
        aux.insert(aux.end(), d.byteClass.begin(), d.byteClass.end());
        aux[g * kGroupWords + 3] = uint32_t(aux.size());
        const size_t indexAt = aux.size();
        aux.insert(aux.end(), d.acceptIndex.begin(), d.acceptIndex.end());
        aux[g * kGroupWords + 4] = uint32_t(aux.size());
        for (const uint32_t e : d.acceptEntries)
            aux.push_back(!counted.empty() && counted[Dfa::entryPattern(e)] ? e | kCountedBit : e);
        if (!counted.empty() && d.numStates < kStateFlag - 1) // a state's key must not read as an empty slot
            markCountedStates(d, counted, aux.data() + indexAt);
    }
    if (trans.size() > 0xffffffffu / 2 || aux.size() > ~kCountedState || catalog.patterns.size() > kMaxPatterns) {
        *error = QStringLiteral("the rule tables are too large for the GPU engine");
        return false;
    }
    trans.push_back(0); // never empty
    return true;
}

} // namespace Hitscope
