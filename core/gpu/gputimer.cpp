// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpu/gputimer.h"

#include <vector>

#if QT_CONFIG(vulkan)
#include <QVulkanFunctions>
#include <QVulkanInstance>
#endif

#include "gpu/rhidevice.h"
#include "util/logcategories.h"

namespace Hitscope {


GpuTimer::GpuTimer(RhiDevice &device)
    : m_device(device)
{
#if QT_CONFIG(vulkan)
    if (device.backend() != GpuBackend::Vulkan || !device.limits().timestamps)
        return;
    const QRhiVulkanNativeHandles *handles = device.vulkanHandles();
    QVulkanFunctions *f = device.vulkanInstance()->functions();
    uint32_t familyCount = 0;
    f->vkGetPhysicalDeviceQueueFamilyProperties(handles->physDev, &familyCount, nullptr);
    std::vector<VkQueueFamilyProperties> families(familyCount);
    f->vkGetPhysicalDeviceQueueFamilyProperties(handles->physDev, &familyCount, families.data());
    const uint32_t validBits = families.at(handles->gfxQueueFamilyIdx).timestampValidBits;
    m_validMask = validBits >= 64 ? ~uint64_t(0) : (uint64_t(1) << validBits) - 1;
    m_periodNs = device.limits().timestampPeriodNs;

    VkQueryPoolCreateInfo info = {};
    info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 2;
    const VkResult result = device.vulkanFunctions()->vkCreateQueryPool(handles->dev, &info, nullptr, &m_pool);
    if (result != VK_SUCCESS) {
        qCWarning(lcGpu, "GpuTimer: vkCreateQueryPool failed: %d", int(result));
        m_pool = VK_NULL_HANDLE;
        return;
    }
    m_supported = true;
#endif
}

GpuTimer::~GpuTimer()
{
#if QT_CONFIG(vulkan)
    if (m_pool)
        m_device.vulkanFunctions()->vkDestroyQueryPool(m_device.vulkanHandles()->dev, m_pool, nullptr);
#endif
}

void GpuTimer::writeTimestamp(QRhiCommandBuffer *cb, uint32_t query, bool reset)
{
#if QT_CONFIG(vulkan)
    cb->beginExternal();
    // Valid only between beginExternal() and endExternal(): inside a pass this is a secondary command buffer.
    const auto *cbHandles = static_cast<const QRhiVulkanCommandBufferNativeHandles *>(cb->nativeHandles());
    QVulkanDeviceFunctions *df = m_device.vulkanFunctions();
    if (reset)
        df->vkCmdResetQueryPool(cbHandles->commandBuffer, m_pool, 0, 2);
    // Both stamps at the bottom of the pipe: the first one then waits for earlier work (an upload copy, say)
    // instead of being written while that still runs.
    df->vkCmdWriteTimestamp(cbHandles->commandBuffer, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, m_pool, query);
    cb->endExternal();
#else
    Q_UNUSED(cb);
    Q_UNUSED(query);
    Q_UNUSED(reset);
#endif
}

void GpuTimer::begin(QRhiCommandBuffer *cb)
{
    if (!m_supported)
        return;
    writeTimestamp(cb, 0, true);
    m_begun = true;
    m_ended = false;
}

void GpuTimer::end(QRhiCommandBuffer *cb)
{
    if (!m_supported || !m_begun)
        return;
    writeTimestamp(cb, 1, false);
    m_ended = true;
}

double GpuTimer::elapsedMs()
{
#if QT_CONFIG(vulkan)
    if (!m_supported || !m_begun || !m_ended)
        return 0;
    uint64_t ticks[2] = {};
    // No WAIT flag: if the frame was not submitted yet, this returns VK_NOT_READY instead of hanging.
    const VkResult result = m_device.vulkanFunctions()->vkGetQueryPoolResults(
        m_device.vulkanHandles()->dev, m_pool, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
    if (result != VK_SUCCESS) {
        qCWarning(lcGpu, "GpuTimer: timestamps not available (VkResult %d): read them after the frame ended",
                  int(result));
        return 0;
    }
    const uint64_t elapsed = ((ticks[1] & m_validMask) - (ticks[0] & m_validMask)) & m_validMask;
    return double(elapsed) * m_periodNs / 1e6;
#else
    return 0;
#endif
}

} // namespace Hitscope
