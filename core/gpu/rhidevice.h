// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>
#include <vector>

#include <QList>
#include <QString>
#include <QStringList>

#include "gpu/gpudeviceinfo.h"
#include "gpu/rhi.h"

class QOffscreenSurface;
class QThread;
class QVulkanDeviceFunctions;
class QVulkanInstance;

namespace Hitscope {

/// How to create a RhiDevice.
struct RhiDeviceOptions
{
    GpuBackend backend = GpuBackend::Auto;
    /// Vulkan: enable VK_LAYER_KHRONOS_validation (package vulkan-validationlayers); creation fails without it.
    /// Every message is counted: see RhiDevice::validationMessageCount().
    bool validation = false;
    /// Vulkan: which physical device (vkEnumeratePhysicalDevices order, as in `hitscope-cli devices`);
    /// -1 lets QRhi choose (the first, or QT_VK_PHYSICAL_DEVICE_INDEX).
    int vulkanDeviceIndex = -1;
    /// OpenGL: a surface created on the GUI thread (RhiDevice::createFallbackSurface()) that outlives the
    /// device. When null, a device created on the GUI thread makes its own; elsewhere OpenGL is refused.
    QOffscreenSurface *fallbackSurface = nullptr;
};

/**
 * A QRhi made for compute, and what it can do.
 *
 * Threading: the thread that calls create() owns the device, its QRhi and every QRhi resource made from it.
 * Use and destroy them on that thread only (a GPU thread the GUI talks to through queued calls). The only
 * exception is OpenGL's fallback surface, which must come from the GUI thread (see RhiDeviceOptions).
 *
 * A QRhi needs a QGuiApplication (QVulkanInstance, QOffscreenSurface): see createGpuApplication().
 */
class RhiDevice
{
public:
    /// Creates a device on the calling thread. Returns null with `error` set, for people, when the requested
    /// backend (or, for Auto, neither Vulkan nor OpenGL) offers compute with storage buffer read-back.
    static std::unique_ptr<RhiDevice> create(const RhiDeviceOptions &options, QString *error);
    ~RhiDevice();

    RhiDevice(const RhiDevice &) = delete;
    RhiDevice &operator=(const RhiDevice &) = delete;

    QRhi *rhi() const { return m_rhi.get(); }
    GpuBackend backend() const { return m_info.backend; }
    QString backendName() const { return gpuBackendName(m_info.backend); }
    QString deviceName() const { return m_info.deviceName; }
    const GpuLimits &limits() const { return m_info.limits; }
    /// Everything known about the device, as `hitscope-cli devices` prints it (no self-test).
    const GpuDeviceInfo &info() const { return m_info; }
    QThread *thread() const { return m_thread; }
    /// The instance the QRhi was created with; null unless the backend is Vulkan.
    QVulkanInstance *vulkanInstance() const { return m_vulkan.get(); }
#if QT_CONFIG(vulkan)
    /// The QRhi's Vulkan objects; null unless the backend is Vulkan.
    const QRhiVulkanNativeHandles *vulkanHandles() const;
    /// Qt's function table of the Vulkan device, made when the device was created so that any thread may use
    /// it (QVulkanInstance::deviceFunctions() builds it on first use, which is not thread-safe); null unless
    /// the backend is Vulkan.
    QVulkanDeviceFunctions *vulkanFunctions() const { return m_vulkanFunctions; }
    /// A queue of a transfer-only family (a discrete GPU's copy engines), which copies beside the compute
    /// queue; null where the device has none (Mesa's software Vulkan) or HITSCOPE_GPU_NO_TRANSFER_QUEUE is set.
    VkQueue transferQueue() const { return m_transferQueue; }
    /// The family of transferQueue(), or -1.
    int transferQueueFamily() const { return m_transferFamily; }
#endif
    /// Whether the Vulkan device was created with VK_EXT_external_memory_host (see VulkanHostBuffer).
    bool hasHostMemoryImport() const { return m_hostMemoryImport; }
    /// What imported host memory's address and size must be multiples of (a page, usually).
    int64_t hostImportAlignment() const { return m_hostImportAlignment; }

    /// Loads a baked shader, for example ":/shaders/smoke.comp.qsb". Returns an invalid QShader and sets
    /// `error` when the resource is missing or unreadable.
    static QShader loadShader(const QString &resourcePath, QString *error);

    /**
     * Tries each backend (Vulkan, then OpenGL) on the calling thread and describes it, or says why it is not
     * available; with `runSelfTest`, runs the smoke compute shader on each device created. Call it on the GUI
     * thread so that OpenGL can be tried. What `hitscope-cli devices` prints.
     */
    static QList<GpuDeviceInfo> enumerate(bool runSelfTest = true, bool validation = false);

    /// The number of Vulkan physical devices, or -1 (and `error`) when there is no Vulkan instance.
    static int vulkanDeviceCount(QString *error = nullptr);
    /// The Vulkan physical devices that are not software renderers (Mesa's lavapipe reports itself a CPU), by
    /// index, without creating a device on any.
    static std::vector<int> hardwareVulkanDevices(QString *error = nullptr);

    /// A fallback surface for OpenGL devices made on another thread. Call on the GUI thread only; delete it
    /// there, after the device.
    static QOffscreenSurface *createFallbackSurface();

    /// Vulkan messages (errors, warnings, performance warnings) of the validation layer or the driver, from
    /// every device of the process since the last clear. Thread-safe. A test with validation on fails on any.
    static int validationMessageCount();
    static QStringList validationMessages();
    static void clearValidationMessages();

private:
    RhiDevice() = default;
    bool createVulkan(const RhiDeviceOptions &options, QString *error);
#if QT_CONFIG(vulkan)
    bool createVulkanDevice(VkPhysicalDevice physDev, QRhiVulkanNativeHandles *import, QString *error);
#endif
    bool createOpenGL(const RhiDeviceOptions &options, QString *error);
    /// The QRhi (when Vulkan), the device we made for it, and the instance, in that order; what they offered
    /// is forgotten (a failed Vulkan device before OpenGL is tried).
    void destroyVulkan();
    bool checkCompute(QString *error);
    void readInfo();

    // Declaration order is destruction order, reversed: the QRhi goes first, the instance last.
    std::shared_ptr<QVulkanInstance> m_vulkan; // shared by every device of the process (see createVulkan)
    std::unique_ptr<QOffscreenSurface> m_ownedSurface;
    std::unique_ptr<QRhi> m_rhi;
    QThread *m_thread = nullptr;
    GpuDeviceInfo m_info;
    QVulkanDeviceFunctions *m_vulkanFunctions = nullptr;
#if QT_CONFIG(vulkan)
    VkDevice m_ownedDevice = VK_NULL_HANDLE; // made by createVulkanDevice(), destroyed after the QRhi
    VkQueue m_transferQueue = VK_NULL_HANDLE;
    int m_transferFamily = -1;
#endif
    bool m_hostMemoryImport = false;
    int64_t m_hostImportAlignment = 0;
};

} // namespace Hitscope
