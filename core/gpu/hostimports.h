// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/filebatch.h"

namespace Hitscope {

class RhiDevice;
class VulkanHostBuffer;

/**
 * Haystacks the device reads from where they were read (VK_EXT_external_memory_host), by their first byte.
 * Importing pins the memory and maps it for the GPU, which costs about as much as reading the batch, so a
 * haystack given back (the scan's buffers when the scan ends) is kept, imported, for the next scan.
 *
 * Thread-safe. Shared with the haystacks' deleters, which may outlive the engine: detach() (the engine going)
 * drops every import, and haystacks still alive keep only their memory.
 */
class HostImports : public std::enable_shared_from_this<HostImports>
{
public:
    /// `device` null or unable to import: newHaystack() hands out plain memory.
    static std::shared_ptr<HostImports> create(RhiDevice *device);
    ~HostImports();

    bool importing() const;
    /// Memory of at least `bytes`, imported when the device can; pages are touched first on up to `threads`.
    Haystack newHaystack(int64_t bytes, int threads, bool profile);
    /// The import of the haystack starting at `haystack` when it holds `bytes`; else null.
    const VulkanHostBuffer *find(const uint8_t *haystack, int64_t bytes) const;
    /// Imports made so far (a buffer given back and handed out again is not imported again).
    int64_t made() const;
    /// The device goes: imports are released, idle memory unmapped; later haystacks are plain memory.
    void detach();

private:
    explicit HostImports(RhiDevice *device);
    void giveBack(uint8_t *p, size_t n);

    mutable std::mutex m_mutex;
    RhiDevice *m_device = nullptr;
    std::unordered_map<const uint8_t *, std::unique_ptr<VulkanHostBuffer>> m_buffers; // handed out or idle
    std::vector<std::pair<uint8_t *, size_t>> m_idle;
    int64_t m_made = 0;
};

} // namespace Hitscope
