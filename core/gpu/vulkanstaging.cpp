// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpu/vulkanstaging.h"

#if QT_CONFIG(vulkan)
#include <QVulkanFunctions>
#include <QVulkanInstance>
#endif

#include "gpu/rhidevice.h"
#include "gpu/vulkanhostbuffer.h"

namespace Hitscope {


VulkanStaging::VulkanStaging(RhiDevice &device)
    : m_device(device)
{
}

std::unique_ptr<VulkanStaging> VulkanStaging::create(RhiDevice &device, int64_t bytes)
{
#if QT_CONFIG(vulkan)
    if (device.backend() != GpuBackend::Vulkan || !device.vulkanInstance())
        return nullptr;
    std::unique_ptr<VulkanStaging> s(new VulkanStaging(device));
    const QRhiVulkanNativeHandles *h = device.vulkanHandles();
    QVulkanDeviceFunctions *df = device.vulkanFunctions();
    QVulkanFunctions *f = device.vulkanInstance()->functions();

    VkBufferCreateInfo info {};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = VkDeviceSize(bytes);
    info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (df->vkCreateBuffer(h->dev, &info, nullptr, &s->m_buffer) != VK_SUCCESS)
        return nullptr;
    VkMemoryRequirements req;
    df->vkGetBufferMemoryRequirements(h->dev, s->m_buffer, &req);
    VkPhysicalDeviceMemoryProperties props;
    f->vkGetPhysicalDeviceMemoryProperties(h->physDev, &props);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < props.memoryTypeCount && type == UINT32_MAX; ++i)
        if ((req.memoryTypeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want)
            type = i;
    if (type == UINT32_MAX)
        return nullptr;
    VkMemoryAllocateInfo alloc {};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    if (df->vkAllocateMemory(h->dev, &alloc, nullptr, &s->m_memory) != VK_SUCCESS)
        return nullptr;
    if (df->vkBindBufferMemory(h->dev, s->m_buffer, s->m_memory, 0) != VK_SUCCESS)
        return nullptr;
    void *p = nullptr;
    if (df->vkMapMemory(h->dev, s->m_memory, 0, VK_WHOLE_SIZE, 0, &p) != VK_SUCCESS)
        return nullptr;
    s->m_mapped = static_cast<uint8_t *>(p);
    s->m_size = bytes;
    return s;
#else
    Q_UNUSED(device);
    Q_UNUSED(bytes);
    return nullptr;
#endif
}

VulkanStaging::~VulkanStaging()
{
#if QT_CONFIG(vulkan)
    const QRhiVulkanNativeHandles *h = m_device.vulkanHandles();
    QVulkanDeviceFunctions *df = m_device.vulkanFunctions();
    if (m_mapped)
        df->vkUnmapMemory(h->dev, m_memory);
    if (m_buffer)
        df->vkDestroyBuffer(h->dev, m_buffer, nullptr);
    if (m_memory)
        df->vkFreeMemory(h->dev, m_memory, nullptr);
#endif
}

void VulkanStaging::recordCopies(QRhiCommandBuffer *cb, const std::vector<Copy> &copies)
{
#if QT_CONFIG(vulkan)
    cb->beginExternal();
    const auto *cbh = static_cast<const QRhiVulkanCommandBufferNativeHandles *>(cb->nativeHandles());
    QVulkanDeviceFunctions *df = m_device.vulkanFunctions();
    for (const Copy &c : copies) {
        if (c.bytes <= 0)
            continue;
        const QRhiBuffer::NativeBuffer nb = c.target->nativeBuffer();
        const VkBuffer dst = *static_cast<const VkBuffer *>(nb.objects[0]);
        VkBufferCopy region {};
        region.srcOffset = VkDeviceSize(c.offset);
        region.size = VkDeviceSize(c.bytes);
        df->vkCmdCopyBuffer(cbh->commandBuffer, c.source ? c.source->buffer() : m_buffer, dst, 1, &region);
    }
    VkMemoryBarrier barrier {};
    barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_UNIFORM_READ_BIT;
    df->vkCmdPipelineBarrier(cbh->commandBuffer, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
                             1, &barrier, 0, nullptr, 0, nullptr);
    cb->endExternal();
#else
    Q_UNUSED(cb);
    Q_UNUSED(copies);
#endif
}

void VulkanStaging::recordComputeBarrier(RhiDevice &device, QRhiCommandBuffer *cb)
{
#if QT_CONFIG(vulkan)
    if (device.backend() != GpuBackend::Vulkan || !device.vulkanInstance())
        return;
    cb->beginExternal();
    const auto *cbh = static_cast<const QRhiVulkanCommandBufferNativeHandles *>(cb->nativeHandles());
    VkMemoryBarrier barrier {};
    barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    device.vulkanFunctions()->vkCmdPipelineBarrier(cbh->commandBuffer, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, nullptr,
                                                  0, nullptr);
    cb->endExternal();
#else
    Q_UNUSED(device);
    Q_UNUSED(cb);
#endif
}

} // namespace Hitscope
