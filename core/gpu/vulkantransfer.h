// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>

#include "gpu/rhi.h"

namespace Hitscope {

class RhiDevice;
class VulkanHostBuffer;

/**
 * Copies a batch's haystack to the GPU ahead of its scan, while the scan before runs: on the device's transfer
 * queue (a discrete GPU's copy engines) where it has one, else on QRhi's queue between frames, where the copy
 * is merely ordered before the next frame. On the H200 a 512 MiB batch's copy took 10.5-12.2 ms and its kernel
 * 7.7-8.3 ms, one after the other. One copy in flight at a time. Vulkan only; owned by the device's thread.
 */
class VulkanTransfer
{
public:
    /// Null when the device is not Vulkan or the command objects cannot be made.
    static std::unique_ptr<VulkanTransfer> create(RhiDevice &device);
    /// Waits for a copy in flight.
    ~VulkanTransfer();

    VulkanTransfer(const VulkanTransfer &) = delete;
    VulkanTransfer &operator=(const VulkanTransfer &) = delete;

    /// Whether copies run on a queue of their own, beside the compute queue.
    bool concurrent() const { return m_concurrent; }
    /// Submits the copy of source[0, bytes) to the start of `target`. False, with nothing in flight, when the
    /// copy could not be submitted.
    bool submit(const VulkanHostBuffer &source, QRhiBuffer *target, int64_t bytes);
    bool pending() const { return m_pending; }
    /// Waits for the copy in flight (true at once when there is none); false when the device failed, and the
    /// copied bytes are then not to be used.
    bool wait();
    /// Records, outside any pass, what gives compute shaders the bytes the last copy wrote to `target`: the
    /// buffer taken over from the transfer queue's family, or a barrier after the copy on the same queue.
    void recordAcquire(QRhiCommandBuffer *cb, QRhiBuffer *target, int64_t bytes);

private:
    explicit VulkanTransfer(RhiDevice &device);

    RhiDevice &m_device;
    bool m_concurrent = false;
    bool m_pending = false;
#if QT_CONFIG(vulkan)
    uint32_t m_family = 0;
    uint32_t m_gfxFamily = 0;
    VkQueue m_queue = VK_NULL_HANDLE;
    VkCommandPool m_pool = VK_NULL_HANDLE;
    VkCommandBuffer m_commands = VK_NULL_HANDLE;
    VkFence m_fence = VK_NULL_HANDLE;
#endif
};

} // namespace Hitscope
