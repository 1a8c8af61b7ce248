// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include "pattern/regex.h"

namespace Hitscope {

/**
 * Finds a pattern's atoms: short byte sequences (a set of bytes per position) such that every match of the
 * pattern contains one of them. Scanning for atoms first and running the pattern's automaton only around
 * them is what makes YARA fast on rules with distinctive strings; the CPU engine does the same (AtomPrefilter).
 */
class AtomExtractor
{
public:
    using Atom = std::vector<ByteSet>;

    struct Result
    {
        std::vector<Atom> atoms; ///< every match contains at least one; empty when none was found
        int quality = -1;        ///< bits of the weakest atom (8 per exact byte, less for sets and common bytes)
        /// Every match holds an occurrence of an atom that starts at most this many bytes after the match
        /// does; -1: no bound (an unbounded part before the atoms).
        int maxBefore = 0;
    };

    /// At most this many positions per atom. YARA's atoms are 4 bytes; longer ones cost the screens nothing
    /// (they look for four positions of an atom and check the rest), and spare the windows of a long literal
    /// the occurrences of its first four letters ("clas" for class.module.classLoader...).
    static constexpr int kMaxAtomLength = 16;

    static Result extract(const Regex &regex, int maxAtoms = 1024);
};

} // namespace Hitscope
