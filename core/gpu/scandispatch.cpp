// SPDX-License-Identifier: GPL-3.0-or-later
#include "scandispatch.h"

#include <algorithm>

#include "gpu/gputimer.h"
#include "gpu/rhidevice.h"
#include "gpu/vulkanstaging.h"

namespace Hitscope {

int ScanDispatch::workerGroups(int requested, int workgroupSize, uint32_t maxItems, int maxGroups, bool loopLimited)
{
    maxGroups = std::max(1, maxGroups);
    if (requested > 0)
        return std::min(requested, maxGroups);
    // About 2^18 lanes keep every multiprocessor of an H200 full.
    const int64_t wanted = std::min<int64_t>(maxItems, loopLimited ? int64_t(maxItems) : int64_t(1) << 18);
    return int(std::clamp<int64_t>((wanted + workgroupSize - 1) / workgroupSize, 1, maxGroups));
}

void ScanDispatch::record(RhiDevice &device, QRhiCommandBuffer *cb, const Recording &r, GpuTimer &timer)
{
    // A phase continues from the states the one before wrote, and a fix-up pass that scans nothing again proves
    // the chains consistent only if no earlier pass still runs beside it: an explicit barrier before every phase
    // (also after the previous frame's), whatever QRhi records itself.
    const std::vector<uint32_t> &phases = r.dispatchPhases;
    size_t d = 0;
    while (d < phases.size()) {
        const uint32_t phase = phases[d];
        VulkanStaging::recordComputeBarrier(device, cb);
        cb->beginComputePass();
        cb->setComputePipeline(r.pipeline);
        const QRhiCommandBuffer::DynamicOffset offset(0, quint32(phase * uint32_t(r.paramsStride)));
        cb->setShaderResources(r.bindings, 1, &offset);
        for (; d < phases.size() && phases[d] == phase; ++d)
            cb->dispatch(r.groups, 1, 1);
        if (d == phases.size()) {
            QRhiResourceUpdateBatch *rb = device.rhi()->nextResourceUpdateBatch();
            rb->readBackBuffer(r.queue, 0, r.queueWords * 4, r.queueBack);
            cb->endComputePass(rb);
            // Outside any pass: beginExternal() inside one needs secondary command buffers.
            timer.end(cb);
        } else {
            cb->endComputePass();
        }
    }
}

double ScanDispatch::occupancy(const std::vector<uint32_t> &phaseItems, size_t dispatches, int lanes)
{
    int64_t busy = 0;
    for (uint32_t items : phaseItems)
        busy += std::min<int64_t>(items, lanes);
    const int64_t launched = int64_t(dispatches) * lanes;
    return launched > 0 ? std::min(1.0, double(busy) / double(launched)) : 0;
}

} // namespace Hitscope
