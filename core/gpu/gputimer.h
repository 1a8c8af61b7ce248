// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include "gpu/rhi.h"

namespace Hitscope {

class RhiDevice;

/**
 * GPU time between two points of a frame, from Vulkan timestamps (Qt 6.4 has no lastCompletedGpuTime()).
 * Each point is a vkCmdWriteTimestamp into a query pool of our own, recorded between the command buffer's
 * beginExternal() and endExternal().
 *
 *     RhiFrame frame(rhi);                 // or beginOffscreenFrame()
 *     timer.begin(frame.commandBuffer());  // outside a pass...
 *     ... compute pass(es) ...
 *     timer.end(frame.commandBuffer());
 *     frame.end();                         // on Vulkan this waits for the GPU
 *     double ms = timer.elapsedMs();
 *
 * begin() and end() may also be called inside a compute pass begun with QRhiCommandBuffer::ExternalContent,
 * to time the dispatches alone; endExternal() forgets the bound pipeline and resources, so set them after
 * begin() and dispatch before end(). On OpenGL, or a queue without timestamps, the timer is unsupported:
 * begin() and end() do nothing and elapsedMs() returns 0. Owned by the device's thread, like every QRhi resource.
 */
class GpuTimer
{
public:
    explicit GpuTimer(RhiDevice &device);
    ~GpuTimer();

    GpuTimer(const GpuTimer &) = delete;
    GpuTimer &operator=(const GpuTimer &) = delete;

    bool isSupported() const { return m_supported; }
    void begin(QRhiCommandBuffer *cb);
    void end(QRhiCommandBuffer *cb);
    /// Milliseconds between begin() and end() of the last frame, once that frame has completed; 0 when
    /// unsupported, when begin()/end() were not both recorded, or when the results are not ready.
    double elapsedMs();

private:
    void writeTimestamp(QRhiCommandBuffer *cb, uint32_t query, bool reset);

    RhiDevice &m_device;
    bool m_supported = false;
    bool m_begun = false;
    bool m_ended = false;
    double m_periodNs = 0;
    uint64_t m_validMask = 0;
#if QT_CONFIG(vulkan)
    VkQueryPool m_pool = VK_NULL_HANDLE;
#endif
};

} // namespace Hitscope
