// SPDX-License-Identifier: GPL-3.0-or-later
#include "devicepool.h"

#include <algorithm>

#include "session/fallbackengine.h"
#include "util/jobthread.h"
#include "util/parallel.h"

namespace Hitscope {

struct DevicePool::Device
{
    int slot = 0;
    int vulkanIndex = -1;
    std::unique_ptr<JobThread> thread;
    std::unique_ptr<FallbackEngine> engine;
};

DevicePool::DevicePool() = default;

std::unique_ptr<DevicePool> DevicePool::create(const std::vector<int> &vulkanDeviceIndices, bool required,
                                               const RhiDeviceOptions &options, QString *notice, QString *error)
{
    std::unique_ptr<DevicePool> pool(new DevicePool);
    QStringList skipped, failed;
    for (const int index : vulkanDeviceIndices) {
        auto device = std::make_unique<Device>();
        device->vulkanIndex = index;
        device->thread = std::make_unique<JobThread>(0, "hs-device");
        RhiDeviceOptions o = options;
        o.backend = GpuBackend::Vulkan;
        o.vulkanDeviceIndex = index;
        QString why;
        std::unique_ptr<GpuEngine> gpu;
        // The device belongs to the thread that creates it.
        device->thread->post([&] { gpu = GpuEngine::create(o, &why); });
        device->thread->wait();
        if (!gpu) {
            failed.push_back(QStringLiteral("device %1: %2").arg(index).arg(why));
            continue;
        }
        if (!required && gpu->loopLimited()) {
            skipped.push_back(QStringLiteral("device %1 (%2)").arg(index).arg(gpu->device().deviceName()));
            device->thread->post([&] { gpu.reset(); });
            device->thread->wait();
            continue;
        }
        device->thread->post([&] { device->engine = std::make_unique<FallbackEngine>(std::move(gpu)); });
        device->thread->wait();
        device->slot = int(pool->m_devices.size());
        pool->m_devices.push_back(std::move(device));
    }
    if (pool->m_devices.empty()) {
        const QString why = !failed.isEmpty()
            ? failed.join(QLatin1String("; "))
            : QStringLiteral("no hardware GPU among the devices: %1 %2 a software renderer")
                  .arg(skipped.join(QLatin1String(", ")),
                       skipped.size() == 1 ? QStringLiteral("is") : QStringLiteral("are"));
        // As FallbackEngine::choose: the auto engine scans on the CPU, with the reason.
        if (required)
            *error = why;
        else
            *notice = QStringLiteral("%1; using the CPU engine").arg(why);
        return nullptr;
    }
    QStringList notes;
    if (!skipped.isEmpty())
        notes.push_back(QStringLiteral("left out %1: software renderer").arg(skipped.join(QLatin1String(", "))));
    if (!failed.isEmpty())
        notes.push_back(QStringLiteral("left out %1").arg(failed.join(QLatin1String("; "))));
    *notice = notes.join(QLatin1String("; "));
    DevicePool &p = *pool;
    for (const auto &d : p.m_devices) {
        p.m_free.push_back(d->slot);
        const Engine &e = *d->engine;
        p.m_maxBatchBytes = p.m_maxBatchBytes ? std::min(p.m_maxBatchBytes, e.maxBatchBytes()) : e.maxBatchBytes();
        p.m_preferredBatchBytes = p.m_preferredBatchBytes ? std::min(p.m_preferredBatchBytes, e.preferredBatchBytes())
                                                          : e.preferredBatchBytes();
        p.m_preferredSegmentBytes = p.m_preferredSegmentBytes
            ? std::min(p.m_preferredSegmentBytes, e.preferredSegmentBytes())
            : e.preferredSegmentBytes();
    }
    std::reverse(p.m_free.begin(), p.m_free.end()); // the first device first
    p.m_working = p.devices();
    return pool;
}

DevicePool::~DevicePool()
{
    // Each device goes on its own thread, then the thread.
    for (auto &d : m_devices) {
        d->thread->post([&d] { d->engine.reset(); });
        d->thread.reset();
    }
}

QString DevicePool::name() const
{
    return m_devices.front()->engine->name();
}

QString DevicePool::description() const
{
    QStringList names;
    for (const auto &d : m_devices)
        names.push_back(QStringLiteral("%1 (%2)").arg(d->engine->gpu().device().deviceName()).arg(d->vulkanIndex));
    return QStringLiteral("%1 devices: %2").arg(devices()).arg(names.join(QLatin1String(", ")));
}

int DevicePool::scanBuffers() const
{
    // One filling, one being prepared, one on each device, one queued, one whose starts are found, one resolved.
    return 5 + devices();
}

template<typename F>
void DevicePool::onEach(F &&job)
{
    for (auto &d : m_devices)
        d->thread->post([&job, &d] { job(*d); });
    for (auto &d : m_devices)
        d->thread->wait();
}

void DevicePool::setProfiling(bool on)
{
    onEach([&](Device &d) { d.engine->setProfiling(on); });
}

void DevicePool::setCountedPatterns(const std::vector<bool> &counted)
{
    onEach([&](Device &d) { d.engine->setCountedPatterns(counted); });
}

void DevicePool::setHostThreads(int threads)
{
    // Each device's host work (segment tables, hits, screens) gets its share of the threads.
    const int each = std::max(1, threads / devices());
    for (auto &d : m_devices)
        d->engine->setHostThreads(each);
}

void DevicePool::prepare(const PatternCatalog &catalog, const LaunchParams &params, int64_t batchBytes)
{
    onEach([&](Device &d) { d.engine->prepare(catalog, params, batchBytes); });
}

void DevicePool::prepareBatch(FileBatch &batch, const PatternCatalog &catalog) const
{
    // The segment table depends on the batch and the catalog alone: any working device's will do (a failed one
    // builds none).
    for (const auto &d : m_devices) {
        if (!d->engine->gpu().disabled()) {
            d->engine->prepareBatch(batch, catalog);
            return;
        }
    }
}

bool DevicePool::scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                      const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error)
{
    int slot = 0;
    {
        std::unique_lock lock(m_mutex);
        m_freed.wait(lock, [this] { return !m_free.empty(); });
        slot = m_free.back();
        m_free.pop_back();
    }
    Device &d = *m_devices[size_t(slot)];
    LaunchParams own = params;
    own.threads = std::max(1, (params.threads > 0 ? params.threads : hardwareThreads()) / devices());
    bool ok = false;
    d.thread->post([&] { ok = d.engine->scan(batch, catalog, own, carryIn, result, error); });
    d.thread->wait();
    result.telemetry.deviceSlot = slot;
    {
        std::lock_guard lock(m_mutex);
        // A device that failed re-runs every batch it gets on the CPU with its share of the threads, and batches
        // are reported in order: it is retired while another device works.
        if (d.engine->gpu().disabled() && m_working > 1)
            --m_working;
        else
            m_free.push_back(slot);
    }
    m_freed.notify_one();
    return ok;
}

std::unique_ptr<Engine> DevicePool::choose(const DeviceChoice &choice, bool required, const RhiDeviceOptions &options,
                                           QString *notice, QString *error)
{
    std::vector<int> devices = choice.indices;
    if (choice.all && options.backend != GpuBackend::OpenGL) {
        QString ignored; // no Vulkan: the one device below says why
        devices = RhiDevice::hardwareVulkanDevices(&ignored);
        // No hardware device: QRhi's own choice (Mesa's, say), as always.
    }
    if (devices.size() >= 2)
        return DevicePool::create(devices, required, options, notice, error);
    RhiDeviceOptions one = options;
    if (!devices.empty()) {
        one.backend = GpuBackend::Vulkan;
        one.vulkanDeviceIndex = devices.front();
    }
    return FallbackEngine::choose(required, one, notice, error);
}

} // namespace Hitscope
