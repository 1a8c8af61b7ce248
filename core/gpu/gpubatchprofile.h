// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

namespace Hitscope {

struct BatchTelemetry;

/// Where the host's time of one GPU batch went (HITSCOPE_GPU_PROFILE), logged once per batch.
struct GpuBatchProfile
{
    double tableMs = 0;        ///< the segment table and carried states
    double setupMs = 0;        ///< buffers (re)created, tables uploaded, pipeline made
    double stagingMs = 0;      ///< the copy into the staging buffer (host)
    double uploadMs = 0;       ///< the GPU's copies out of it
    double frameWaitMs = 0;    ///< submit and wait
    double transferWaitMs = 0; ///< waited for the copy ahead
    double framesMs = 0;
    double readMs = 0;
    double decodeMs = 0;
    int frames = 0;
    bool resident = false; ///< the haystack was copied ahead

    void log(int batchIndex, uint64_t segments, uint64_t items, const BatchTelemetry &t, int64_t hits,
             int64_t countedEnds, int64_t counts) const;
};

} // namespace Hitscope
