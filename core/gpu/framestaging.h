// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <QByteArray>

#include "gpu/rhi.h"
#include "gpu/vulkanstaging.h"

namespace Hitscope {

struct BatchTelemetry;
struct FileBatch;
struct GpuBatchProfile;
class GpuTimer;
class RhiDevice;
class VulkanHostBuffer;

/**
 * A frame's uploads: the haystack and the segment table (in a batch's first frame), the queue's first words and
 * the phases' parameters. Everything goes through a mapped staging buffer of our own where there is one (Vulkan):
 * QRhi would allocate pinned staging memory for each of these uploads, every batch. A haystack the device
 * imported is copied to the GPU from where it was read; one copied ahead is not uploaded at all.
 */
class FrameStaging
{
public:
    explicit FrameStaging(RhiDevice &device);
    ~FrameStaging();

    struct Sources
    {
        const FileBatch &batch;
        bool withBatch;  ///< the haystack and segment table too
        bool resident;   ///< the haystack is on the device already
        const VulkanHostBuffer *imported; ///< the haystack's import, or null
        const std::vector<uint32_t> &segmentWords;
        const std::vector<uint32_t> &queueInit;
        const QByteArray &params;
    };
    struct Targets
    {
        QRhiBuffer *haystack;
        QRhiBuffer *segments;
        QRhiBuffer *queue;
        QRhiBuffer *params;
    };
    /// Stages the frame's uploads, or queues them on `updates` where there is no staging buffer.
    void stage(const Sources &from, const Targets &to, QRhiResourceUpdateBatch *updates, int threads,
               BatchTelemetry &t, GpuBatchProfile &profile);
    /// Records the staged copies (outside any pass), timed by `timer` when given. Returns whether there were any.
    bool record(QRhiCommandBuffer *cb, GpuTimer *timer);

private:
    RhiDevice &m_device;
    std::unique_ptr<VulkanStaging> m_staging;
    std::vector<VulkanStaging::Copy> m_copies;
};

} // namespace Hitscope
