// SPDX-License-Identifier: GPL-3.0-or-later
#include "headlessintegration.h"

#include <QtGui/private/qgenericunixeventdispatcher_p.h>
#include <qpa/qplatformwindow.h>
#include <qpa/qwindowsysteminterface.h>

#include "headlessbackingstore.h"
#include "headlessscreen.h"
#if QT_CONFIG(vulkan)
#include "headlessvulkaninstance.h"
#endif

namespace Hitscope {

HeadlessIntegration::HeadlessIntegration() = default;

HeadlessIntegration::~HeadlessIntegration()
{
    if (m_screen)
        QWindowSystemInterface::handleScreenRemoved(m_screen); // deletes it
}

void HeadlessIntegration::initialize()
{
    m_screen = new HeadlessScreen;
    QWindowSystemInterface::handleScreenAdded(m_screen, true);
}

bool HeadlessIntegration::hasCapability(Capability capability) const
{
    switch (capability) {
    case ThreadedPixmaps:
    case MultipleWindows:
    case NonFullScreenWindows:
        return true;
    default:
        // OpenGL and RhiBasedRendering stay false: QRhi's OpenGL backend then fails cleanly.
        return false;
    }
}

QPlatformWindow *HeadlessIntegration::createPlatformWindow(QWindow *window) const
{
    return new QPlatformWindow(window);
}

QPlatformBackingStore *HeadlessIntegration::createPlatformBackingStore(QWindow *window) const
{
    return new HeadlessBackingStore(window);
}

QAbstractEventDispatcher *HeadlessIntegration::createEventDispatcher() const
{
    return QtGenericUnixDispatcher::createUnixEventDispatcher();
}

#if QT_CONFIG(vulkan)
QPlatformVulkanInstance *HeadlessIntegration::createPlatformVulkanInstance(QVulkanInstance *instance) const
{
    return new HeadlessVulkanInstance(instance);
}
#endif

} // namespace Hitscope
