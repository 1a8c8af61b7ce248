// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpu/smoketest.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "gpu/gputimer.h"
#include "gpu/rhidevice.h"
#include "gpu/rhiframe.h"

namespace Hitscope {

namespace {

constexpr int WorkgroupSize = 64; // local_size_x of shaders/smoke.comp

uint32_t smokeInput(uint32_t i)
{
    return i * 7u + 1u;
}

uint32_t smokeExpected(uint32_t i)
{
    return smokeInput(i) * 2654435761u + (i ^ 0x9e3779b9u);
}

} // namespace

SmokeTestResult runSmokeTest(RhiDevice &device, int count)
{
    SmokeTestResult result;
    QRhi *rhi = device.rhi();
    if (count <= 0 || count > rhi->resourceLimit(QRhi::MaxThreadGroupsPerDimension) * WorkgroupSize) {
        result.error = QStringLiteral("smoke test: %1 values cannot be dispatched at once").arg(count);
        return result;
    }

    const QShader shader = RhiDevice::loadShader(QStringLiteral(":/shaders/smoke.comp.qsb"), &result.error);
    if (!shader.isValid())
        return result;

    const int bytes = count * int(sizeof(uint32_t));
    std::unique_ptr<QRhiBuffer> buffer(rhi->newBuffer(QRhiBuffer::Immutable, QRhiBuffer::StorageBuffer, bytes));
    if (!buffer->create()) {
        result.error = QStringLiteral("smoke test: cannot create a storage buffer of %1 bytes").arg(bytes);
        return result;
    }
    std::unique_ptr<QRhiShaderResourceBindings> bindings(rhi->newShaderResourceBindings());
    bindings->setBindings(
        { QRhiShaderResourceBinding::bufferLoadStore(0, QRhiShaderResourceBinding::ComputeStage, buffer.get()) });
    if (!bindings->create()) {
        result.error = QStringLiteral("smoke test: cannot create the shader resource bindings");
        return result;
    }
    std::unique_ptr<QRhiComputePipeline> pipeline(rhi->newComputePipeline());
    pipeline->setShaderStage({ QRhiShaderStage::Compute, shader });
    pipeline->setShaderResourceBindings(bindings.get());
    if (!pipeline->create()) {
        result.error = QStringLiteral("smoke test: cannot create the compute pipeline");
        return result;
    }

    std::vector<uint32_t> input(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i)
        input[size_t(i)] = smokeInput(uint32_t(i));

    GpuTimer timer(device);
    QRhiBufferReadbackResult readback;
    bool readbackDone = false;
    readback.completed = [&readbackDone] { readbackDone = true; };
    {
        RhiFrame frame(rhi);
        if (!frame.isActive()) {
            result.error = QStringLiteral("smoke test: cannot begin a frame (%1)").arg(int(frame.result()));
            return result;
        }
        QRhiCommandBuffer *cb = frame.commandBuffer();
        QRhiResourceUpdateBatch *upload = rhi->nextResourceUpdateBatch();
        upload->uploadStaticBuffer(buffer.get(), input.data());
        // ExternalContent: the timer writes its timestamps inside the pass, around the dispatch alone.
        cb->beginComputePass(upload, QRhiCommandBuffer::ExternalContent);
        timer.begin(cb);
        cb->setComputePipeline(pipeline.get());
        cb->setShaderResources();
        cb->dispatch((count + WorkgroupSize - 1) / WorkgroupSize, 1, 1);
        timer.end(cb);
        QRhiResourceUpdateBatch *download = rhi->nextResourceUpdateBatch();
        download->readBackBuffer(buffer.get(), 0, bytes, &readback);
        cb->endComputePass(download);
        if (frame.end() != QRhi::FrameOpSuccess) {
            result.error = QStringLiteral("smoke test: the frame failed (%1)").arg(int(frame.result()));
            return result;
        }
    }
    if (!readbackDone) {
        // OpenGL may complete read-backs only at the next frame.
        rhi->finish();
        if (!readbackDone) {
            RhiFrame frame(rhi);
        }
    }
    if (!readbackDone || readback.data.size() != bytes) {
        result.error = QStringLiteral("smoke test: the read-back did not complete");
        return result;
    }
    result.gpuMs = timer.elapsedMs();

    std::vector<uint32_t> output(static_cast<size_t>(count));
    std::memcpy(output.data(), readback.data.constData(), size_t(bytes));
    for (int i = 0; i < count; ++i) {
        if (output[size_t(i)] != smokeExpected(uint32_t(i))) {
            result.error = QStringLiteral("smoke test: value %1 is %2, expected %3 (%4 backend, %5)")
                               .arg(i)
                               .arg(output[size_t(i)])
                               .arg(smokeExpected(uint32_t(i)))
                               .arg(device.backendName(), device.deviceName());
            return result;
        }
    }
    result.values = count;
    result.passed = true;
    return result;
}

} // namespace Hitscope
