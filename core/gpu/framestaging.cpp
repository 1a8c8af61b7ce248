// SPDX-License-Identifier: GPL-3.0-or-later
#include "framestaging.h"

#include <algorithm>
#include <cstring>

#include "engine/batchtelemetry.h"
#include "engine/filebatch.h"
#include "gpu/gpubatchprofile.h"
#include "gpu/gputimer.h"
#include "gpu/scanlayout.h"
#include "util/elapsed.h"
#include "util/parallel.h"

namespace Hitscope {

namespace {
int64_t at256(int64_t v)
{
    return (v + 255) & ~int64_t(255);
}

// Spreads a large copy over a few threads: one thread's memcpy is slower than reading the files was.
void parallelCopy(uint8_t *dst, const uint8_t *src, int64_t bytes, int maxThreads)
{
    const int threads = bytes < (int64_t(64) << 20) ? 1 : std::clamp(maxThreads, 1, 8);
    const int64_t part = ((bytes + threads - 1) / threads + 4095) & ~int64_t(4095);
    runWorkers(threads, [&](int t) {
        const int64_t begin = std::min(bytes, t * part);
        const int64_t end = std::min(bytes, begin + part);
        std::memcpy(dst + begin, src + begin, size_t(end - begin));
    });
}
} // namespace

FrameStaging::FrameStaging(RhiDevice &device)
    : m_device(device)
{
}

FrameStaging::~FrameStaging() = default;

void FrameStaging::stage(const Sources &from, const Targets &to, QRhiResourceUpdateBatch *updates, int threads,
                         BatchTelemetry &t, GpuBatchProfile &profile)
{
    m_copies.clear();
    const FileBatch &batch = from.batch;
    const int64_t hayBytes = ScanLayout::roundUp4(batch.used);
    const int64_t segBytes = int64_t(from.segmentWords.size()) * 4;
    const int64_t queueBytes = int64_t(from.queueInit.size()) * 4;
    const bool imported = from.withBatch && !from.resident && from.imported;
    const int64_t segAt = imported || from.resident ? 0 : at256(std::max<int64_t>(batch.capacity, hayBytes));
    const int64_t queueAt = segAt + at256(segBytes);
    const int64_t paramsAt = queueAt + at256(queueBytes);
    const int64_t stagingBytes = paramsAt + from.params.size();
    if (!m_staging || m_staging->size() < stagingBytes) {
        const auto a0 = Clock::now();
        m_staging = VulkanStaging::create(m_device, stagingBytes + stagingBytes / 4);
        profile.setupMs += msSince(a0);
    }
    if (m_staging) {
        uint8_t *base = m_staging->data();
        if (from.withBatch) {
            if (!imported && !from.resident) {
                const auto c0 = Clock::now();
                parallelCopy(base, batch.haystack.get(), hayBytes, threads);
                profile.stagingMs += msSince(c0);
                t.bytesStaged += hayBytes;
            }
            std::memcpy(base + segAt, from.segmentWords.data(), size_t(segBytes));
            if (!from.resident)
                m_copies.push_back({ 0, to.haystack, hayBytes, imported ? from.imported : nullptr });
            m_copies.push_back({ segAt, to.segments, segBytes });
        }
        std::memcpy(base + queueAt, from.queueInit.data(), size_t(queueBytes));
        std::memcpy(base + paramsAt, from.params.constData(), size_t(from.params.size()));
        m_copies.push_back({ queueAt, to.queue, queueBytes });
        m_copies.push_back({ paramsAt, to.params, from.params.size() });
    } else {
        if (from.withBatch) {
            if (!from.resident)
                updates->uploadStaticBuffer(to.haystack, 0, int(hayBytes), batch.haystack.get());
            updates->uploadStaticBuffer(to.segments, 0, int(segBytes), from.segmentWords.data());
        }
        updates->uploadStaticBuffer(to.queue, 0, int(queueBytes), from.queueInit.data());
        updates->uploadStaticBuffer(to.params, 0, from.params.size(), from.params.constData());
    }
    if (from.withBatch)
        t.bytesUploadedData += hayBytes + segBytes;
    t.bytesUploadedData += queueBytes + from.params.size();
}

bool FrameStaging::record(QRhiCommandBuffer *cb, GpuTimer *timer)
{
    if (m_copies.empty())
        return false;
    if (timer)
        timer->begin(cb);
    m_staging->recordCopies(cb, m_copies);
    if (timer)
        timer->end(cb);
    return true;
}

} // namespace Hitscope
