// SPDX-License-Identifier: GPL-3.0-or-later
#include "scanpipelines.h"

#include "gpu/rhidevice.h"
#include "util/runtimeswitches.h"

namespace Hitscope {

namespace {
constexpr size_t kMaxCachedPipelines = 32;
}

QRhiComputePipeline *ScanPipelines::get(int workgroupSize, bool counting, QRhiShaderResourceBindings *bindings,
                                        bool *cacheHit, QString *error)
{
    for (auto it = m_pipelines.begin(); it != m_pipelines.end(); ++it) {
        if (it->workgroupSize == workgroupSize && it->counting == counting) {
            m_pipelines.splice(m_pipelines.begin(), m_pipelines, it);
            *cacheHit = true;
            return m_pipelines.front().pipeline.get();
        }
    }
    *cacheHit = false;
    // HITSCOPE_GPU_SHADER_DIR: kernels baked elsewhere (same names), for comparing variants in one benchmark run.
    const QString dir = RuntimeSwitches::gpuShaderDir();
    const QString name = QStringLiteral("/scan_wg%1%2.comp.qsb")
                             .arg(workgroupSize)
                             .arg(counting ? QString() : QStringLiteral("_nocount"));
    const QShader shader = RhiDevice::loadShader(dir + name, error);
    if (!shader.isValid()) {
        *error = QStringLiteral("no scan kernel for workgroup size %1 (sizes offered: 32, 64, 128, 256, 512): %2")
                     .arg(workgroupSize)
                     .arg(*error);
        return nullptr;
    }
    std::unique_ptr<QRhiComputePipeline> p(m_device.rhi()->newComputePipeline());
    p->setShaderStage({ QRhiShaderStage::Compute, shader });
    p->setShaderResourceBindings(bindings);
    if (!p->create()) {
        *error = QStringLiteral("cannot create the GPU scan pipeline (workgroup size %1)").arg(workgroupSize);
        return nullptr;
    }
    m_pipelines.push_front({ workgroupSize, counting, std::move(p) });
    if (m_pipelines.size() > kMaxCachedPipelines)
        m_pipelines.pop_back();
    return m_pipelines.front().pipeline.get();
}

} // namespace Hitscope
