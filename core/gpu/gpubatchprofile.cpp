// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpubatchprofile.h"

#include <QString>

#include "engine/batchtelemetry.h"
#include "util/logcategories.h"

namespace Hitscope {

void GpuBatchProfile::log(int batchIndex, uint64_t segments, uint64_t items, const BatchTelemetry &t, int64_t hits,
                          int64_t countedEnds, int64_t counts) const
{
    const QString copied = resident ? QStringLiteral("copied ahead (waited %1 ms)").arg(transferWaitMs, 0, 'f', 1)
                                    : QStringLiteral("copied in its frame");
    qCInfo(lcGpu).noquote() << QString::asprintf(
        "gpu batch %d: %llu segments, %llu items; %s; table %.1f ms, buffers, tables and pipeline %.1f ms, %d frames "
        "%.1f ms (staging copy %.1f ms, submit and wait %.1f ms: GPU copies %.1f ms, kernel %.1f ms), %d fix-up "
        "passes scanning %lld items again, read-back %.1f ms, %lld hits and %lld counted ends (%lld counts) %.1f ms",
        batchIndex, static_cast<unsigned long long>(segments), static_cast<unsigned long long>(items),
        qPrintable(copied), tableMs, setupMs, frames, framesMs, stagingMs, frameWaitMs, uploadMs, t.gpuMs,
        t.fixupPasses, static_cast<long long>(t.rescannedSegments), readMs, static_cast<long long>(hits),
        static_cast<long long>(countedEnds), static_cast<long long>(counts), decodeMs);
}

} // namespace Hitscope
