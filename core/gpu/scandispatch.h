// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/rhi.h"

namespace Hitscope {

class GpuTimer;
class RhiDevice;

/// How a frame's scan phases are launched and recorded.
class ScanDispatch
{
public:
    /// Workgroups per dispatch: `requested` when positive, else enough lanes for every item, bounded by the
    /// dispatch limit and, on large GPUs, by what keeps every multiprocessor full.
    static int workerGroups(int requested, int workgroupSize, uint32_t maxItems, int maxGroups, bool loopLimited);

    struct Recording
    {
        const std::vector<uint32_t> &dispatchPhases; ///< the phase of each dispatch, in order
        QRhiComputePipeline *pipeline;
        QRhiShaderResourceBindings *bindings;
        int paramsStride;       ///< bytes between the phases' Params blocks
        int groups;
        QRhiBuffer *queue;
        int queueWords;
        QRhiBufferReadbackResult *queueBack; ///< the queue, read back after the last phase
    };
    /// One compute pass per phase, each after a barrier; the kernel timed by `timer` from its begin() (recorded
    /// by the caller) to the end of the last phase.
    static void record(RhiDevice &device, QRhiCommandBuffer *cb, const Recording &r, GpuTimer &timer);

    /// Lanes that found an item, over lanes launched.
    static double occupancy(const std::vector<uint32_t> &phaseItems, size_t dispatches, int lanes);
};

} // namespace Hitscope
