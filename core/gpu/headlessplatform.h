// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>

#include <QString>

class QGuiApplication;

namespace Hitscope {

/// The key of Hitscope's own Qt platform plugin, linked statically into every executable through appcore.
QString headlessPlatformName();

/**
 * Call before any QCoreApplication/QGuiApplication exists. When QT_QPA_PLATFORM is unset and neither DISPLAY
 * nor WAYLAND_DISPLAY is set, sets QT_QPA_PLATFORM=hitscopeheadless and returns true.
 *
 * Why: QRhi's Vulkan backend needs a QVulkanInstance, which needs a QGuiApplication whose platform can create
 * one. Without a display the default platform (xcb) aborts the process, and in Qt 6.4 "offscreen" and
 * "minimal" cannot create Vulkan instances. The headless platform can, so the CLI, the benchmark and the tests
 * run Vulkan compute on a server or the GPU machine. An explicit QT_QPA_PLATFORM or -platform argument wins,
 * and with a display the normal platform is kept, because the OpenGL fallback needs it.
 */
bool useHeadlessPlatformIfNeeded();

/**
 * What a GPU-capable executable's main() constructs instead of a QCoreApplication: calls
 * useHeadlessPlatformIfNeeded(), then returns a QGuiApplication (which QRhi needs for QVulkanInstance).
 * `argc` must outlive the application, as for any Q*Application.
 */
std::unique_ptr<QGuiApplication> createGpuApplication(int &argc, char **argv);

} // namespace Hitscope
