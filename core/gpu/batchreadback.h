// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <QString>

#include "gpu/rhi.h"

namespace Hitscope {

struct BatchPlan;
struct BatchTelemetry;
class RhiDevice;

/// The end of a batch on the GPU, in one frame: the hit ring's entries, the generation of every unbounded item
/// when some were scanned again, and the exit states carried to the next batch.
class BatchReadback
{
public:
    enum class Outcome { Done, Incomplete, DeviceFailed };
    Outcome read(RhiDevice &device, QRhiBuffer *hits, QRhiBuffer *itemState, const BatchPlan &plan,
                 uint32_t attempts, bool rescanned, BatchTelemetry &t, QString *error);

    const uint32_t *entries() const { return words(0); }
    const uint32_t *generations() const { return words(1); }
    /// The exit state of unbounded group `u` in the k-th of BatchPlan::carriedOut.
    uint32_t carried(size_t k, uint64_t u, uint64_t numUnbounded) const { return *words(2 + k * numUnbounded + u); }

private:
    const uint32_t *words(size_t i) const { return reinterpret_cast<const uint32_t *>(m_reads[i]->data.constData()); }

    std::vector<std::unique_ptr<QRhiBufferReadbackResult>> m_reads;
};

} // namespace Hitscope
