// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QtGui/private/qbasicvulkanplatforminstance_p.h>

namespace Hitscope {

/**
 * A Vulkan instance with no window system: loads libvulkan.so.1 (or QT_VULKAN_LIB) and creates the instance
 * with the layers and extensions the QVulkanInstance asks for and no window-system surface extension
 * (VK_KHR_xcb_surface and the like). QBasicPlatformVulkanInstance itself adds VK_KHR_surface, which needs no
 * display, and VK_EXT_debug_report unless QVulkanInstance::NoDebugOutputRedirect is set.
 * Presenting is not supported: compute and offscreen rendering only.
 */
class HeadlessVulkanInstance : public QBasicPlatformVulkanInstance
{
public:
    explicit HeadlessVulkanInstance(QVulkanInstance *instance);

    void createOrAdoptInstance() override;
    bool supportsPresent(VkPhysicalDevice physicalDevice, uint32_t queueFamilyIndex, QWindow *window) override;

private:
    QVulkanInstance *m_instance;
};

} // namespace Hitscope
