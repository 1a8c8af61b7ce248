// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <list>
#include <memory>

#include <QString>

#include "gpu/rhi.h"

namespace Hitscope {

class RhiDevice;

/// The scan kernel's pipelines, one per workgroup size and counting variant, most recently used first.
class ScanPipelines
{
public:
    explicit ScanPipelines(RhiDevice &device)
        : m_device(device)
    {
    }

    /// The kernel of that workgroup size, with the counting code when `counting`, laid out as `bindings`.
    QRhiComputePipeline *get(int workgroupSize, bool counting, QRhiShaderResourceBindings *bindings, bool *cacheHit,
                             QString *error);
    void clear() { m_pipelines.clear(); }

private:
    struct Entry
    {
        int workgroupSize = 0;
        bool counting = true;
        std::unique_ptr<QRhiComputePipeline> pipeline;
    };
    RhiDevice &m_device;
    std::list<Entry> m_pipelines;
};

} // namespace Hitscope
