// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpu/vulkantransfer.h"

#if QT_CONFIG(vulkan)
#include <QVulkanFunctions>
#include <QVulkanInstance>
#endif

#include "gpu/rhidevice.h"
#include "gpu/vulkanhostbuffer.h"

namespace Hitscope {

VulkanTransfer::VulkanTransfer(RhiDevice &device)
    : m_device(device)
{
}

std::unique_ptr<VulkanTransfer> VulkanTransfer::create(RhiDevice &device)
{
#if QT_CONFIG(vulkan)
    if (device.backend() != GpuBackend::Vulkan || !device.vulkanInstance())
        return nullptr;
    const QRhiVulkanNativeHandles *h = device.vulkanHandles();
    QVulkanDeviceFunctions *df = device.vulkanFunctions();
    std::unique_ptr<VulkanTransfer> t(new VulkanTransfer(device));
    t->m_gfxFamily = uint32_t(h->gfxQueueFamilyIdx);
    t->m_concurrent = device.transferQueue() != VK_NULL_HANDLE;
    t->m_family = t->m_concurrent ? uint32_t(device.transferQueueFamily()) : t->m_gfxFamily;
    t->m_queue = t->m_concurrent ? device.transferQueue() : h->gfxQueue;

    VkCommandPoolCreateInfo pool {};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = t->m_family;
    if (df->vkCreateCommandPool(h->dev, &pool, nullptr, &t->m_pool) != VK_SUCCESS)
        return nullptr;
    VkCommandBufferAllocateInfo alloc {};
    alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    alloc.commandPool = t->m_pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    if (df->vkAllocateCommandBuffers(h->dev, &alloc, &t->m_commands) != VK_SUCCESS)
        return nullptr;
    VkFenceCreateInfo fence {};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    if (df->vkCreateFence(h->dev, &fence, nullptr, &t->m_fence) != VK_SUCCESS)
        return nullptr;
    return t;
#else
    Q_UNUSED(device);
    return nullptr;
#endif
}

VulkanTransfer::~VulkanTransfer()
{
#if QT_CONFIG(vulkan)
    wait();
    const QRhiVulkanNativeHandles *h = m_device.vulkanHandles();
    QVulkanDeviceFunctions *df = m_device.vulkanFunctions();
    if (m_fence)
        df->vkDestroyFence(h->dev, m_fence, nullptr);
    if (m_pool)
        df->vkDestroyCommandPool(h->dev, m_pool, nullptr); // frees the command buffer
#endif
}

bool VulkanTransfer::submit(const VulkanHostBuffer &source, QRhiBuffer *target, int64_t bytes)
{
#if QT_CONFIG(vulkan)
    if (m_pending && !wait())
        return false;
    QVulkanDeviceFunctions *df = m_device.vulkanFunctions();
    if (df->vkResetCommandBuffer(m_commands, 0) != VK_SUCCESS)
        return false;
    VkCommandBufferBeginInfo begin {};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (df->vkBeginCommandBuffer(m_commands, &begin) != VK_SUCCESS)
        return false;
    const QRhiBuffer::NativeBuffer nb = target->nativeBuffer();
    const VkBuffer dst = *static_cast<const VkBuffer *>(nb.objects[0]);
    VkBufferCopy region {};
    region.size = VkDeviceSize(bytes);
    // The target's earlier contents (the batch before last, read by finished frames) are not needed: it is taken
    // over without a transfer of ownership. What is written is released to the compute queue's family.
    df->vkCmdCopyBuffer(m_commands, source.buffer(), dst, 1, &region);
    if (m_concurrent) {
        VkBufferMemoryBarrier release {};
        release.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
        release.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        release.srcQueueFamilyIndex = m_family;
        release.dstQueueFamilyIndex = m_gfxFamily;
        release.buffer = dst;
        release.size = VkDeviceSize(bytes);
        df->vkCmdPipelineBarrier(m_commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0,
                                 0, nullptr, 1, &release, 0, nullptr);
    }
    if (df->vkEndCommandBuffer(m_commands) != VK_SUCCESS)
        return false;
    VkSubmitInfo submit {};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &m_commands;
    if (df->vkQueueSubmit(m_queue, 1, &submit, m_fence) != VK_SUCCESS)
        return false;
    m_pending = true;
    return true;
#else
    Q_UNUSED(source);
    Q_UNUSED(target);
    Q_UNUSED(bytes);
    return false;
#endif
}

bool VulkanTransfer::wait()
{
#if QT_CONFIG(vulkan)
    if (!m_pending)
        return true;
    m_pending = false;
    const QRhiVulkanNativeHandles *h = m_device.vulkanHandles();
    QVulkanDeviceFunctions *df = m_device.vulkanFunctions();
    const VkResult r = df->vkWaitForFences(h->dev, 1, &m_fence, VK_TRUE, UINT64_MAX);
    df->vkResetFences(h->dev, 1, &m_fence);
    return r == VK_SUCCESS;
#else
    return true;
#endif
}

void VulkanTransfer::recordAcquire(QRhiCommandBuffer *cb, QRhiBuffer *target, int64_t bytes)
{
#if QT_CONFIG(vulkan)
    cb->beginExternal();
    const auto *cbh = static_cast<const QRhiVulkanCommandBufferNativeHandles *>(cb->nativeHandles());
    QVulkanDeviceFunctions *df = m_device.vulkanFunctions();
    const QRhiBuffer::NativeBuffer nb = target->nativeBuffer();
    VkBufferMemoryBarrier acquire {};
    acquire.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
    acquire.srcAccessMask = m_concurrent ? 0 : VK_ACCESS_TRANSFER_WRITE_BIT;
    acquire.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
    acquire.srcQueueFamilyIndex = m_concurrent ? m_family : VK_QUEUE_FAMILY_IGNORED;
    acquire.dstQueueFamilyIndex = m_concurrent ? m_gfxFamily : VK_QUEUE_FAMILY_IGNORED;
    acquire.buffer = *static_cast<const VkBuffer *>(nb.objects[0]);
    acquire.size = VkDeviceSize(bytes);
    df->vkCmdPipelineBarrier(cbh->commandBuffer,
                             m_concurrent ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT : VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, nullptr, 1, &acquire, 0, nullptr);
    cb->endExternal();
#else
    Q_UNUSED(cb);
    Q_UNUSED(target);
    Q_UNUSED(bytes);
#endif
}

} // namespace Hitscope
