// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/devicechoice.h"
#include "engine/engine.h"
#include "gpu/rhidevice.h"

namespace Hitscope {

class FallbackEngine;
class JobThread;

/**
 * Several GPU devices as one engine: one FallbackEngine per device object, each created, used and destroyed on a
 * thread of its own (which owns its QRhi), with its own buffers and hit ring. scan() runs the batch on whichever
 * device is free; the Scanner calls it from one thread per device (concurrentScans()) and keeps the batches'
 * order. Each device re-runs its own failed batches on the CPU (FallbackEngine). The telemetry's deviceSlot says
 * which device ran a batch.
 *
 * Batches go to the devices from where they were read (no import of host memory, no copy ahead): which device
 * takes a batch is known only when its scan starts.
 */
class DevicePool : public Engine
{
public:
    /// One device object per entry of `vulkanDeviceIndices` (an index listed twice makes two objects on that
    /// device). Without `required`, software devices (Mesa's) are left out, with a `notice`. Null with `error`
    /// when no device could be made (or, without `required`, none is hardware).
    /// The GPU engine for a user's choice of devices (--devices, the GUI's Devices field): one device is
    /// FallbackEngine::choose's (made on the calling thread: it copies batches ahead); several make a pool.
    /// `required` and `notice` as FallbackEngine::choose. Every hardware device when `choice.all`.
    static std::unique_ptr<Engine> choose(const DeviceChoice &choice, bool required, const RhiDeviceOptions &options,
                                          QString *notice, QString *error);
    static std::unique_ptr<DevicePool> create(const std::vector<int> &vulkanDeviceIndices, bool required,
                                              const RhiDeviceOptions &options, QString *notice, QString *error);
    ~DevicePool() override;

    int devices() const { return int(m_devices.size()); }
    /// "2 devices: NVIDIA H200 (0), NVIDIA H200 (1)", for people.
    QString description() const;

    QString name() const override;
    int concurrentScans() const override { return devices(); }
    int scanBuffers() const override;
    int64_t maxBatchBytes() const override { return m_maxBatchBytes; }
    int64_t preferredBatchBytes() const override { return m_preferredBatchBytes; }
    int64_t preferredSegmentBytes() const override { return m_preferredSegmentBytes; }
    void setCountedPatterns(const std::vector<bool> &counted) override;
    void setProfiling(bool on) override;
    void setHostThreads(int threads) override;
    void prepare(const PatternCatalog &catalog, const LaunchParams &params, int64_t batchBytes) override;
    void prepareBatch(FileBatch &batch, const PatternCatalog &catalog) const override;
    bool scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
              const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error) override;

private:
    struct Device;
    DevicePool();
    /// Runs `job(device)` on every device's thread at once and waits for all.
    template<typename F>
    void onEach(F &&job);

    std::vector<std::unique_ptr<Device>> m_devices;
    std::mutex m_mutex;
    std::condition_variable m_freed;
    std::vector<int> m_free; // devices not scanning
    int m_working = 0;       // devices not retired after a failure
    int64_t m_maxBatchBytes = 0;
    int64_t m_preferredBatchBytes = 0;
    int64_t m_preferredSegmentBytes = 0;
};

} // namespace Hitscope
