// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>

#include "cpu/cpuengine.h"
#include "gpu/gpuengine.h"

namespace Hitscope {

/**
 * The GPU engine as users run it: the GPU's part of each batch, then on a tableless catalog the host's screens
 * of the blocks the GPU marked (CpuEngine::scanScreens), and the re-run policy. A batch the GPU could not
 * complete, or that took longer than LaunchParams::timeoutMs, runs again on the CPU engine with the same
 * catalog and carried states, with a notice; after a device error every later batch runs there, without one.
 * Nothing is lost either way.
 *
 * Threading: as GpuEngine (one thread creates, uses and destroys it; newHaystack() and copyAhead() may be
 * called from the reader's and the preparing thread).
 */
class FallbackEngine : public Engine
{
public:
    explicit FallbackEngine(std::unique_ptr<GpuEngine> gpu);
    ~FallbackEngine() override;
    /// The engine for a user's choice (GpuEngine::choose): with `required` (--engine gpu) any device or null
    /// with `error`; otherwise a hardware device or null with `notice` saying why the CPU engine runs instead.
    /// The one place the CLI, the GUI and the bench get their GPU engine from.
    static std::unique_ptr<FallbackEngine> choose(bool required, const RhiDeviceOptions &options, QString *notice,
                                                  QString *error);

    GpuEngine &gpu() { return *m_gpu; }

    QString name() const override { return m_gpu->name(); }
    int scanBuffers() const override { return m_gpu->scanBuffers(); }
    int64_t maxBatchBytes() const override { return m_gpu->maxBatchBytes(); }
    int64_t preferredBatchBytes() const override { return m_gpu->preferredBatchBytes(); }
    int64_t preferredSegmentBytes() const override { return m_gpu->preferredSegmentBytes(); }
    void setCountedPatterns(const std::vector<bool> &counted) override;
    /// The GPU's kernels are not split per pattern: only the host's screens and the batches re-run on the CPU are.
    void setProfiling(bool on) override;
    void setHostThreads(int threads) override { m_gpu->setHostThreads(threads); }
    Haystack newHaystack(int64_t bytes) override { return m_gpu->newHaystack(bytes); }
    void prepare(const PatternCatalog &catalog, const LaunchParams &params, int64_t batchBytes) override
    {
        m_gpu->prepare(catalog, params, batchBytes);
    }
    void prepareBatch(FileBatch &batch, const PatternCatalog &catalog) const override
    {
        m_gpu->prepareBatch(batch, catalog);
    }
    void copyAhead(const FileBatch &batch) override { m_gpu->copyAhead(batch); }
    void setNext(const FileBatch &next) override { m_gpu->setNext(next); }
    void forgetNext() override { m_gpu->forgetNext(); }
    bool scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
              const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error) override;

private:
    std::unique_ptr<GpuEngine> m_gpu;
    /// Re-runs batches of a catalog with every DFA: without its prefilter, so that it carries the states of every
    /// unbounded group, as the GPU does.
    CpuEngine m_dfas;
    /// Screens a tableless catalog's marked blocks, and re-runs its batches (with its prefilter: the states it
    /// carries are those of the groups with tables, as the GPU's).
    CpuEngine m_screens;
};

} // namespace Hitscope
