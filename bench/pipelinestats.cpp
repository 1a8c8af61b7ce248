// SPDX-License-Identifier: GPL-3.0-or-later
// hitscope-pipeline-stats: compiles the scan kernel the engine uses and prints what the driver reports about
// the compiled pipeline (registers, shared memory, ...), to tell whether occupancy limits the kernel.
// Raw Vulkan rather than QRhi: QRhi cannot pass VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QtGui/private/qshader_p.h>

namespace {

// Keep in step with HITSCOPE_WORKGROUP_SIZES in core/CMakeLists.txt.
const uint32_t offeredSizes[] = {32, 64, 128, 256, 512};

struct Failure
{
    std::string message;
};

void check(VkResult result, const char *call)
{
    if (result != VK_SUCCESS)
        throw Failure{std::string(call) + " failed: VkResult " + std::to_string(int(result))};
}

// Value-initialised with its sType: brace-initialising only sType trips -Wmissing-field-initializers.
template<typename T>
T vkStruct(VkStructureType type, void *next = nullptr)
{
    T s{};
    s.sType = type;
    s.pNext = next;
    return s;
}

// Vulkan's two-call idiom: ask for the count, then fill items that already carry their sType.
template<typename T, typename Call>
std::vector<T> enumerate(const char *name, Call call, const T &init = T{})
{
    uint32_t count = 0;
    check(call(&count, nullptr), name);
    std::vector<T> items(count, init);
    check(call(&count, items.data()), name);
    items.resize(count);
    return items;
}

struct Kernel
{
    std::string origin;
    std::vector<uint32_t> words;
    uint32_t localSize = 0; // x of the LocalSize execution mode; 0 when the module does not state it
};

// Read from the module itself, so the estimate for a --spirv variant uses the size it was compiled with.
uint32_t spirvLocalSizeX(const std::vector<uint32_t> &words)
{
    for (size_t i = 5, length = 0; i < words.size(); i += length) {
        length = words[i] >> 16;
        if (length == 0)
            break;
        const bool executionMode = (words[i] & 0xffffu) == 16;
        if (executionMode && length >= 6 && i + 3 < words.size() && words[i + 2] == 17 /* LocalSize */)
            return words[i + 3];
    }
    return 0;
}

Kernel makeKernel(const QString &origin, const QByteArray &bytes)
{
    if (bytes.size() % 4 != 0 || bytes.size() < 20)
        throw Failure{origin.toStdString() + ": not a SPIR-V module (size)"};
    Kernel kernel{origin.toStdString(), std::vector<uint32_t>(size_t(bytes.size()) / 4), 0};
    std::memcpy(kernel.words.data(), bytes.constData(), size_t(bytes.size()));
    if (kernel.words[0] != 0x07230203u)
        throw Failure{kernel.origin + ": not a SPIR-V module (magic number)"};
    kernel.localSize = spirvLocalSizeX(kernel.words);
    return kernel;
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw Failure{path.toStdString() + ": " + file.errorString().toStdString()};
    return file.readAll();
}

// `counting`: the kernel for tables with counted patterns (the engine picks it only then).
Kernel loadBaked(uint32_t workgroupSize, bool counting)
{
    const QString path
        = QStringLiteral(":/shaders/scan_wg%1%2.comp.qsb").arg(workgroupSize).arg(counting ? QString() : QStringLiteral("_nocount"));
    const QShader shader = QShader::fromSerialized(readFile(path));
    // The lowest SPIR-V version baked is the one QRhi's Vulkan backend picks (1.0 today).
    std::optional<QShaderKey> best;
    for (const QShaderKey &key : shader.availableShaders()) {
        if (key.source() == QShader::SpirvShader && key.sourceVariant() == QShader::StandardShader
            && (!best || key.sourceVersion().version() < best->sourceVersion().version()))
            best = key;
    }
    if (!best)
        throw Failure{path.toStdString() + ": no SPIR-V in the .qsb"};
    return makeKernel(path + QStringLiteral(" (SPIR-V %1)").arg(best->sourceVersion().version()),
                      shader.shader(*best).shader());
}

std::string statisticValue(const VkPipelineExecutableStatisticKHR &stat)
{
    switch (stat.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
        return stat.value.b32 ? "true" : "false";
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
        return std::to_string(stat.value.i64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
        return std::to_string(stat.value.u64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
        return std::to_string(stat.value.f64);
    default:
        return "?";
    }
}

// 2 for NVIDIA's "Register Count", 1 for another per-invocation register count, 0 for anything else (spills,
// Hopper's uniform registers, which are per warp).
int registerCountRank(const VkPipelineExecutableStatisticKHR &stat)
{
    const QString name = QString::fromUtf8(stat.name);
    if (stat.format != VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR
        && stat.format != VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR)
        return 0;
    if (name.compare(QLatin1String("Register Count"), Qt::CaseInsensitive) == 0)
        return 2;
    return name.contains(QLatin1String("register"), Qt::CaseInsensitive)
            && !name.contains(QLatin1String("spill"), Qt::CaseInsensitive)
            && !name.contains(QLatin1String("uniform"), Qt::CaseInsensitive)
        ? 1
        : 0;
}

// NVIDIA since Kepler: 64K 32-bit registers per SM, given to warps in blocks of 256 (8 per invocation), and
// only whole workgroups are resident. Shared memory and the workgroups-per-SM cap are left out on purpose.
void printEstimate(const char *statistic, uint64_t registers, uint32_t workgroupSize, uint32_t warpsPerSM)
{
    const uint64_t rounded = std::max<uint64_t>(8, (registers + 7) / 8 * 8);
    const uint64_t byRegisters = 65536 / (rounded * 32) * 32;
    const uint64_t byWarps = warpsPerSM ? uint64_t(warpsPerSM) * 32 : 2048;
    uint64_t resident = std::min(byRegisters, byWarps);
    if (workgroupSize)
        resident -= resident % workgroupSize;
    std::printf("  ESTIMATE from \"%s\" (64K registers per SM, in 8-register steps; whole workgroups; shared "
                "memory ignored):\n"
                "    %" PRIu64 " registers, %" PRIu64 " allocated: %" PRIu64 " invocations per SM by registers,"
                " ~%" PRIu64 " resident of %" PRIu64 " (%.0f%% occupancy)%s\n",
                statistic, registers, rounded, byRegisters, resident, byWarps,
                100.0 * double(resident) / double(byWarps), warpsPerSM ? "" : " [warps per SM unknown: 64 assumed]");
}

void printStatistics(VkDevice device, VkPipeline pipeline, const Kernel &kernel, uint32_t warpsPerSM)
{
    const auto getProperties = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
        vkGetDeviceProcAddr(device, "vkGetPipelineExecutablePropertiesKHR"));
    const auto getStatistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
        vkGetDeviceProcAddr(device, "vkGetPipelineExecutableStatisticsKHR"));
    if (!getProperties || !getStatistics)
        throw Failure{"vkGetDeviceProcAddr: no vkGetPipelineExecutable*KHR entry points"};
    auto pipelineRef = vkStruct<VkPipelineInfoKHR>(VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR);
    pipelineRef.pipeline = pipeline;
    const auto executables = enumerate(
        "vkGetPipelineExecutablePropertiesKHR",
        [&](uint32_t *n, VkPipelineExecutablePropertiesKHR *p) { return getProperties(device, &pipelineRef, n, p); },
        vkStruct<VkPipelineExecutablePropertiesKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR));
    for (uint32_t e = 0; e < executables.size(); ++e) {
        std::printf("  executable %u: %s (%s), subgroup size %u\n", e, executables[e].name, executables[e].description,
                    executables[e].subgroupSize);
        auto executableRef = vkStruct<VkPipelineExecutableInfoKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR);
        executableRef.pipeline = pipeline;
        executableRef.executableIndex = e;
        const auto stats = enumerate(
            "vkGetPipelineExecutableStatisticsKHR",
            [&](uint32_t *n, VkPipelineExecutableStatisticKHR *s) {
                return getStatistics(device, &executableRef, n, s);
            },
            vkStruct<VkPipelineExecutableStatisticKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR));
        const VkPipelineExecutableStatisticKHR *registers = nullptr;
        for (const VkPipelineExecutableStatisticKHR &stat : stats) {
            std::printf("    %s = %s  (%s)\n", stat.name, statisticValue(stat).c_str(), stat.description);
            if (registerCountRank(stat) > (registers ? registerCountRank(*registers) : 0))
                registers = &stat;
        }
        // A count is never negative, so an INT64 one has the same bits.
        if (registers)
            printEstimate(registers->name, registers->value.u64, kernel.localSize, warpsPerSM);
    }
}

int run(const std::vector<Kernel> &kernels, uint32_t deviceIndex)
{
    auto appInfo = vkStruct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
    appInfo.pApplicationName = "hitscope-pipeline-stats";
    appInfo.apiVersion = VK_API_VERSION_1_2; // for VkPhysicalDeviceDriverProperties; 1.1 devices still work
    auto instanceInfo = vkStruct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
    instanceInfo.pApplicationInfo = &appInfo;
    VkInstance instance = VK_NULL_HANDLE;
    check(vkCreateInstance(&instanceInfo, nullptr, &instance), "vkCreateInstance");
    const auto devices
        = enumerate<VkPhysicalDevice>("vkEnumeratePhysicalDevices", [&](uint32_t *n, VkPhysicalDevice *d) {
              return vkEnumeratePhysicalDevices(instance, n, d);
          });
    if (deviceIndex >= devices.size())
        throw Failure{"--device-index " + std::to_string(deviceIndex) + ": there are " + std::to_string(devices.size())
                      + " Vulkan device(s)"};
    const VkPhysicalDevice physical = devices[deviceIndex];
    const auto extensions = enumerate<VkExtensionProperties>(
        "vkEnumerateDeviceExtensionProperties", [&](uint32_t *n, VkExtensionProperties *e) {
            return vkEnumerateDeviceExtensionProperties(physical, nullptr, n, e);
        });
    const auto hasExtension = [&](const char *name) {
        return std::any_of(extensions.begin(), extensions.end(),
                           [name](const VkExtensionProperties &e) { return std::strcmp(e.extensionName, name) == 0; });
    };

    VkPhysicalDeviceProperties basic;
    vkGetPhysicalDeviceProperties(physical, &basic);
    const bool hasSM = hasExtension(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
    const bool hasDriverProps = basic.apiVersion >= VK_API_VERSION_1_2;
    void *chain = nullptr;
    auto sm = vkStruct<VkPhysicalDeviceShaderSMBuiltinsPropertiesNV>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV);
    if (hasSM)
        chain = &sm;
    auto driver
        = vkStruct<VkPhysicalDeviceDriverProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, chain);
    if (hasDriverProps)
        chain = &driver;
    auto props = vkStruct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, chain);
    vkGetPhysicalDeviceProperties2(physical, &props);
    const uint32_t v = basic.driverVersion;
    // NVIDIA packs its driver version as 10.8.8.6 bits; the others use the Vulkan version layout.
    const bool nvidia = basic.vendorID == 0x10de;
    std::printf("device %u: %s\n  driver version: %u.%u.%u (0x%08x)", deviceIndex, basic.deviceName,
                nvidia ? v >> 22 : VK_API_VERSION_MAJOR(v), nvidia ? (v >> 14) & 0xff : VK_API_VERSION_MINOR(v),
                nvidia ? (v >> 6) & 0xff : VK_API_VERSION_PATCH(v), v);
    if (hasDriverProps)
        std::printf(", %s %s", driver.driverName, driver.driverInfo);
    std::printf("\n");
    std::printf("  maxComputeSharedMemorySize: %u bytes\n  maxComputeWorkGroupInvocations: %u\n",
                basic.limits.maxComputeSharedMemorySize, basic.limits.maxComputeWorkGroupInvocations);
    if (hasSM)
        std::printf("  shaderSMCount: %u\n  shaderWarpsPerSM: %u\n", sm.shaderSMCount, sm.shaderWarpsPerSM);
    else
        std::printf("  VK_NV_shader_sm_builtins: not supported (no SM count)\n");

    auto execFeatures = vkStruct<VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR);
    auto features = vkStruct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &execFeatures);
    const bool hasExec = hasExtension(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    if (hasExec)
        vkGetPhysicalDeviceFeatures2(physical, &features);
    if (!hasExec || !execFeatures.pipelineExecutableInfo) {
        std::printf("VK_KHR_pipeline_executable_properties is not supported by %s: no pipeline statistics\n",
                    basic.deviceName);
        vkDestroyInstance(instance, nullptr);
        return 0;
    }

    // No work is ever submitted, so any queue family will do.
    const float priority = 1.0f;
    auto queueInfo = vkStruct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    queueInfo.queueCount = 1;
    queueInfo.pQueuePriorities = &priority;
    // Enable this one feature only: `features` was filled with everything the device offers.
    features.features = {};
    const char *enabled[] = {VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME};
    auto deviceInfo = vkStruct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features);
    deviceInfo.queueCreateInfoCount = 1;
    deviceInfo.pQueueCreateInfos = &queueInfo;
    deviceInfo.enabledExtensionCount = 1;
    deviceInfo.ppEnabledExtensionNames = enabled;
    VkDevice device = VK_NULL_HANDLE;
    check(vkCreateDevice(physical, &deviceInfo, nullptr, &device), "vkCreateDevice");

    // The scan kernel's interface (shaders/scan.comp): binding 0 the Params uniform block, 1..8 storage buffers.
    VkDescriptorSetLayoutBinding bindings[9];
    for (uint32_t b = 0; b < 9; ++b)
        bindings[b] = {b, b == 0 ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                       VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    auto setInfo = vkStruct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    setInfo.bindingCount = 9;
    setInfo.pBindings = bindings;
    VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
    check(vkCreateDescriptorSetLayout(device, &setInfo, nullptr, &setLayout), "vkCreateDescriptorSetLayout");
    auto layoutInfo = vkStruct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    layoutInfo.setLayoutCount = 1;
    layoutInfo.pSetLayouts = &setLayout;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    check(vkCreatePipelineLayout(device, &layoutInfo, nullptr, &layout), "vkCreatePipelineLayout");

    for (const Kernel &kernel : kernels) {
        std::printf("\n%s, workgroup size %u:\n", kernel.origin.c_str(), kernel.localSize);
        auto moduleInfo = vkStruct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
        moduleInfo.codeSize = kernel.words.size() * 4;
        moduleInfo.pCode = kernel.words.data();
        VkShaderModule module = VK_NULL_HANDLE;
        check(vkCreateShaderModule(device, &moduleInfo, nullptr, &module), "vkCreateShaderModule");
        auto pipelineInfo = vkStruct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
        pipelineInfo.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
        pipelineInfo.stage
            = vkStruct<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
        pipelineInfo.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        pipelineInfo.stage.module = module;
        pipelineInfo.stage.pName = "main";
        pipelineInfo.layout = layout;
        VkPipeline pipeline = VK_NULL_HANDLE;
        check(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipelineInfo, nullptr, &pipeline),
              "vkCreateComputePipelines");
        printStatistics(device, pipeline, kernel, hasSM ? sm.shaderWarpsPerSM : 0);
        vkDestroyPipeline(device, pipeline, nullptr);
        vkDestroyShaderModule(device, module, nullptr);
    }
    vkDestroyPipelineLayout(device, layout, nullptr);
    vkDestroyDescriptorSetLayout(device, setLayout, nullptr);
    vkDestroyDevice(device, nullptr);
    vkDestroyInstance(instance, nullptr);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Prints the driver's pipeline statistics for the scan kernel."));
    parser.addHelpOption();
    const QCommandLineOption sizeOption(QStringLiteral("workgroup-size"),
                                        QStringLiteral("Only the baked kernel of this size (default: all offered);"
                                                       " with --spirv, the size the estimate assumes."),
                                        QStringLiteral("N"));
    const QCommandLineOption spirvOption(QStringLiteral("spirv"),
                                         QStringLiteral("Load this SPIR-V file instead of the baked kernels."),
                                         QStringLiteral("FILE"));
    const QCommandLineOption deviceOption(QStringLiteral("device-index"),
                                          QStringLiteral("Vulkan physical device (default 0)."), QStringLiteral("N"));
    parser.addOptions({sizeOption, spirvOption, deviceOption});
    parser.process(app);

    bool deviceOk = true, sizeOk = true;
    const uint32_t deviceIndex = parser.isSet(deviceOption) ? parser.value(deviceOption).toUInt(&deviceOk) : 0;
    const uint32_t onlySize = parser.isSet(sizeOption) ? parser.value(sizeOption).toUInt(&sizeOk) : 0;
    const bool offered
        = std::find(std::begin(offeredSizes), std::end(offeredSizes), onlySize) != std::end(offeredSizes);
    if (!deviceOk || !sizeOk || (onlySize && !offered && !parser.isSet(spirvOption))) {
        std::fprintf(stderr, "hitscope-pipeline-stats: %s\n",
                     deviceOk ? "--workgroup-size must be one of 32, 64, 128, 256, 512 (any size with --spirv)"
                              : "--device-index must be a number");
        return 2;
    }

    try {
        std::vector<Kernel> kernels;
        if (parser.isSet(spirvOption)) {
            kernels.push_back(makeKernel(parser.value(spirvOption), readFile(parser.value(spirvOption))));
            if (onlySize)
                kernels.back().localSize = onlySize; // e.g. a module sized by LocalSizeId
        } else {
            for (uint32_t size : offeredSizes) {
                if (!onlySize || size == onlySize) {
                    kernels.push_back(loadBaked(size, true));
                    kernels.push_back(loadBaked(size, false));
                }
            }
        }
        for (const Kernel &kernel : kernels)
            std::printf("loaded %s: %zu bytes, local size %u\n", kernel.origin.c_str(), kernel.words.size() * 4,
                        kernel.localSize);
        return run(kernels, deviceIndex);
    } catch (const Failure &failure) {
        std::fprintf(stderr, "hitscope-pipeline-stats: %s\n", failure.message.c_str());
        return 1;
    }
}
