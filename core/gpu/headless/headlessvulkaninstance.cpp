// SPDX-License-Identifier: GPL-3.0-or-later
#include "headlessvulkaninstance.h"

namespace Hitscope {

HeadlessVulkanInstance::HeadlessVulkanInstance(QVulkanInstance *instance)
    : m_instance(instance)
{
    loadVulkanLibrary(QStringLiteral("vulkan"), 1);
}

void HeadlessVulkanInstance::createOrAdoptInstance()
{
    initInstance(m_instance, {});
}

bool HeadlessVulkanInstance::supportsPresent(VkPhysicalDevice, uint32_t, QWindow *)
{
    // There is no surface to present to. QRhi asks only when it is given a window, which compute never does.
    return false;
}

} // namespace Hitscope
