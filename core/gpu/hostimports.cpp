// SPDX-License-Identifier: GPL-3.0-or-later
#include "hostimports.h"

#include <algorithm>

#include <sys/mman.h>

#include "engine/engine.h"
#include "gpu/vulkanhostbuffer.h"
#include "util/elapsed.h"
#include "util/logcategories.h"
#include "util/parallel.h"

namespace Hitscope {

namespace {
// The buffers of one scan.
constexpr size_t kMaxIdle = Engine::kScanBuffers;
}

std::shared_ptr<HostImports> HostImports::create(RhiDevice *device)
{
    return std::shared_ptr<HostImports>(
        new HostImports(device && VulkanHostBuffer::isSupported(*device) ? device : nullptr));
}

HostImports::HostImports(RhiDevice *device)
    : m_device(device)
{
}

HostImports::~HostImports()
{
    detach();
}

bool HostImports::importing() const
{
    std::lock_guard lock(m_mutex);
    return m_device != nullptr;
}

void HostImports::detach()
{
    std::lock_guard lock(m_mutex);
    m_buffers.clear();
    for (const auto &[p, n] : m_idle)
        ::munmap(p, n);
    m_idle.clear();
    m_device = nullptr;
}

void HostImports::giveBack(uint8_t *p, size_t n)
{
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_buffers.find(p);
        if (it != m_buffers.end()) {
            if (m_idle.size() < kMaxIdle) {
                m_idle.emplace_back(p, n);
                return;
            }
            m_buffers.erase(it); // the import goes before the memory
        }
    }
    ::munmap(p, n);
}

Haystack HostImports::newHaystack(int64_t bytes, int threads, bool profile)
{
    // Whole huge pages: the import needs whole pages, and the memory is asked to be huge pages anyway.
    constexpr int64_t kHugePage = int64_t(2) << 20;
    const size_t size = size_t((std::max<int64_t>(bytes, 1) + kHugePage - 1) / kHugePage * kHugePage);
    const std::shared_ptr<HostImports> self = shared_from_this();
    auto giveBack = [self](uint8_t *p, size_t n) { self->giveBack(p, n); };
    RhiDevice *device = nullptr;
    {
        std::lock_guard lock(m_mutex);
        device = m_device;
        const auto same = std::find_if(m_idle.begin(), m_idle.end(), [&](const auto &e) { return e.second == size; });
        if (same != m_idle.end()) {
            uint8_t *p = same->first;
            m_idle.erase(same);
            return Haystack(p, HaystackFree { size, giveBack });
        }
        // Buffers of another batch size (the size was changed) would stay pinned for nothing.
        for (const auto &[p, n] : m_idle) {
            m_buffers.erase(p);
            ::munmap(p, n);
        }
        m_idle.clear();
    }
    Haystack h = allocateHaystack(int64_t(size));
    if (!device)
        return h;
#ifdef MADV_DONTFORK
    // A child process (yara run by the benchmark, say) must not share pinned pages copy-on-write.
    ::madvise(h.get(), size, MADV_DONTFORK);
#endif
    // The import pins every page, faulting in (zeroing) those not touched yet on this one thread: 120 ms for
    // 512 MiB on the H200. Touched first on a few threads, as reading would have.
    uint8_t *mem = h.get();
    threads = std::clamp(threads, 1, 8);
    const size_t part = (size / size_t(threads) + kHugePage - 1) / kHugePage * kHugePage;
    runWorkers(threads, [&](int t) {
        for (size_t at = size_t(t) * part; at < std::min(size, size_t(t + 1) * part); at += 4096)
            mem[at] = 0;
    });
    // Outside the lock: the engine thread looks up imports meanwhile. The device outlives this call: the
    // engine is destroyed only after the scans that read batches (see GpuEngine's class comment).
    const auto t0 = Clock::now();
    std::unique_ptr<VulkanHostBuffer> imported = VulkanHostBuffer::create(*device, h.get(), int64_t(size));
    if (profile)
        qCInfo(lcGpu, "%s %zu MiB of host memory in %.1f ms", imported ? "imported" : "could not import", size >> 20,
               msSince(t0));
    if (!imported)
        return h;
    uint8_t *p = h.release();
    std::lock_guard lock(m_mutex);
    m_buffers.emplace(p, std::move(imported));
    ++m_made;
    return Haystack(p, HaystackFree { size, giveBack });
}

const VulkanHostBuffer *HostImports::find(const uint8_t *haystack, int64_t bytes) const
{
    std::lock_guard lock(m_mutex);
    const auto it = m_buffers.find(haystack);
    return it != m_buffers.end() && it->second->size() >= bytes ? it->second.get() : nullptr;
}

int64_t HostImports::made() const
{
    std::lock_guard lock(m_mutex);
    return m_made;
}

} // namespace Hitscope
