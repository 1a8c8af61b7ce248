// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>

#include "gpu/rhi.h"

namespace Hitscope {

class RhiDevice;

/**
 * Host memory of ours (a batch's haystack) imported into Vulkan with VK_EXT_external_memory_host, so that the
 * GPU copies a batch straight from where the reader put it. Without it every batch is first copied into
 * VulkanStaging's memory on the engine thread: on the H200 that copy took half of the engine's time per batch,
 * more than the transfer to the GPU. The memory must stay mapped while this object lives. Any thread may
 * create or destroy one (the device functions used are free-threaded), but not while the GPU uses it.
 */
class VulkanHostBuffer
{
public:
    /// Whether the device was created with the extension (RhiDevice asks for it where the driver has it).
    static bool isSupported(RhiDevice &device);
    /// Imports [data, data + bytes); `data` and `bytes` must be multiples of the device's import alignment (a
    /// page). Null when the device cannot import this memory.
    static std::unique_ptr<VulkanHostBuffer> create(RhiDevice &device, uint8_t *data, int64_t bytes);
    ~VulkanHostBuffer();

    VulkanHostBuffer(const VulkanHostBuffer &) = delete;
    VulkanHostBuffer &operator=(const VulkanHostBuffer &) = delete;

    const uint8_t *data() const { return m_data; }
    int64_t size() const { return m_size; }
#if QT_CONFIG(vulkan)
    VkBuffer buffer() const { return m_buffer; }
#endif

private:
    explicit VulkanHostBuffer(RhiDevice &device);

    RhiDevice &m_device;
    const uint8_t *m_data = nullptr;
    int64_t m_size = 0;
#if QT_CONFIG(vulkan)
    VkBuffer m_buffer = VK_NULL_HANDLE;
    VkDeviceMemory m_memory = VK_NULL_HANDLE;
#endif
};

} // namespace Hitscope
