// SPDX-License-Identifier: GPL-3.0-or-later
#include "haystackprefetcher.h"

#include <algorithm>

#include "engine/filebatch.h"
#include "gpu/gpubuffer.h"
#include "gpu/hostimports.h"
#include "gpu/scanlayout.h"
#include "gpu/vulkantransfer.h"
#include "util/elapsed.h"

namespace Hitscope {

int64_t haystackBufferBytes(const FileBatch &batch, int64_t maxBatchBytes)
{
    const int64_t bytes = std::min(std::max(batch.capacity, batch.used), maxBatchBytes);
    return ScanLayout::roundUp16(ScanLayout::roundUp4(std::max(bytes, batch.used)));
}

std::unique_ptr<HaystackPrefetcher> HaystackPrefetcher::create(RhiDevice &device, std::shared_ptr<HostImports> imports,
                                                               int64_t maxBatchBytes)
{
    if (!imports || !imports->importing())
        return nullptr;
    std::unique_ptr<VulkanTransfer> transfer = VulkanTransfer::create(device);
    if (!transfer)
        return nullptr;
    return std::unique_ptr<HaystackPrefetcher>(
        new HaystackPrefetcher(device, std::move(imports), std::move(transfer), maxBatchBytes));
}

HaystackPrefetcher::HaystackPrefetcher(RhiDevice &device, std::shared_ptr<HostImports> imports,
                                       std::unique_ptr<VulkanTransfer> transfer, int64_t maxBatchBytes)
    : m_device(device)
    , m_imports(std::move(imports))
    , m_transfer(std::move(transfer))
    , m_maxBatchBytes(maxBatchBytes)
{
}

HaystackPrefetcher::~HaystackPrefetcher()
{
    m_transfer.reset();
    m_spare.reset();
}

bool HaystackPrefetcher::concurrent() const
{
    return m_transfer->concurrent();
}

void HaystackPrefetcher::reserveSpare(int64_t bytes)
{
    std::lock_guard lock(m_mutex);
    QString ignored;
    ensureGpuBuffer(m_device, m_spare, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, bytes, &ignored);
}

void HaystackPrefetcher::open()
{
    std::lock_guard lock(m_mutex);
    m_open = true;
}

void HaystackPrefetcher::copyAhead(const FileBatch &batch)
{
    if (!concurrent())
        return;
    std::lock_guard lock(m_mutex);
    // Not while prepare() runs: its own small batch would find this copy and drop it.
    if (m_open)
        startLocked(batch, false);
}

void HaystackPrefetcher::start(const FileBatch &next)
{
    std::lock_guard lock(m_mutex);
    startLocked(next, true);
}

void HaystackPrefetcher::startLocked(const FileBatch &next, bool mayGrowSpare)
{
    const int64_t bytes = ScanLayout::roundUp4(next.used);
    // A copy in flight (or done and not yet taken up) holds the spare buffer: copyAhead() may have started this
    // very batch's already.
    if (bytes == 0 || m_copied.batch)
        return;
    const VulkanHostBuffer *source = m_imports->find(next.haystack.get(), bytes);
    if (!source)
        return;
    const int64_t needed = haystackBufferBytes(next, m_maxBatchBytes);
    if (mayGrowSpare) {
        QString ignored; // the batch is uploaded in its own frame instead, which meets (and reports) the failure
        if (!ensureGpuBuffer(m_device, m_spare, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, needed, &ignored))
            return;
    } else if (!m_spare || m_spare->size() < needed) {
        return;
    }
    if (m_transfer->submit(*source, m_spare.get(), bytes))
        m_copied = { &next, next.haystack.get(), next.index, next.used };
}

HaystackPrefetcher::Taken HaystackPrefetcher::take(const FileBatch &batch, std::unique_ptr<QRhiBuffer> &haystack,
                                                   double *waitMs)
{
    std::lock_guard lock(m_mutex);
    // A copy of another batch (a later one, copied while this one could not be: empty, or not imported) stays
    // in flight for its own scan: this scan uses the other buffer.
    const bool mine = m_copied.batch == &batch && m_copied.haystack == batch.haystack.get()
        && m_copied.index == batch.index && m_copied.used == batch.used;
    if (!mine)
        return Taken::No;
    const auto w0 = Clock::now();
    const bool copied = m_transfer->wait();
    *waitMs = msSince(w0);
    m_copied = {};
    if (!copied)
        return Taken::Failed;
    std::swap(haystack, m_spare);
    ++m_batchesPrefetched;
    return Taken::Yes;
}

void HaystackPrefetcher::recordAcquire(QRhiCommandBuffer *cb, QRhiBuffer *haystack, int64_t bytes)
{
    m_transfer->recordAcquire(cb, haystack, bytes);
}

void HaystackPrefetcher::drop()
{
    std::lock_guard lock(m_mutex);
    m_open = false;
    m_transfer->wait();
    // A copy nobody scans leaves the spare released by the transfer queue and never acquired; a new buffer
    // starts without that history (Vulkan's validation warns of a second release without an acquire between).
    if (m_copied.batch)
        m_spare.reset();
    m_copied = {};
}

} // namespace Hitscope
