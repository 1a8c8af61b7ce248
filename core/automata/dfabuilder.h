// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include "automata/dfa.h"
#include "pattern/regex.h"

namespace Hitscope {

/**
 * Builds one minimized, byte-class compressed Dfa for many patterns: Thompson NFA, subset construction
 * under a state budget, Hopcroft-style minimization. Accept entries carry the patterns' global ids.
 */
class DfaBuilder
{
public:
    struct Input
    {
        const Regex *regex = nullptr;
        int patternId = -1;
    };

    struct Result
    {
        Dfa dfa;
        bool exceededBudget = false; ///< true: dfa is empty, the patterns need more than maxStates
        int statesBeforeMinimization = 0;
    };

    /// `anchored`: matches must start where the scan starts (used for reversed start-finding DFAs);
    /// otherwise a match may start anywhere.
    static Result build(const std::vector<Input> &patterns, int maxStates, bool anchored = false);
};

/// DfaBuilder::build without the minimization step: the reference the minimizer is tested against.
DfaBuilder::Result buildUnminimizedDfa(const std::vector<DfaBuilder::Input> &patterns, int maxStates,
                                       bool anchored = false);

} // namespace Hitscope
