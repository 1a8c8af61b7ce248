// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <qpa/qplatformintegration.h>

namespace Hitscope {

class HeadlessScreen;

/**
 * The platform integration of "hitscopeheadless": one screen, a generic Unix event dispatcher, windows and
 * backing stores that show nothing, and Vulkan instances without a window system. It exists because in
 * Qt 6.4 the "offscreen" and "minimal" platforms cannot create a QVulkanInstance, and "xcb" needs an X
 * server: with this platform the CLI and the tests run QRhi Vulkan compute on a server with no display.
 * OpenGL is not offered (it would need a display, or EGL surfaceless work).
 */
class HeadlessIntegration : public QPlatformIntegration
{
public:
    HeadlessIntegration();
    ~HeadlessIntegration() override;

    void initialize() override;
    bool hasCapability(Capability capability) const override;
    QPlatformWindow *createPlatformWindow(QWindow *window) const override;
    QPlatformBackingStore *createPlatformBackingStore(QWindow *window) const override;
    QAbstractEventDispatcher *createEventDispatcher() const override;
#if QT_CONFIG(vulkan)
    QPlatformVulkanInstance *createPlatformVulkanInstance(QVulkanInstance *instance) const override;
#endif

private:
    HeadlessScreen *m_screen = nullptr; // owned by QWindowSystemInterface once added
};

} // namespace Hitscope
