// SPDX-License-Identifier: GPL-3.0-or-later
// The GPU device layer on whatever Vulkan the machine has (lavapipe in CI), with the Khronos validation layer on:
// any validation message fails the test that caused it.
#include <memory>

#include <QGuiApplication>
#include <QThread>
#include <QTest>
#include <QVulkanFunctions>
#include <QVulkanInstance>

#include "gpu/gputimer.h"
#include "gpu/headlessplatform.h"
#include "gpu/rhidevice.h"
#include "gpu/rhiframe.h"
#include "gpu/smoketest.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

std::unique_ptr<RhiDevice> createVulkan(bool validation, QString *error)
{
    RhiDeviceOptions options;
    options.backend = GpuBackend::Vulkan;
    options.validation = validation;
    return RhiDevice::create(options, error);
}

/// Restores an environment variable on destruction.
class EnvGuard
{
public:
    explicit EnvGuard(const char *name)
        : m_name(name)
        , m_set(qEnvironmentVariableIsSet(name))
        , m_value(qgetenv(name))
    {
    }
    ~EnvGuard()
    {
        if (m_set)
            qputenv(m_name, m_value);
        else
            qunsetenv(m_name);
    }

private:
    const char *m_name;
    bool m_set;
    QByteArray m_value;
};

} // namespace

class TestRhiDevice : public QObject
{
    Q_OBJECT

public:
    /// Runs before QTEST_MAIN constructs the QGuiApplication: without a display, use the headless platform.
    static void initMain() { useHeadlessPlatformIfNeeded(); }

private Q_SLOTS:
    void initTestCase()
    {
        QString error;
        if (!createVulkan(false, &error))
            HITSCOPE_SKIP_WITHOUT_GPU(qPrintable(QStringLiteral("no Vulkan compute device: ") + error));
        RhiDevice::clearValidationMessages();
    }

    void init() { RhiDevice::clearValidationMessages(); }

    void cleanup()
    {
        const QStringList messages = RhiDevice::validationMessages();
        QVERIFY2(messages.isEmpty(), qPrintable(messages.join(QLatin1Char('\n'))));
    }

    void vulkanComputesWithValidation()
    {
        QString error;
        std::unique_ptr<RhiDevice> device = createVulkan(true, &error);
        QVERIFY2(device, qPrintable(error));
        QVERIFY(error.isEmpty());
        QCOMPARE(device->backend(), GpuBackend::Vulkan);
        QCOMPARE(device->rhi()->backend(), QRhi::Vulkan);
        QCOMPARE(device->backendName(), QStringLiteral("Vulkan"));
        QVERIFY(!device->deviceName().isEmpty());
        QVERIFY(device->info().validation);
        QVERIFY(device->vulkanInstance()->layers().contains("VK_LAYER_KHRONOS_validation"));
        QVERIFY(device->info().driver.startsWith(QLatin1String("Vulkan ")));
        QCOMPARE(device->thread(), QThread::currentThread());

        const GpuLimits &limits = device->limits();
        QVERIFY(limits.maxWorkgroupSizeX >= 64);
        QVERIFY(limits.maxWorkgroupInvocations >= 64);
        QVERIFY(limits.maxWorkgroupsPerDimension >= 65535);
        QVERIFY(limits.maxWorkgroupsX >= limits.maxWorkgroupsPerDimension);
        QVERIFY(limits.maxStorageBufferRange >= (1 << 27));
        QVERIFY(limits.maxSharedMemoryBytes >= 16384);
        qInfo().noquote() << "device:" << device->deviceName() << "|" << device->info().deviceType << "|"
                          << device->info().driver << "| platform" << device->info().qtPlatform;
        qInfo() << "limits: workgroup" << limits.maxWorkgroupSizeX << limits.maxWorkgroupSizeY
                << limits.maxWorkgroupSizeZ << "invocations" << limits.maxWorkgroupInvocations << "groups/dim"
                << limits.maxWorkgroupsPerDimension << "groups x" << limits.maxWorkgroupsX << "storage range"
                << limits.maxStorageBufferRange << "shared" << limits.maxSharedMemoryBytes << "timestamps"
                << limits.timestamps << limits.timestampPeriodNs << "ns";

        const SmokeTestResult smoke = runSmokeTest(*device);
        QVERIFY2(smoke.passed, qPrintable(smoke.error));
        QCOMPARE(smoke.values, 4096);
        if (limits.timestamps)
            QVERIFY(smoke.gpuMs > 0);
        qInfo() << "smoke dispatch:" << smoke.gpuMs << "ms of GPU time";
        device.reset(); // teardown messages count too (checked in cleanup())
    }

    void smokeSizes_data()
    {
        QTest::addColumn<int>("count");
        QTest::newRow("one value, one partial workgroup") << 1;
        QTest::newRow("one value short of a workgroup") << 63;
        QTest::newRow("exactly one workgroup") << 64;
        QTest::newRow("one value into a second workgroup") << 65;
        QTest::newRow("a million values, 4 MiB") << (1 << 20);
    }

    void smokeSizes()
    {
        QFETCH(int, count);
        QString error;
        std::unique_ptr<RhiDevice> device = createVulkan(true, &error);
        QVERIFY2(device, qPrintable(error));
        const SmokeTestResult smoke = runSmokeTest(*device, count);
        QVERIFY2(smoke.passed, qPrintable(smoke.error));
        QCOMPARE(smoke.values, count);
    }

    void timerAroundWholeFrame()
    {
        QString error;
        std::unique_ptr<RhiDevice> device = createVulkan(true, &error);
        QVERIFY2(device, qPrintable(error));
        GpuTimer timer(*device);
        QCOMPARE(timer.isSupported(), device->limits().timestamps);
        QCOMPARE(timer.elapsedMs(), 0.0); // nothing recorded yet
        for (int frameIndex = 0; frameIndex < 3; ++frameIndex) {
            RhiFrame frame(device->rhi());
            QVERIFY(frame.isActive());
            timer.begin(frame.commandBuffer()); // outside any pass
            QRhiResourceUpdateBatch *batch = device->rhi()->nextResourceUpdateBatch();
            std::unique_ptr<QRhiBuffer> buffer(
                device->rhi()->newBuffer(QRhiBuffer::Immutable, QRhiBuffer::StorageBuffer, 1 << 20));
            QVERIFY(buffer->create());
            const QByteArray zeros(1 << 20, '\0');
            batch->uploadStaticBuffer(buffer.get(), zeros.constData());
            frame.commandBuffer()->resourceUpdate(batch);
            timer.end(frame.commandBuffer());
            QCOMPARE(frame.end(), QRhi::FrameOpSuccess);
            if (timer.isSupported())
                QVERIFY(timer.elapsedMs() > 0);
        }
    }

    void validationMessagesAreCounted()
    {
        QString error;
        std::unique_ptr<RhiDevice> device = createVulkan(true, &error);
        QVERIFY2(device, qPrintable(error));
        const auto *handles = static_cast<const QRhiVulkanNativeHandles *>(device->rhi()->nativeHandles());
        QVulkanDeviceFunctions *df = device->vulkanInstance()->deviceFunctions(handles->dev);
        // A query pool of zero queries breaks a valid-usage rule (VUID-VkQueryPoolCreateInfo-queryCount-02763).
        VkQueryPoolCreateInfo info = {};
        info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        info.queryCount = 0;
        VkQueryPool pool = VK_NULL_HANDLE;
        if (df->vkCreateQueryPool(handles->dev, &info, nullptr, &pool) == VK_SUCCESS && pool)
            df->vkDestroyQueryPool(handles->dev, pool, nullptr);
        QVERIFY(RhiDevice::validationMessageCount() >= 1);
        QVERIFY(RhiDevice::validationMessages().join(QLatin1Char('\n')).contains(QLatin1String("queryCount")));
        RhiDevice::clearValidationMessages();
        QCOMPARE(RhiDevice::validationMessageCount(), 0);
    }

    void deviceOnAWorkerThread()
    {
        // The dispatcher's shape: one GPU thread creates, uses and destroys the device.
        bool created = false;
        bool ownedByWorker = false;
        SmokeTestResult smoke;
        QString vulkanError;
        QString openGLError;
        std::unique_ptr<QThread> worker(QThread::create([&] {
            std::unique_ptr<RhiDevice> device = createVulkan(true, &vulkanError);
            created = device != nullptr;
            if (device) { // no QTest macros off the test thread
                ownedByWorker = device->thread() == QThread::currentThread()
                    && device->thread() != QCoreApplication::instance()->thread();
                smoke = runSmokeTest(*device);
            }
            device.reset();
            RhiDeviceOptions options;
            options.backend = GpuBackend::OpenGL;
            std::unique_ptr<RhiDevice> openGL = RhiDevice::create(options, &openGLError);
            if (openGL) // only with a display and a fallback surface from this (GUI) thread
                openGLError = QStringLiteral("created without a fallback surface");
        }));
        worker->start();
        QVERIFY(worker->wait(60000));
        QVERIFY2(created, qPrintable(vulkanError));
        QVERIFY(ownedByWorker);
        QVERIFY2(smoke.passed, qPrintable(smoke.error));
        QVERIFY2(openGLError.startsWith(QLatin1String("OpenGL: ")), qPrintable(openGLError));
        if (QGuiApplication::platformName() != headlessPlatformName())
            QVERIFY2(openGLError.contains(QLatin1String("GUI thread")), qPrintable(openGLError));
    }

    void autoPrefersVulkan()
    {
        QString error;
        std::unique_ptr<RhiDevice> device = RhiDevice::create(RhiDeviceOptions(), &error);
        QVERIFY2(device, qPrintable(error));
        QCOMPARE(device->backend(), GpuBackend::Vulkan);
    }

    void openGLWithoutDisplayIsAClearError()
    {
        RhiDeviceOptions options;
        options.backend = GpuBackend::OpenGL;
        QString error;
        std::unique_ptr<RhiDevice> device = RhiDevice::create(options, &error);
        if (QGuiApplication::platformName() != headlessPlatformName()) {
            // A display (xcb under Xvfb, say): OpenGL may well work, and must then really compute.
            if (device) {
                qInfo().noquote() << "OpenGL:" << device->deviceName() << device->info().driver << "storage range"
                                  << device->limits().maxStorageBufferRange;
                QCOMPARE(device->backend(), GpuBackend::OpenGL);
                const SmokeTestResult smoke = runSmokeTest(*device);
                QVERIFY2(smoke.passed, qPrintable(smoke.error));
            } else {
                QVERIFY(error.startsWith(QLatin1String("OpenGL: ")));
            }
            return;
        }
        qInfo().noquote() << error;
        QVERIFY(!device);
        QVERIFY2(error.startsWith(QLatin1String("OpenGL: ")), qPrintable(error));
        QVERIFY2(error.contains(QLatin1String("display")), qPrintable(error));
        QVERIFY2(error.contains(headlessPlatformName()), qPrintable(error));
    }

    void nullIsRefused()
    {
        RhiDeviceOptions options;
        options.backend = GpuBackend::Null;
        QString error;
        QVERIFY(!RhiDevice::create(options, &error));
        QVERIFY2(error.contains(QLatin1String("Null")), qPrintable(error));
        QVERIFY2(error.contains(QLatin1String("dispatches nothing")), qPrintable(error));
    }

    void enumerateListsEveryBackend()
    {
        const QList<GpuDeviceInfo> devices = RhiDevice::enumerate(true, true);
        const int vulkanDevices = RhiDevice::vulkanDeviceCount();
        QVERIFY(vulkanDevices >= 1);
        QCOMPARE(devices.size(), vulkanDevices + 1);
        for (int i = 0; i < vulkanDevices; ++i) {
            const GpuDeviceInfo &info = devices[i];
            QCOMPARE(info.backend, GpuBackend::Vulkan);
            QCOMPARE(info.vulkanDeviceIndex, vulkanDevices > 1 ? i : -1);
            QVERIFY2(info.available, qPrintable(info.error));
            QVERIFY(info.validation);
            QVERIFY(info.selfTestRun);
            QVERIFY2(info.selfTestPassed, qPrintable(info.selfTestError));
            QCOMPARE(info.qtPlatform, QGuiApplication::platformName());
            // Mesa's lavapipe imports host memory and has one queue family (no transfer-only queue).
            if (info.deviceName.contains(QLatin1String("llvmpipe"))
                && !qEnvironmentVariableIsSet("HITSCOPE_GPU_NO_HOST_IMPORT"))
                QCOMPARE(info.uploads, QStringLiteral("copied from where they were read; the next batch queued ahead "
                                                      "on the compute queue"));
            else
                QVERIFY(!info.uploads.isEmpty());
        }
        QCOMPARE(devices.last().backend, GpuBackend::OpenGL);
        QVERIFY(devices.last().available || !devices.last().error.isEmpty());
    }

    void vulkanDeviceByIndex()
    {
        const int count = RhiDevice::vulkanDeviceCount();
        QVERIFY(count >= 1);
        RhiDeviceOptions options;
        options.backend = GpuBackend::Vulkan;
        options.validation = true;
        QString error;
        for (int i = 0; i < count; ++i) {
            options.vulkanDeviceIndex = i;
            std::unique_ptr<RhiDevice> device = RhiDevice::create(options, &error);
            QVERIFY2(device, qPrintable(error));
            QCOMPARE(device->info().vulkanDeviceIndex, i);
        }
        options.vulkanDeviceIndex = count;
        QVERIFY(!RhiDevice::create(options, &error));
        QVERIFY2(error.contains(QStringLiteral("no Vulkan device %1").arg(count)), qPrintable(error));
    }

    void missingShaderNamesThePath()
    {
        QString error;
        const QShader shader = RhiDevice::loadShader(QStringLiteral(":/shaders/absent.comp.qsb"), &error);
        QVERIFY(!shader.isValid());
        QVERIFY2(error.contains(QLatin1String(":/shaders/absent.comp.qsb")), qPrintable(error));
    }

    void backendNamesRoundTrip()
    {
        for (GpuBackend backend : { GpuBackend::Auto, GpuBackend::Vulkan, GpuBackend::OpenGL, GpuBackend::Null }) {
            GpuBackend parsed = GpuBackend::Auto;
            QVERIFY(parseGpuBackend(gpuBackendKey(backend).toUpper(), &parsed));
            QCOMPARE(parsed, backend);
        }
        GpuBackend parsed = GpuBackend::Vulkan;
        QVERIFY(!parseGpuBackend(QStringLiteral("metal"), &parsed));
        QCOMPARE(parsed, GpuBackend::Vulkan);
    }

    void headlessOnlyWithoutDisplayOrChoice()
    {
        EnvGuard platform("QT_QPA_PLATFORM");
        EnvGuard display("DISPLAY");
        EnvGuard wayland("WAYLAND_DISPLAY");
        qputenv("QT_QPA_PLATFORM", "xcb");
        qunsetenv("DISPLAY");
        qunsetenv("WAYLAND_DISPLAY");
        QVERIFY(!useHeadlessPlatformIfNeeded());
        QCOMPARE(qgetenv("QT_QPA_PLATFORM"), QByteArray("xcb"));
        qunsetenv("QT_QPA_PLATFORM");
        qputenv("DISPLAY", ":0");
        QVERIFY(!useHeadlessPlatformIfNeeded());
        QVERIFY(!qEnvironmentVariableIsSet("QT_QPA_PLATFORM"));
        qunsetenv("DISPLAY");
        QVERIFY(useHeadlessPlatformIfNeeded());
        QCOMPARE(qgetenv("QT_QPA_PLATFORM"), QByteArray("hitscopeheadless"));
    }
};

QTEST_MAIN(TestRhiDevice)
#include "tst_rhidevice.moc"
