// SPDX-License-Identifier: GPL-3.0-or-later
#include "fallbackengine.h"

#include <utility>

#include "util/elapsed.h"

namespace Hitscope {

FallbackEngine::FallbackEngine(std::unique_ptr<GpuEngine> gpu)
    : m_gpu(std::move(gpu))
{
    m_dfas.setAtomPrefilter(false);
}

FallbackEngine::~FallbackEngine() = default;

std::unique_ptr<FallbackEngine> FallbackEngine::choose(bool required, const RhiDeviceOptions &options,
                                                       QString *notice, QString *error)
{
    std::unique_ptr<GpuEngine> gpu = GpuEngine::choose(required, options, notice, error);
    return gpu ? std::make_unique<FallbackEngine>(std::move(gpu)) : nullptr;
}

void FallbackEngine::setCountedPatterns(const std::vector<bool> &counted)
{
    m_gpu->setCountedPatterns(counted);
    // A batch re-run on the CPU counts the same patterns.
    m_dfas.setCountedPatterns(counted);
    m_screens.setCountedPatterns(counted);
}

void FallbackEngine::setProfiling(bool on)
{
    m_gpu->setProfiling(on);
    m_dfas.setProfiling(on);
    m_screens.setProfiling(on);
}

bool FallbackEngine::scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                          const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error)
{
    const auto t0 = Clock::now();
    CpuEngine &cpu = catalog.tablelessGroups() > 0 ? m_screens : m_dfas;
    // The batch that finds the device failed says so, and so does the first after a failed prepare(); the
    // batches after them run on the CPU engine without a word each.
    const bool wasDisabled = m_gpu->disabled();
    QString prepareNotice;
    const QString prepareError = m_gpu->takePrepareError();
    if (!prepareError.isEmpty() && m_gpu->disabled())
        prepareNotice = QStringLiteral("batch %1: %2; it and the batches after it run on the CPU engine")
                            .arg(batch.index)
                            .arg(prepareError);
    QString gpuError;
    if (m_gpu->scan(batch, catalog, params, carryIn, result, &gpuError)) {
        bool screened = true;
        if (result.screensPending) {
            const auto h0 = Clock::now();
            const CpuEngine::KeyBlocks blocks { result.screenBlocks.data(), int64_t(result.screenBlocks.size()) * 8 };
            BatchResult host;
            screened = m_screens.scanScreens(batch, catalog, params, blocks, host);
            if (screened) {
                result.hits.insert(result.hits.end(), host.hits.begin(), host.hits.end());
                result.counts.insert(result.counts.end(), host.counts.begin(), host.counts.end());
                result.telemetry.hits += host.telemetry.hits;
                result.telemetry.hostScreenMs = msSince(h0);
                result.patternMs = std::move(host.patternMs);
            } else {
                gpuError = QStringLiteral("the host's screens of the GPU's marked blocks failed");
            }
            result.screenBlocks.clear();
            result.screensPending = false;
        }
        result.patternMsWhole = false;
        result.telemetry.wallMs = msSince(t0);
        if (screened && (params.timeoutMs <= 0 || result.telemetry.wallMs <= params.timeoutMs))
            return true;
        if (screened)
            gpuError = QStringLiteral("the GPU took %1 ms, more than the %2 ms timeout")
                           .arg(qRound(result.telemetry.wallMs))
                           .arg(params.timeoutMs);
    }
    // Nothing is lost: the batch runs again on the CPU with the same tables.
    BatchResult again;
    if (!cpu.scan(batch, catalog, params, carryIn, again, error))
        return false;
    const int64_t tableBytes = result.telemetry.bytesUploadedTables;
    result = std::move(again);
    if (!prepareNotice.isEmpty())
        result.notices.push_back(prepareNotice);
    if (!wasDisabled)
        result.notices.push_back(QStringLiteral("batch %1: %2; re-run on the CPU engine%3")
                                     .arg(batch.index)
                                     .arg(gpuError, m_gpu->disabled() ? QStringLiteral(", as are the batches after it")
                                                                      : QString()));
    result.telemetry.engine = QStringLiteral("cpu (GPU fallback)");
    result.telemetry.bytesUploadedTables = tableBytes;
    result.telemetry.wallMs = msSince(t0);
    return true;
}

} // namespace Hitscope
