// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QList>
#include <QMetaType>
#include <QString>

namespace Hitscope {

/// The QRhi backend of a RhiDevice. Auto tries Vulkan, then OpenGL. Null is always refused: it claims compute
/// and dispatches nothing.
enum class GpuBackend { Auto, Vulkan, OpenGL, Null };

/// "auto", "vulkan", "opengl", "null" (the spelling parseGpuBackend() accepts).
QString gpuBackendKey(GpuBackend backend);
/// "Vulkan", "OpenGL", ... for people.
QString gpuBackendName(GpuBackend backend);
/// Case-insensitive inverse of gpuBackendKey(); false for an unknown name.
bool parseGpuBackend(const QString &text, GpuBackend *backend);

/// What a device allows a compute dispatch; 0 means unknown.
struct GpuLimits
{
    int maxWorkgroupSizeX = 0;
    int maxWorkgroupSizeY = 0;
    int maxWorkgroupSizeZ = 0;
    int maxWorkgroupInvocations = 0;    ///< invocations in one workgroup (x * y * z)
    int maxWorkgroupsPerDimension = 0;  ///< workgroups per dispatch in every dimension (QRhi: the least of x, y, z)
    int64_t maxWorkgroupsX = 0;         ///< workgroups per dispatch in x (Vulkan: 2^31 - 1 on NVIDIA)
    int64_t maxStorageBufferRange = 0;  ///< bytes one storage buffer binding may span
    int64_t maxSharedMemoryBytes = 0;   ///< shared (workgroup) memory per workgroup
    int64_t maxBufferBytes = 0;         ///< one QRhiBuffer: sizes are int, so below 2 GiB
    bool timestamps = false;            ///< GpuTimer works (Vulkan with timestamp support)
    double timestampPeriodNs = 0;       ///< nanoseconds per timestamp tick
};

/// One line of `hitscope-cli devices`: a backend that could be created, or why it could not.
struct GpuDeviceInfo
{
    GpuBackend backend = GpuBackend::Auto;
    int vulkanDeviceIndex = -1; ///< Vulkan: index among the physical devices (RhiDeviceOptions::vulkanDeviceIndex)
    bool available = false;  ///< a compute-capable device was created
    QString error;           ///< why not, for people (empty when available)
    QString qtPlatform;      ///< the Qt platform plugin in use ("hitscopeheadless", "xcb", ...)
    QString deviceName;      ///< "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)"
    QString deviceType;      ///< "discrete", "integrated", "virtual", "cpu", "external" or "unknown"
    uint64_t vendorId = 0;
    uint64_t deviceId = 0;
    QString driver;          ///< Vulkan: API and driver versions; OpenGL: GL_VERSION
    bool validation = false; ///< Vulkan: the Khronos validation layer is enabled
    /// How batches reach the GPU, for people: copied from the memory they were read into or staged, and whether
    /// a transfer queue copies the next batch beside the scan.
    QString uploads;
    GpuLimits limits;

    bool selfTestRun = false;    ///< enumerate() ran the smoke compute shader
    bool selfTestPassed = false;
    QString selfTestError;
    double selfTestGpuMs = 0;    ///< 0 when timestamps are not supported
};

} // namespace Hitscope

Q_DECLARE_METATYPE(Hitscope::GpuDeviceInfo)
