// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/rhi.h"

namespace Hitscope {

class RhiDevice;
class VulkanHostBuffer;

/**
 * A host-visible Vulkan buffer of our own, mapped once, from which the haystack is copied to the GPU.
 * QRhi's uploadStaticBuffer() allocates a staging buffer the size of the data on every upload; for a batch of
 * a GiB that allocation (pinned, zeroed memory) costs more than the scan. Vulkan only; owned by the device's
 * thread like every QRhi resource.
 */
class VulkanStaging
{
public:
    /// Null when the device is not Vulkan or the memory cannot be had.
    static std::unique_ptr<VulkanStaging> create(RhiDevice &device, int64_t bytes);
    ~VulkanStaging();

    uint8_t *data() const { return m_mapped; }
    int64_t size() const { return m_size; }
    /// A region of this buffer copied to the start of a QRhi buffer (Static or Immutable).
    struct Copy
    {
        int64_t offset;
        QRhiBuffer *target;
        int64_t bytes;
        const VulkanHostBuffer *source = nullptr; ///< copy from this imported memory instead of the staging buffer
    };

    /// Records the copies and one barrier that makes them visible to compute shaders. Call outside any pass.
    void recordCopies(QRhiCommandBuffer *cb, const std::vector<Copy> &copies);
    /// Records a barrier after which compute shaders see every earlier compute write and start only once the
    /// earlier dispatches ended (consecutive dispatches may otherwise overlap). Does nothing off Vulkan. Call
    /// outside any pass.
    static void recordComputeBarrier(RhiDevice &device, QRhiCommandBuffer *cb);

private:
    explicit VulkanStaging(RhiDevice &device);

    RhiDevice &m_device;
    int64_t m_size = 0;
    uint8_t *m_mapped = nullptr;
#if QT_CONFIG(vulkan)
    VkBuffer m_buffer = VK_NULL_HANDLE;
    VkDeviceMemory m_memory = VK_NULL_HANDLE;
#endif
};

} // namespace Hitscope
