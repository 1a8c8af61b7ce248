// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpu/vulkanhostbuffer.h"

#if QT_CONFIG(vulkan)
#include <QVulkanFunctions>
#include <QVulkanInstance>
#endif

#include "gpu/rhidevice.h"

namespace Hitscope {

VulkanHostBuffer::VulkanHostBuffer(RhiDevice &device)
    : m_device(device)
{
}

bool VulkanHostBuffer::isSupported(RhiDevice &device)
{
#if QT_CONFIG(vulkan)
    return device.backend() == GpuBackend::Vulkan && device.vulkanFunctions() && device.hasHostMemoryImport();
#else
    Q_UNUSED(device);
    return false;
#endif
}

std::unique_ptr<VulkanHostBuffer> VulkanHostBuffer::create(RhiDevice &device, uint8_t *data, int64_t bytes)
{
#if QT_CONFIG(vulkan)
    if (!isSupported(device) || !data || bytes <= 0)
        return nullptr;
    const int64_t align = device.hostImportAlignment();
    if (align <= 0 || reinterpret_cast<uintptr_t>(data) % uint64_t(align) != 0 || bytes % align != 0)
        return nullptr;
    const QRhiVulkanNativeHandles *h = device.vulkanHandles();
    QVulkanDeviceFunctions *df = device.vulkanFunctions();
    // An extension's function, which Qt's table does not have.
    const auto getDeviceProc = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
        device.vulkanInstance()->getInstanceProcAddr("vkGetDeviceProcAddr"));
    const auto hostPointerProperties = getDeviceProc ? reinterpret_cast<PFN_vkGetMemoryHostPointerPropertiesEXT>(
                                           getDeviceProc(h->dev, "vkGetMemoryHostPointerPropertiesEXT"))
                                                     : nullptr;
    if (!hostPointerProperties)
        return nullptr;

    std::unique_ptr<VulkanHostBuffer> b(new VulkanHostBuffer(device));
    VkMemoryHostPointerPropertiesEXT pointerProps {};
    pointerProps.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT;
    if (hostPointerProperties(h->dev, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, data, &pointerProps)
        != VK_SUCCESS)
        return nullptr;

    VkExternalMemoryBufferCreateInfo external {};
    external.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    VkBufferCreateInfo info {};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.pNext = &external;
    info.size = VkDeviceSize(bytes);
    info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    // Copied from on the compute queue (in a frame) or on the transfer queue (ahead of its batch).
    const uint32_t families[2] = { uint32_t(h->gfxQueueFamilyIdx), uint32_t(device.transferQueueFamily()) };
    info.sharingMode = device.transferQueueFamily() >= 0 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE;
    info.queueFamilyIndexCount = device.transferQueueFamily() >= 0 ? 2 : 0;
    info.pQueueFamilyIndices = families;
    if (df->vkCreateBuffer(h->dev, &info, nullptr, &b->m_buffer) != VK_SUCCESS)
        return nullptr;
    VkMemoryRequirements req;
    df->vkGetBufferMemoryRequirements(h->dev, b->m_buffer, &req);
    const uint32_t types = req.memoryTypeBits & pointerProps.memoryTypeBits;
    if (types == 0 || req.size > VkDeviceSize(bytes))
        return nullptr;
    uint32_t type = 0;
    while (!(types & (1u << type)))
        ++type;
    VkImportMemoryHostPointerInfoEXT importInfo {};
    importInfo.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT;
    importInfo.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    importInfo.pHostPointer = data;
    VkMemoryAllocateInfo alloc {};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.pNext = &importInfo;
    alloc.allocationSize = VkDeviceSize(bytes);
    alloc.memoryTypeIndex = type;
    if (df->vkAllocateMemory(h->dev, &alloc, nullptr, &b->m_memory) != VK_SUCCESS)
        return nullptr;
    if (df->vkBindBufferMemory(h->dev, b->m_buffer, b->m_memory, 0) != VK_SUCCESS)
        return nullptr;
    b->m_data = data;
    b->m_size = bytes;
    return b;
#else
    Q_UNUSED(device);
    Q_UNUSED(data);
    Q_UNUSED(bytes);
    return nullptr;
#endif
}

VulkanHostBuffer::~VulkanHostBuffer()
{
#if QT_CONFIG(vulkan)
    const VkDevice dev = m_device.vulkanHandles()->dev;
    if (m_buffer)
        m_device.vulkanFunctions()->vkDestroyBuffer(dev, m_buffer, nullptr);
    if (m_memory)
        m_device.vulkanFunctions()->vkFreeMemory(dev, m_memory, nullptr);
#endif
}

} // namespace Hitscope
