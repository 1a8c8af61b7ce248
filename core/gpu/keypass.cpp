// SPDX-License-Identifier: GPL-3.0-or-later
#include "keypass.h"

#include <algorithm>
#include <cstring>

#include "automata/keyfilter.h"
#include "engine/batchtelemetry.h"
#include "gpu/gpubuffer.h"
#include "gpu/rhidevice.h"
#include "gpu/vulkanstaging.h"
#include "util/runtimeswitches.h"

namespace Hitscope {

namespace {
constexpr int kInvocationsPerGroup = 256;

int64_t blockWordsFor(int64_t batchBytes)
{
    return 1 + ((batchBytes + 63) / 64 + 7) / 8;
}
} // namespace

KeyPass::KeyPass(RhiDevice &device, bool loopLimited)
    : m_device(device)
    , m_loopLimited(loopLimited)
{
}

KeyPass::~KeyPass() = default;

bool KeyPass::prepare(const KeyFilter &keys, QRhiBuffer *haystack, int64_t batchBytes,
                      QRhiResourceUpdateBatch *updates, BatchTelemetry &t, QString *error)
{
    // 16 bytes a step, 32 steps per invocation (the shared tables are copied once per workgroup), and on Mesa's
    // software drivers as many as keep an invocation's loop iterations well below 65,535: a step probes at most
    // 16 candidates, each reading up to longestProbe() slots, and marks up to 18 blocks.
    const int64_t chunks = (batchBytes + 15) / 16;
    m_words = blockWordsFor(batchBytes);
    int64_t steps = 32;
    if (m_loopLimited)
        steps = std::clamp<int64_t>(60000 / (16 * int64_t(keys.longestProbe()) + 64), 1, 32);
    const int maxGroups = std::max(1, m_device.limits().maxWorkgroupsPerDimension);
    const int64_t perGroup = steps * kInvocationsPerGroup;
    m_groups = int(std::clamp<int64_t>((chunks + perGroup - 1) / perGroup, 1, maxGroups));

    const std::vector<uint32_t> &words = keys.words();
    if (!ensureGpuBuffer(m_device, m_tables, QRhiBuffer::Immutable, QRhiBuffer::StorageBuffer,
                         int64_t(words.size()) * 4, error)
        || !ensureGpuBuffer(m_device, m_blocks, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, m_words * 4, error)
        || !ensureGpuBuffer(m_device, m_params, QRhiBuffer::Static, QRhiBuffer::UniformBuffer, 16, error))
        return false;
    if (!ensureBindings(haystack, error) || !ensurePipeline(error))
        return false;
    const uint64_t fingerprint = keys.fingerprint();
    if (m_tablesFingerprint != fingerprint || m_tablesWords != words.size()) {
        updates->uploadStaticBuffer(m_tables.get(), 0, int(words.size() * 4), words.data());
        m_tablesFingerprint = fingerprint;
        m_tablesWords = words.size();
    }
    const uint32_t params[4] = { uint32_t(batchBytes), uint32_t(chunks), 0, 0 };
    updates->uploadStaticBuffer(m_params.get(), 0, sizeof params, params);
    m_blockWords.assign(size_t(m_words), 0);
    updates->uploadStaticBuffer(m_blocks.get(), 0, int(m_words * 4), m_blockWords.data());
    t.bytesUploadedData += m_words * 4 + int64_t(sizeof params);
    return true;
}

bool KeyPass::ensureBindings(QRhiBuffer *haystack, QString *error)
{
    const std::array<const QRhiBuffer *, 4> bound { m_params.get(), haystack, m_tables.get(), m_blocks.get() };
    if (m_bindings && bound == m_bound)
        return true;
    const auto stage = QRhiShaderResourceBinding::ComputeStage;
    std::unique_ptr<QRhiShaderResourceBindings> srb(m_device.rhi()->newShaderResourceBindings());
    srb->setBindings({
        QRhiShaderResourceBinding::uniformBuffer(0, stage, m_params.get()),
        QRhiShaderResourceBinding::bufferLoad(1, stage, haystack),
        QRhiShaderResourceBinding::bufferLoad(2, stage, m_tables.get()),
        QRhiShaderResourceBinding::bufferLoadStore(3, stage, m_blocks.get()),
    });
    if (!srb->create()) {
        *error = QStringLiteral("cannot create the GPU key screen's bindings");
        return false;
    }
    m_bindings = std::move(srb);
    m_bound = bound;
    return true;
}

bool KeyPass::ensurePipeline(QString *error)
{
    if (m_pipeline)
        return true;
    const QString dir = RuntimeSwitches::gpuShaderDir();
    const QShader shader = RhiDevice::loadShader(dir + QStringLiteral("/keyscreen.comp.qsb"), error);
    if (!shader.isValid()) {
        *error = QStringLiteral("no key screen kernel: %1").arg(*error);
        return false;
    }
    std::unique_ptr<QRhiComputePipeline> p(m_device.rhi()->newComputePipeline());
    p->setShaderStage({ QRhiShaderStage::Compute, shader });
    p->setShaderResourceBindings(m_bindings.get());
    if (!p->create()) {
        *error = QStringLiteral("cannot create the GPU key screen pipeline");
        return false;
    }
    m_pipeline = std::move(p);
    return true;
}

void KeyPass::record(QRhiCommandBuffer *cb)
{
    m_readBack = QRhiBufferReadbackResult();
    VulkanStaging::recordComputeBarrier(m_device, cb);
    cb->beginComputePass();
    cb->setComputePipeline(m_pipeline.get());
    cb->setShaderResources(m_bindings.get());
    cb->dispatch(m_groups, 1, 1);
    QRhiResourceUpdateBatch *rb = m_device.rhi()->nextResourceUpdateBatch();
    rb->readBackBuffer(m_blocks.get(), 0, int(m_words * 4), &m_readBack);
    cb->endComputePass(rb);
}

bool KeyPass::finish(BatchTelemetry &t, QString *error)
{
    if (m_readBack.data.size() != m_words * 4) {
        *error = QStringLiteral("the GPU read-back did not complete");
        return false;
    }
    std::memcpy(m_blockWords.data(), m_readBack.data.constData(), size_t(m_words) * 4);
    t.bytesReadBack += m_readBack.data.size();
    const uint32_t launched = uint32_t(m_groups) * uint32_t(kInvocationsPerGroup);
    if (m_blockWords[0] != launched) {
        *error = QStringLiteral("%1 of %2 GPU key screen invocations completed").arg(m_blockWords[0]).arg(launched);
        return false;
    }
    return true;
}

void KeyPass::clear(int64_t batchBytes)
{
    m_blockWords.assign(size_t(blockWordsFor(batchBytes)), 0);
}

} // namespace Hitscope
