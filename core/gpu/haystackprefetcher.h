// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "gpu/rhi.h"

namespace Hitscope {

struct FileBatch;
class HostImports;
class RhiDevice;
class VulkanTransfer;

/**
 * Copies the next batch's haystack into a spare device buffer while the current one is scanned: on a transfer
 * queue of its own where the device has one (beside the scan), else on QRhi's queue before the next frame.
 * Only haystacks the device imported are copied ahead: a plain one would first need a staging copy of its own.
 *
 * Threading: everything on the engine's thread, except copyAhead(), which the preparing thread calls; the spare
 * buffer is made on the engine's thread (QRhi's) and only written from the other.
 */
class HaystackPrefetcher
{
public:
    /// Null where the device cannot import host memory or has no transfer commands.
    static std::unique_ptr<HaystackPrefetcher> create(RhiDevice &device, std::shared_ptr<HostImports> imports,
                                                      int64_t maxBatchBytes);
    /// Waits for a copy in flight: it reads an imported haystack.
    ~HaystackPrefetcher();

    /// Whether copies run on a queue of their own, beside the scans (and so also from copyAhead()).
    bool concurrent() const;
    /// The spare buffer at `bytes`, made on the engine's thread for copyAhead() to fill later.
    void reserveSpare(int64_t bytes);
    /// From now until drop(), copyAhead() copies batches.
    void open();
    /// Starts the copy of a batch the moment it is ready, when the spare is free and big enough.
    void copyAhead(const FileBatch &batch);
    /// Starts the copy of the batch after the one about to be scanned, growing the spare where needed.
    void start(const FileBatch &next);
    enum class Taken { No, Yes, Failed };
    /// When `batch` is the one copied ahead: waits for its copy and swaps the spare with `haystack` (the buffer
    /// the scan leaves becomes the spare: its last frame has ended). Failed: the device failed copying it.
    Taken take(const FileBatch &batch, std::unique_ptr<QRhiBuffer> &haystack, double *waitMs);
    /// Records what gives the kernel the bytes the copy wrote (outside any pass).
    void recordAcquire(QRhiCommandBuffer *cb, QRhiBuffer *haystack, int64_t bytes);
    /// Waits for a copy in flight and forgets it; copyAhead() does nothing until open() again.
    void drop();
    int64_t batchesPrefetched() const { return m_batchesPrefetched; }

private:
    HaystackPrefetcher(RhiDevice &device, std::shared_ptr<HostImports> imports, std::unique_ptr<VulkanTransfer> transfer,
                       int64_t maxBatchBytes);
    void startLocked(const FileBatch &next, bool mayGrowSpare);

    RhiDevice &m_device;
    std::shared_ptr<HostImports> m_imports;
    std::unique_ptr<VulkanTransfer> m_transfer;
    int64_t m_maxBatchBytes = 0;
    std::mutex m_mutex; // the transfer, the spare buffer and what it holds
    std::unique_ptr<QRhiBuffer> m_spare;
    bool m_open = false;
    // The batch being copied into m_spare (compared by address, buffer, index and size: batches and their buffers
    // are reused).
    struct Copied
    {
        const FileBatch *batch = nullptr;
        const uint8_t *haystack = nullptr;
        int index = -1;
        int64_t used = 0;
    } m_copied;
    int64_t m_batchesPrefetched = 0;
};

/// Bytes of the device's haystack buffer for `batch`: its buffer's capacity, so that the small first batches of
/// a ramp do not regrow it.
int64_t haystackBufferBytes(const FileBatch &batch, int64_t maxBatchBytes);

} // namespace Hitscope
