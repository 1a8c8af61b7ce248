// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <QString>

#include "engine/batchtelemetry.h"

namespace Hitscope {

/// A hit as engines report it: the pattern and the file offset of the match's last byte.
struct RawHit
{
    uint32_t batchFile = 0;
    uint32_t pattern = 0;
    int64_t end = 0;

    bool operator==(const RawHit &) const = default;
};

/// Ends of a counted pattern (Engine::setCountedPatterns) in one batch file, reported as their number.
struct RawCount
{
    uint32_t batchFile = 0;
    uint32_t pattern = 0;
    int64_t count = 0;
    bool operator==(const RawCount &) const = default;
};

/**
 * What an engine returns for one batch. carryOut holds, for each batch file that continues in the next
 * batch, the DFA state of every unbounded group (index batchFile * unboundedGroups + g), so that group's
 * scan resumes where this chunk stopped.
 */
struct BatchResult
{
    std::vector<RawHit> hits;
    /// Counted patterns' ends (see Engine::setCountedPatterns); a batch file and pattern may appear more than
    /// once, and only the sum counts (an entry may be negative: a correction of an earlier one); never also in
    /// `hits`.
    std::vector<RawCount> counts;
    std::vector<uint32_t> carryOut;
    BatchTelemetry telemetry;
    /// Things the user should know that did not stop the batch (a GPU batch re-run on the CPU, say).
    std::vector<QString> notices;
    /// The GPU engine on a tableless catalog: the prefilter's screens are still to run on the host over the ends
    /// in these 64-byte blocks of the haystack (4 bits a block, their sequences' length classes: KeyFilter), and
    /// their hits to be added (FallbackEngine does both). Empty: nothing is left.
    std::vector<uint32_t> screenBlocks;
    bool screensPending = false;
    /// With Engine::setProfiling(true): the engine's milliseconds per pattern (summed over its threads), each
    /// group's and screen's time split among their patterns (CpuEngine says how); empty otherwise.
    std::vector<double> patternMs;
    /// Whether patternMs holds all of the engine's work on the batch, or only the host's part of it (the GPU
    /// engine: its kernels cannot be split per pattern).
    bool patternMsWhole = false;
};

} // namespace Hitscope
