// SPDX-License-Identifier: GPL-3.0-or-later
// hitscope-cli-gpu.so: the CLI's GPU half (see gpusupport.h).
#include <cstdio>
#include <cstring>

#include <QGuiApplication>

#include "gpu/gpuengine.h"
#include "gpu/headlessplatform.h"
#include "gpu/rhidevice.h"
#include "gpusupport.h"
#include "session/devicepool.h"

using namespace Hitscope;

namespace {

int printDevices(const CliArgs &args)
{
    const QList<GpuDeviceInfo> devices = RhiDevice::enumerate(true, args.validation);
    bool any = false;
    for (const GpuDeviceInfo &d : devices) {
        if (!args.backend.isEmpty() && gpuBackendKey(d.backend) != args.backend)
            continue;
        if (!d.available) {
            std::printf("%s: not available: %s\n", qPrintable(gpuBackendName(d.backend)), qPrintable(d.error));
            continue;
        }
        any = true;
        std::printf("%s%s: %s (%s)\n", qPrintable(gpuBackendName(d.backend)),
                    d.vulkanDeviceIndex >= 0 ? qPrintable(QStringLiteral(" device %1").arg(d.vulkanDeviceIndex)) : "",
                    qPrintable(d.deviceName), qPrintable(d.deviceType));
        std::printf("  driver: %s\n  platform: %s\n", qPrintable(d.driver), qPrintable(d.qtPlatform));
        std::printf("  limits: workgroup size %d, invocations %d, workgroups per dispatch %lld, storage binding "
                    "%lld bytes, shared memory %lld bytes, timestamps %s\n",
                    d.limits.maxWorkgroupSizeX, d.limits.maxWorkgroupInvocations,
                    static_cast<long long>(d.limits.maxWorkgroupsX ? d.limits.maxWorkgroupsX
                                                                   : d.limits.maxWorkgroupsPerDimension),
                    static_cast<long long>(d.limits.maxStorageBufferRange),
                    static_cast<long long>(d.limits.maxSharedMemoryBytes), d.limits.timestamps ? "yes" : "no");
        std::printf("  batches: %s\n", qPrintable(d.uploads));
        if (d.selfTestRun)
            std::printf("  self-test: %s\n", d.selfTestPassed ? "passed" : qPrintable(d.selfTestError));
    }
    if (!any)
        std::printf("no GPU backend offers compute here: hitscope-cli scan uses the CPU engine (--engine auto)\n");
    return any ? 0 : 2;
}

class GpuModule final : public GpuSupport
{
public:
    std::unique_ptr<QCoreApplication> createApplication(int &argc, char **argv) override
    {
        return createGpuApplication(argc, argv);
    }

    std::unique_ptr<Engine> chooseEngine(const CliArgs &args, QString *notice, QString *error) override
    {
        RhiDeviceOptions options;
        if (!args.backend.isEmpty())
            parseGpuBackend(args.backend, &options.backend);
        options.validation = args.validation;
        return DevicePool::choose(args.devices, args.engine == Hitscope::EngineChoice::Gpu, options, notice, error);
    }

    int runDevicesCommand(const CliArgs &args) override { return printDevices(args); }
};

} // namespace

extern "C" Q_DECL_EXPORT GpuSupport *hitscopeCliGpuSupport(const char *build)
{
    static GpuModule module;
    return std::strcmp(build, kGpuSupportBuild) == 0 ? &module : nullptr;
}
