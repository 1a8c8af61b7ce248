// SPDX-License-Identifier: GPL-3.0-or-later
#include "batchreadback.h"

#include <algorithm>

#include "engine/batchtelemetry.h"
#include "gpu/batchplan.h"
#include "gpu/rhidevice.h"
#include "gpu/rhiframe.h"
#include "gpu/scanlayout.h"

namespace Hitscope {

BatchReadback::Outcome BatchReadback::read(RhiDevice &device, QRhiBuffer *hits, QRhiBuffer *itemState,
                                           const BatchPlan &plan, uint32_t attempts, bool rescanned,
                                           BatchTelemetry &t, QString *error)
{
    QRhi *rhi = device.rhi();
    m_reads.clear();
    auto addRead = [&](QRhiResourceUpdateBatch *u, QRhiBuffer *b, int64_t offset, int64_t bytes) {
        m_reads.push_back(std::make_unique<QRhiBufferReadbackResult>());
        u->readBackBuffer(b, int(offset), int(bytes), m_reads.back().get());
    };
    {
        RhiFrame frame(rhi);
        if (!frame.isActive()) {
            *error = QStringLiteral("cannot begin a GPU frame");
            return Outcome::DeviceFailed;
        }
        QRhiResourceUpdateBatch *u = rhi->nextResourceUpdateBatch();
        addRead(u, hits, 0, std::max<int64_t>(16, int64_t(attempts) * ScanLayout::kHitWords * 4));
        addRead(u, itemState, int64_t(plan.unboundedBase + plan.unboundedItems * 2) * 4,
                rescanned ? int64_t(plan.unboundedItems) * 4 : 4);
        for (const auto &[file, seg] : plan.carriedOut)
            for (uint64_t u2 = 0; u2 < plan.numUnbounded; ++u2)
                addRead(u, itemState,
                        int64_t(plan.unboundedBase + plan.unboundedItems + u2 * plan.numSegments + seg) * 4, 4);
        frame.commandBuffer()->resourceUpdate(u);
        if (frame.end() != QRhi::FrameOpSuccess) {
            *error = QStringLiteral("the GPU device failed (frame result %1)").arg(int(frame.result()));
            return Outcome::DeviceFailed;
        }
    }
    const auto pending = [](const auto &r) { return r->data.isEmpty(); };
    if (std::any_of(m_reads.begin(), m_reads.end(), pending)) {
        RhiFrame frame(rhi); // OpenGL may complete read-backs at the next frame
    }
    if (std::any_of(m_reads.begin(), m_reads.end(), pending)) {
        *error = QStringLiteral("the GPU read-back did not complete");
        return Outcome::Incomplete;
    }
    for (const auto &r : m_reads)
        t.bytesReadBack += r->data.size();
    return Outcome::Done;
}

} // namespace Hitscope
