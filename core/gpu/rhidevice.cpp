// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpu/rhidevice.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <vector>

#include <QFile>
#include <QGuiApplication>
#include <QMutex>
#include <QMutexLocker>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLExtraFunctions>
#include <QThread>
#include <QtGui/private/qguiapplication_p.h>
#include <qpa/qplatformintegration.h>
#if QT_CONFIG(vulkan)
#include <QVulkanFunctions>
#include <QVulkanInstance>
#endif

#include "gpu/headlessplatform.h"
#include "gpu/smoketest.h"
#include "util/logcategories.h"
#include "util/runtimeswitches.h"

#ifndef GL_MAX_SHADER_STORAGE_BLOCK_SIZE
#define GL_MAX_SHADER_STORAGE_BLOCK_SIZE 0x90DE
#endif
#ifndef GL_MAX_COMPUTE_SHARED_MEMORY_SIZE
#define GL_MAX_COMPUTE_SHARED_MEMORY_SIZE 0x8262
#endif

namespace Hitscope {

namespace {

struct ValidationLog
{
    QMutex mutex;
    QStringList messages;
};

ValidationLog &validationLog()
{
    static ValidationLog log;
    return log;
}

#if QT_CONFIG(vulkan)
// Qt 6.4's DebugFilter is a plain function pointer with no user data, so the log is process-wide.
bool recordVulkanMessage(VkDebugReportFlagsEXT flags, VkDebugReportObjectTypeEXT, uint64_t, size_t,
                         int32_t messageCode, const char *layerPrefix, const char *message)
{
    // QRhi's own filter drops this one as noise (it then allocates from another descriptor pool): let it.
    if (std::strstr(message, "VUID-VkDescriptorSetAllocateInfo-descriptorPool-00307"))
        return false;
    const char *kind = (flags & VK_DEBUG_REPORT_ERROR_BIT_EXT) ? "error"
        : (flags & VK_DEBUG_REPORT_PERFORMANCE_WARNING_BIT_EXT) ? "performance warning"
        : (flags & VK_DEBUG_REPORT_WARNING_BIT_EXT)             ? "warning"
                                                                : "message";
    const QString text = QStringLiteral("%1 %2 %3: %4")
                             .arg(QString::fromUtf8(layerPrefix), QLatin1String(kind))
                             .arg(messageCode)
                             .arg(QString::fromUtf8(message));
    qCWarning(lcGpu).noquote() << "Vulkan" << text;
    ValidationLog &log = validationLog();
    QMutexLocker locker(&log.mutex);
    log.messages.append(text);
    return true; // printed above: keep Qt from printing it again through qDebug
}
#endif

bool isGuiApplication()
{
    return qobject_cast<QGuiApplication *>(QCoreApplication::instance()) != nullptr;
}

QString noGuiApplicationError()
{
    return QStringLiteral("QRhi needs a QGuiApplication, and this process has %1 (construct the application "
                          "with Hitscope::createGpuApplication())")
        .arg(QCoreApplication::instance() ? QStringLiteral("a QCoreApplication") : QStringLiteral("none"));
}

QString deviceTypeName(QRhiDriverInfo::DeviceType type)
{
    switch (type) {
    case QRhiDriverInfo::IntegratedDevice:
        return QStringLiteral("integrated");
    case QRhiDriverInfo::DiscreteDevice:
        return QStringLiteral("discrete");
    case QRhiDriverInfo::ExternalDevice:
        return QStringLiteral("external");
    case QRhiDriverInfo::VirtualDevice:
        return QStringLiteral("virtual");
    case QRhiDriverInfo::CpuDevice:
        return QStringLiteral("cpu");
    case QRhiDriverInfo::UnknownDevice:
        break;
    }
    return QStringLiteral("unknown");
}

#if QT_CONFIG(vulkan)
QString vulkanVersion(uint32_t v)
{
    return QStringLiteral("%1.%2.%3").arg(VK_VERSION_MAJOR(v)).arg(VK_VERSION_MINOR(v)).arg(VK_VERSION_PATCH(v));
}

QString vulkanDriverVersion(uint32_t vendorId, uint32_t v)
{
    if (vendorId == 0x10de) // NVIDIA packs 10.8.8.6 bits
        return QStringLiteral("%1.%2.%3").arg(v >> 22).arg((v >> 14) & 0xff).arg((v >> 6) & 0xff);
    return vulkanVersion(v);
}
#endif

} // namespace

QString gpuBackendKey(GpuBackend backend)
{
    switch (backend) {
    case GpuBackend::Auto:
        return QStringLiteral("auto");
    case GpuBackend::Vulkan:
        return QStringLiteral("vulkan");
    case GpuBackend::OpenGL:
        return QStringLiteral("opengl");
    case GpuBackend::Null:
        return QStringLiteral("null");
    }
    return QString();
}

QString gpuBackendName(GpuBackend backend)
{
    switch (backend) {
    case GpuBackend::Auto:
        return QStringLiteral("Auto");
    case GpuBackend::Vulkan:
        return QStringLiteral("Vulkan");
    case GpuBackend::OpenGL:
        return QStringLiteral("OpenGL");
    case GpuBackend::Null:
        return QStringLiteral("Null");
    }
    return QString();
}

bool parseGpuBackend(const QString &text, GpuBackend *backend)
{
    for (GpuBackend b : { GpuBackend::Auto, GpuBackend::Vulkan, GpuBackend::OpenGL, GpuBackend::Null }) {
        if (text.compare(gpuBackendKey(b), Qt::CaseInsensitive) == 0) {
            *backend = b;
            return true;
        }
    }
    return false;
}

std::unique_ptr<RhiDevice> RhiDevice::create(const RhiDeviceOptions &options, QString *error)
{
    QString ignored;
    if (!error)
        error = &ignored;
    error->clear();

    if (options.backend == GpuBackend::Null) {
        *error = QStringLiteral("The Null backend is not a compute device: it dispatches nothing and reads back "
                                "zeros. Choose Vulkan or OpenGL.");
        return nullptr;
    }
    if (!isGuiApplication()) {
        *error = noGuiApplicationError();
        return nullptr;
    }

    std::unique_ptr<RhiDevice> device(new RhiDevice);
    device->m_thread = QThread::currentThread();
    device->m_info.qtPlatform = QGuiApplication::platformName();
    device->m_info.validation = options.validation;

    QString vulkanError;
    if (options.backend == GpuBackend::Vulkan || options.backend == GpuBackend::Auto) {
        if (device->createVulkan(options, &vulkanError) && device->checkCompute(&vulkanError)) {
            device->readInfo();
            return device;
        }
        device->destroyVulkan();
        if (options.backend == GpuBackend::Vulkan) {
            *error = QStringLiteral("Vulkan: %1").arg(vulkanError);
            return nullptr;
        }
        qCWarning(lcGpu).noquote() << "Vulkan is not available, trying OpenGL:" << vulkanError;
    }

    QString openGLError;
    device->m_info.validation = false;
    if (device->createOpenGL(options, &openGLError) && device->checkCompute(&openGLError)) {
        device->readInfo();
        return device;
    }
    device->m_rhi.reset();
    device->m_ownedSurface.reset();
    if (options.backend == GpuBackend::OpenGL)
        *error = QStringLiteral("OpenGL: %1").arg(openGLError);
    else
        *error = QStringLiteral("No GPU backend offers compute. Vulkan: %1 OpenGL: %2").arg(vulkanError, openGLError);
    return nullptr;
}

RhiDevice::~RhiDevice()
{
    if (m_thread && QThread::currentThread() != m_thread)
        qCCritical(lcGpu, "RhiDevice destroyed on a thread that does not own it");
    destroyVulkan();
    m_rhi.reset();
    m_ownedSurface.reset();
}

void RhiDevice::destroyVulkan()
{
#if QT_CONFIG(vulkan)
    if (!m_vulkan)
        return;
    m_rhi.reset();
    // QRhi does not destroy a device it imported.
    if (m_ownedDevice) {
        m_vulkan->deviceFunctions(m_ownedDevice)->vkDestroyDevice(m_ownedDevice, nullptr);
        m_vulkan->resetDeviceFunctions(m_ownedDevice);
    }
    m_ownedDevice = VK_NULL_HANDLE;
    m_transferQueue = VK_NULL_HANDLE;
    m_transferFamily = -1;
    m_vulkanFunctions = nullptr;
    m_hostMemoryImport = false;
    m_hostImportAlignment = 0;
    m_vulkan.reset();
#endif
}

#if QT_CONFIG(vulkan)
const QRhiVulkanNativeHandles *RhiDevice::vulkanHandles() const
{
    if (!m_rhi || m_rhi->backend() != QRhi::Vulkan)
        return nullptr;
    return static_cast<const QRhiVulkanNativeHandles *>(m_rhi->nativeHandles());
}
#endif

#if QT_CONFIG(vulkan)
namespace {
// Qt 6.4's Vulkan QRhi keeps the last QVulkanInstance it was created with in a process-wide variable, through
// which its memory allocator reaches every device's functions (qrhivulkan.cpp, globalVulkanInstance). Devices of
// instances of their own then call through another device's instance, from several threads at once, and through
// a destroyed one once it is gone (a pool of devices crashed freeing it): every device shares one instance.
std::shared_ptr<QVulkanInstance> makeVulkanInstance(bool validation, QString *error)
{
    auto instance = std::make_shared<QVulkanInstance>();
    const QByteArray validationLayer = QByteArrayLiteral("VK_LAYER_KHRONOS_validation");
    if (validation)
        instance->setLayers({ validationLayer });
    instance->setExtensions(QRhiVulkanInitParams::preferredInstanceExtensions());
    // 1.1 when the loader has it: the subgroup shaders (SPIR-V 1.3) need a 1.1 instance.
    if (instance->supportedApiVersion() >= QVersionNumber(1, 1))
        instance->setApiVersion(QVersionNumber(1, 1));
    if (!instance->create()) {
        const QString platform = QGuiApplication::platformName();
        if (platform == QLatin1String("offscreen") || platform == QLatin1String("minimal"))
            *error = QStringLiteral("the Qt platform \"%1\" cannot create Vulkan instances in Qt 6.4; unset "
                                    "QT_QPA_PLATFORM (without a display, Hitscope uses its \"%2\" platform) or "
                                    "set it to \"%2\".")
                         .arg(platform, headlessPlatformName());
        else
            *error = QStringLiteral("no Vulkan instance (Qt platform \"%1\", VkResult %2): is a Vulkan loader "
                                    "(libvulkan1) and a driver (mesa-vulkan-drivers, or the GPU vendor's) "
                                    "installed?")
                         .arg(platform)
                         .arg(int(instance->errorCode()));
        return nullptr;
    }
    if (validation && !instance->layers().contains(validationLayer)) {
        *error = QStringLiteral("the Khronos validation layer was requested but is not installed "
                                "(Debian package vulkan-validationlayers).");
        return nullptr;
    }
    instance->installDebugOutputFilter(recordVulkanMessage);
    return instance;
}

// The instance the live devices share, one with the validation layer and one without (a test may hold both);
// it goes with the last device that holds it.
std::shared_ptr<QVulkanInstance> sharedVulkanInstance(bool validation, QString *error)
{
    static std::mutex mutex;
    static std::weak_ptr<QVulkanInstance> shared[2];
    std::lock_guard lock(mutex);
    std::weak_ptr<QVulkanInstance> &slot = shared[validation ? 1 : 0];
    if (std::shared_ptr<QVulkanInstance> live = slot.lock())
        return live;
    std::shared_ptr<QVulkanInstance> made = makeVulkanInstance(validation, error);
    slot = made;
    return made;
}
} // namespace
#endif

bool RhiDevice::createVulkan(const RhiDeviceOptions &options, QString *error)
{
#if QT_CONFIG(vulkan)
    m_vulkan = sharedVulkanInstance(options.validation, error);
    if (!m_vulkan)
        return false;
    QRhiVulkanInitParams params;
    params.inst = m_vulkan.get();
    QVulkanFunctions *f = m_vulkan->functions();
    uint32_t count = 0;
    f->vkEnumeratePhysicalDevices(m_vulkan->vkInstance(), &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    f->vkEnumeratePhysicalDevices(m_vulkan->vkInstance(), &count, devices.data());
    // QRhi's own choice when none is made: QT_VK_PHYSICAL_DEVICE_INDEX, else the first.
    int index = options.vulkanDeviceIndex;
    if (index < 0)
        index = qEnvironmentVariableIsSet("QT_VK_PHYSICAL_DEVICE_INDEX")
            ? qEnvironmentVariableIntValue("QT_VK_PHYSICAL_DEVICE_INDEX")
            : 0;
    if (index < 0 || uint32_t(index) >= count) {
        *error = count == 0 ? QStringLiteral("there is no Vulkan device.")
                            : QStringLiteral("there is no Vulkan device %1 (%2 found).").arg(index).arg(count);
        return false;
    }
    const VkPhysicalDevice physDev = devices[size_t(index)];
    QRhiVulkanNativeHandles import;
    if (!createVulkanDevice(physDev, &import, error))
        return false;
    m_rhi.reset(QRhi::create(QRhi::Vulkan, &params, {}, &import));
    if (!m_rhi) {
        *error = QStringLiteral("QRhi could not use the Vulkan device (see the warnings above).");
        return false;
    }
    const auto *handles = static_cast<const QRhiVulkanNativeHandles *>(m_rhi->nativeHandles());
    if (m_hostMemoryImport) {
        // Used only with the alignment it needs known.
        auto properties2 = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(
            m_vulkan->getInstanceProcAddr("vkGetPhysicalDeviceProperties2"));
        VkPhysicalDeviceExternalMemoryHostPropertiesEXT host {};
        host.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT;
        VkPhysicalDeviceProperties2 props {};
        props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
        props.pNext = &host;
        if (properties2)
            properties2(handles->physDev, &props);
        m_hostImportAlignment = int64_t(host.minImportedHostPointerAlignment);
        if (m_hostImportAlignment <= 0)
            m_hostMemoryImport = false;
    }
    m_vulkanFunctions = m_vulkan->deviceFunctions(handles->dev);
    m_info.backend = GpuBackend::Vulkan;
    m_info.vulkanDeviceIndex = options.vulkanDeviceIndex;
    return true;
#else
    Q_UNUSED(options);
    *error = QStringLiteral("this Qt was built without Vulkan.");
    return false;
#endif
}

#if QT_CONFIG(vulkan)
bool RhiDevice::createVulkanDevice(VkPhysicalDevice physDev, QRhiVulkanNativeHandles *import, QString *error)
{
    // Made here rather than by QRhi, which asks for one queue: a transfer-only queue family (the copy engines of
    // a discrete GPU) moves the next batch to the GPU while the compute queue scans this one.
    QVulkanFunctions *f = m_vulkan->functions();
    uint32_t familyCount = 0;
    f->vkGetPhysicalDeviceQueueFamilyProperties(physDev, &familyCount, nullptr);
    std::vector<VkQueueFamilyProperties> families(familyCount);
    f->vkGetPhysicalDeviceQueueFamilyProperties(physDev, &familyCount, families.data());
    int gfx = -1;
    int transfer = -1;
    for (uint32_t i = 0; i < familyCount; ++i) {
        const VkQueueFlags flags = families[i].queueFlags;
        if (gfx < 0 && (flags & VK_QUEUE_GRAPHICS_BIT) && (flags & VK_QUEUE_COMPUTE_BIT))
            gfx = int(i);
        if (transfer < 0 && families[i].queueCount > 0 && (flags & VK_QUEUE_TRANSFER_BIT)
            && !(flags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)))
            transfer = int(i);
    }
    if (gfx < 0) {
        *error = QStringLiteral("the Vulkan device has no queue for graphics and compute.");
        return false;
    }
    if (RuntimeSwitches::gpuNoTransferQueue())
        transfer = -1;

    uint32_t extCount = 0;
    f->vkEnumerateDeviceExtensionProperties(physDev, nullptr, &extCount, nullptr);
    std::vector<VkExtensionProperties> exts(extCount);
    f->vkEnumerateDeviceExtensionProperties(physDev, nullptr, &extCount, exts.data());
    auto has = [&](const char *name) {
        return std::any_of(exts.begin(), exts.end(),
                           [&](const VkExtensionProperties &e) { return qstrcmp(e.extensionName, name) == 0; });
    };
    std::vector<const char *> enabled;
    // Batches copied to the GPU from where they were read.
    m_hostMemoryImport = has(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)
        && !RuntimeSwitches::gpuNoHostImport();
    if (m_hostMemoryImport)
        enabled.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    // Required where it exists (MoltenVK), as QRhi does.
    if (has("VK_KHR_portability_subset")
        && m_vulkan->extensions().contains(QByteArrayLiteral("VK_KHR_get_physical_device_properties2")))
        enabled.push_back("VK_KHR_portability_subset");

    const float priority = 0;
    VkDeviceQueueCreateInfo queues[2] {};
    for (VkDeviceQueueCreateInfo &q : queues) {
        q.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
        q.queueCount = 1;
        q.pQueuePriorities = &priority;
    }
    queues[0].queueFamilyIndex = uint32_t(gfx);
    queues[1].queueFamilyIndex = uint32_t(std::max(transfer, 0));
    // Every supported core feature but robustness, which costs speed: as QRhi enables them.
    VkPhysicalDeviceFeatures features;
    f->vkGetPhysicalDeviceFeatures(physDev, &features);
    features.robustBufferAccess = VK_FALSE;
    VkDeviceCreateInfo info {};
    info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    info.queueCreateInfoCount = transfer >= 0 ? 2 : 1;
    info.pQueueCreateInfos = queues;
    info.enabledExtensionCount = uint32_t(enabled.size());
    info.ppEnabledExtensionNames = enabled.data();
    info.pEnabledFeatures = &features;
    VkDevice dev = VK_NULL_HANDLE;
    const VkResult r = f->vkCreateDevice(physDev, &info, nullptr, &dev);
    if (r != VK_SUCCESS) {
        *error = QStringLiteral("no Vulkan device could be created (VkResult %1).").arg(int(r));
        return false;
    }
    m_ownedDevice = dev;
    m_transferFamily = transfer;
    QVulkanDeviceFunctions *df = m_vulkan->deviceFunctions(dev);
    if (transfer >= 0)
        df->vkGetDeviceQueue(dev, uint32_t(transfer), 0, &m_transferQueue);
    import->physDev = physDev;
    import->dev = dev;
    import->gfxQueueFamilyIdx = gfx;
    import->gfxQueueIdx = 0;
    return true;
}
#endif

bool RhiDevice::createOpenGL(const RhiDeviceOptions &options, QString *error)
{
    QPlatformIntegration *platform = QGuiApplicationPrivate::platformIntegration();
    if (!platform || !platform->hasCapability(QPlatformIntegration::OpenGL)) {
        *error = QStringLiteral("the Qt platform \"%1\" offers no OpenGL. OpenGL needs a display: run under an X "
                                "server (xvfb-run on a server), or use Vulkan.")
                     .arg(QGuiApplication::platformName());
        return false;
    }

    // Compute shaders need OpenGL 4.3.
    QSurfaceFormat format = QSurfaceFormat::defaultFormat();
    format.setVersion(4, 3);
    format.setProfile(QSurfaceFormat::CoreProfile);

    QOffscreenSurface *surface = options.fallbackSurface;
    if (!surface) {
        if (QThread::currentThread() != QCoreApplication::instance()->thread()) {
            *error = QStringLiteral("an OpenGL device made off the GUI thread needs a QOffscreenSurface created on "
                                    "the GUI thread (RhiDeviceOptions::fallbackSurface).");
            return false;
        }
        m_ownedSurface.reset(QRhiGles2InitParams::newFallbackSurface(format));
        surface = m_ownedSurface.get();
    }

    QRhiGles2InitParams params;
    params.format = format;
    params.fallbackSurface = surface;
    m_rhi.reset(QRhi::create(QRhi::OpenGLES2, &params));
    if (!m_rhi) {
        *error = QStringLiteral("no OpenGL 4.3 context could be created on the Qt platform \"%1\" (OpenGL needs a "
                                "display).")
                     .arg(QGuiApplication::platformName());
        return false;
    }
    m_info.backend = GpuBackend::OpenGL;
    return true;
}

bool RhiDevice::checkCompute(QString *error)
{
    const QString device = QString::fromUtf8(m_rhi->driverInfo().deviceName);
    if (!m_rhi->isFeatureSupported(QRhi::Compute)) {
        *error = QStringLiteral("%1 has no compute shaders%2.")
                     .arg(device,
                          m_info.backend == GpuBackend::OpenGL ? QStringLiteral(" (OpenGL 4.3 or later needed)")
                                                               : QString());
        return false;
    }
    if (!m_rhi->isFeatureSupported(QRhi::ReadBackNonUniformBuffer)) {
        *error = QStringLiteral("%1 cannot read storage buffers back.").arg(device);
        return false;
    }
    return true;
}

void RhiDevice::readInfo()
{
    const QRhiDriverInfo driver = m_rhi->driverInfo();
    m_info.available = true;
    m_info.error.clear();
    m_info.deviceName = QString::fromUtf8(driver.deviceName);
    m_info.deviceType = deviceTypeName(driver.deviceType);
    m_info.vendorId = driver.vendorId;
    m_info.deviceId = driver.deviceId;
    m_info.uploads = QStringLiteral("staged by QRhi");
#if QT_CONFIG(vulkan)
    if (m_info.backend == GpuBackend::Vulkan) {
        m_info.uploads = m_hostMemoryImport ? QStringLiteral("copied from where they were read")
                                            : QStringLiteral("staged in a buffer of ours");
        if (m_hostMemoryImport)
            m_info.uploads += m_transferQueue ? QStringLiteral("; the next batch on a transfer queue, beside the scan")
                                              : QStringLiteral("; the next batch queued ahead on the compute queue");
    }
#endif

    GpuLimits &limits = m_info.limits;
    limits.maxWorkgroupSizeX = m_rhi->resourceLimit(QRhi::MaxThreadGroupX);
    limits.maxWorkgroupSizeY = m_rhi->resourceLimit(QRhi::MaxThreadGroupY);
    limits.maxWorkgroupSizeZ = m_rhi->resourceLimit(QRhi::MaxThreadGroupZ);
    limits.maxWorkgroupInvocations = m_rhi->resourceLimit(QRhi::MaxThreadsPerThreadGroup);
    limits.maxWorkgroupsPerDimension = m_rhi->resourceLimit(QRhi::MaxThreadGroupsPerDimension);
    limits.maxWorkgroupsX = limits.maxWorkgroupsPerDimension;
    limits.maxBufferBytes = INT_MAX;

#if QT_CONFIG(vulkan)
    if (m_info.backend == GpuBackend::Vulkan) {
        const auto *handles = static_cast<const QRhiVulkanNativeHandles *>(m_rhi->nativeHandles());
        QVulkanFunctions *f = m_vulkan->functions();
        VkPhysicalDeviceProperties props;
        f->vkGetPhysicalDeviceProperties(handles->physDev, &props);
        limits.maxStorageBufferRange = props.limits.maxStorageBufferRange;
        limits.maxWorkgroupsX = props.limits.maxComputeWorkGroupCount[0];
        limits.maxSharedMemoryBytes = props.limits.maxComputeSharedMemorySize;
        limits.timestampPeriodNs = props.limits.timestampPeriod;

        uint32_t familyCount = 0;
        f->vkGetPhysicalDeviceQueueFamilyProperties(handles->physDev, &familyCount, nullptr);
        std::vector<VkQueueFamilyProperties> families(familyCount);
        f->vkGetPhysicalDeviceQueueFamilyProperties(handles->physDev, &familyCount, families.data());
        const int family = handles->gfxQueueFamilyIdx;
        limits.timestamps = family >= 0 && uint32_t(family) < familyCount && families[family].timestampValidBits > 0
            && props.limits.timestampPeriod > 0;

        m_info.driver = QStringLiteral("Vulkan %1, driver %2")
                            .arg(vulkanVersion(props.apiVersion),
                                 vulkanDriverVersion(props.vendorID, props.driverVersion));
        // The driver's own name and version ("Mesa 22.3.6"), where Vulkan 1.2 can tell.
        auto getProperties2 = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(
            m_vulkan->getInstanceProcAddr("vkGetPhysicalDeviceProperties2"));
        if (getProperties2 && m_vulkan->apiVersion() >= QVersionNumber(1, 1)
            && props.apiVersion >= VK_MAKE_VERSION(1, 2, 0)) {
            VkPhysicalDeviceDriverProperties driverProps = {};
            driverProps.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
            VkPhysicalDeviceProperties2 props2 = {};
            props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
            props2.pNext = &driverProps;
            getProperties2(handles->physDev, &props2);
            m_info.driver += QStringLiteral(" (%1 %2)").arg(QString::fromUtf8(driverProps.driverName),
                                                            QString::fromUtf8(driverProps.driverInfo));
        }
    }
#endif
    if (m_info.backend == GpuBackend::OpenGL && m_rhi->makeThreadLocalNativeContextCurrent()) {
        if (QOpenGLContext *context = QOpenGLContext::currentContext()) {
            QOpenGLExtraFunctions *gl = context->extraFunctions();
            GLint64 storage = 0;
            gl->glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &storage);
            GLint shared = 0;
            gl->glGetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, &shared);
            limits.maxStorageBufferRange = storage;
            limits.maxSharedMemoryBytes = shared;
            m_info.driver = QString::fromLatin1(reinterpret_cast<const char *>(gl->glGetString(GL_VERSION)));
        }
    }
}

QShader RhiDevice::loadShader(const QString &resourcePath, QString *error)
{
    QFile file(resourcePath);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QStringLiteral("shader %1: %2").arg(resourcePath, file.errorString());
        return QShader();
    }
    QShader shader = QShader::fromSerialized(file.readAll());
    if (!shader.isValid() && error)
        *error = QStringLiteral("shader %1 is not a valid .qsb file").arg(resourcePath);
    return shader;
}

int RhiDevice::vulkanDeviceCount(QString *error)
{
    if (!isGuiApplication()) {
        if (error)
            *error = noGuiApplicationError();
        return -1;
    }
#if QT_CONFIG(vulkan)
    QVulkanInstance instance;
    if (!instance.create()) {
        if (error)
            *error = QStringLiteral("no Vulkan instance on the Qt platform \"%1\"")
                         .arg(QGuiApplication::platformName());
        return -1;
    }
    uint32_t count = 0;
    instance.functions()->vkEnumeratePhysicalDevices(instance.vkInstance(), &count, nullptr);
    return int(count);
#else
    if (error)
        *error = QStringLiteral("this Qt was built without Vulkan");
    return -1;
#endif
}

std::vector<int> RhiDevice::hardwareVulkanDevices(QString *error)
{
    std::vector<int> out;
    if (!isGuiApplication()) {
        if (error)
            *error = noGuiApplicationError();
        return out;
    }
#if QT_CONFIG(vulkan)
    QVulkanInstance instance;
    if (!instance.create()) {
        if (error)
            *error = QStringLiteral("no Vulkan instance on the Qt platform \"%1\"").arg(QGuiApplication::platformName());
        return out;
    }
    QVulkanFunctions *f = instance.functions();
    uint32_t count = 0;
    f->vkEnumeratePhysicalDevices(instance.vkInstance(), &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    f->vkEnumeratePhysicalDevices(instance.vkInstance(), &count, devices.data());
    for (uint32_t i = 0; i < count; ++i) {
        VkPhysicalDeviceProperties props {};
        f->vkGetPhysicalDeviceProperties(devices[i], &props);
        if (props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU)
            out.push_back(int(i));
    }
#else
    if (error)
        *error = QStringLiteral("this Qt was built without Vulkan");
#endif
    return out;
}

QList<GpuDeviceInfo> RhiDevice::enumerate(bool runSelfTest, bool validation)
{
    // One entry per Vulkan physical device (or one saying why there is none), then OpenGL.
    QList<RhiDeviceOptions> attempts;
    const int vulkanDevices = vulkanDeviceCount();
    for (int i = 0; i < std::max(vulkanDevices, 1); ++i) {
        RhiDeviceOptions options;
        options.backend = GpuBackend::Vulkan;
        options.validation = validation;
        options.vulkanDeviceIndex = vulkanDevices > 1 ? i : -1;
        attempts.append(options);
    }
    RhiDeviceOptions openGL;
    openGL.backend = GpuBackend::OpenGL;
    attempts.append(openGL);

    QList<GpuDeviceInfo> result;
    for (const RhiDeviceOptions &options : std::as_const(attempts)) {
        QString error;
        std::unique_ptr<RhiDevice> device = create(options, &error);
        if (!device) {
            GpuDeviceInfo info;
            info.backend = options.backend;
            info.vulkanDeviceIndex = options.vulkanDeviceIndex;
            info.qtPlatform = isGuiApplication() ? QGuiApplication::platformName() : QString();
            info.error = error;
            result.append(info);
            continue;
        }
        GpuDeviceInfo info = device->info();
        if (runSelfTest) {
            const SmokeTestResult smoke = runSmokeTest(*device);
            info.selfTestRun = true;
            info.selfTestPassed = smoke.passed;
            info.selfTestError = smoke.error;
            info.selfTestGpuMs = smoke.gpuMs;
        }
        result.append(info);
    }
    return result;
}

QOffscreenSurface *RhiDevice::createFallbackSurface()
{
    QSurfaceFormat format = QSurfaceFormat::defaultFormat();
    format.setVersion(4, 3);
    format.setProfile(QSurfaceFormat::CoreProfile);
    return QRhiGles2InitParams::newFallbackSurface(format);
}

int RhiDevice::validationMessageCount()
{
    ValidationLog &log = validationLog();
    QMutexLocker locker(&log.mutex);
    return int(log.messages.size());
}

QStringList RhiDevice::validationMessages()
{
    ValidationLog &log = validationLog();
    QMutexLocker locker(&log.mutex);
    return log.messages;
}

void RhiDevice::clearValidationMessages()
{
    ValidationLog &log = validationLog();
    QMutexLocker locker(&log.mutex);
    log.messages.clear();
}

} // namespace Hitscope
