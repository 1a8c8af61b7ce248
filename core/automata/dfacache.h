// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <QString>

#include "automata/dfabuilder.h"

namespace Hitscope {

/**
 * Built DFAs kept on disk between runs: building a large merged DFA is most of a rule set's start-up, and the
 * same rule set is compiled again on every scan. A DFA is found by a key over exactly what it was built from
 * and over the running program's file (size, time, inode), so that a program built anew, whose builder may
 * differ, never reads the tables of another build. A file that does not read back whole is ignored.
 */
class DfaCache
{
public:
    /// `dir` empty, or the program's file not known: nothing is kept, build() only builds.
    explicit DfaCache(const QString &dir);

    /// DfaBuilder::build(inputs, maxStates), or its result of an earlier run (then `fromCache` is set); an
    /// exceeded budget is kept too. A build faster than `keepAfterMs` is not kept: for DFAs of single patterns,
    /// most of which build in microseconds, where a file each would push merged groups out of the folder.
    DfaBuilder::Result build(const std::vector<DfaBuilder::Input> &inputs, int maxStates,
                             bool *fromCache = nullptr, double keepAfterMs = 0) const;

private:
    bool read(const QString &path, uint64_t key, DfaBuilder::Result &out) const;
    void write(const QString &path, uint64_t key, const DfaBuilder::Result &result) const;

    QString m_dir;
    uint64_t m_program = 0;
};

} // namespace Hitscope
