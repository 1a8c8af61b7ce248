// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <QString>

#include "automata/patterncatalog.h"
#include "engine/batchresult.h"
#include "engine/filebatch.h"
#include "engine/launchparams.h"

namespace Hitscope {

/**
 * Scans batches against a catalog. Every engine must report exactly the same RawHits for the same
 * input (the CPU engine is the reference the GPU engine is tested against).
 */
class Engine
{
public:
    virtual ~Engine() = default;

    /// Batch buffers a Scanner keeps (newHaystack()'s memory): an engine that keeps memory for the next scan
    /// keeps as many.
    static constexpr int kScanBuffers = 7;
    /// Batch buffers a Scanner keeps for this engine, kScanBuffers at most for one device (a pool of devices keeps
    /// one more per device): each is fresh memory on a scan's first pass through it (page faults and zeroing by
    /// the kernel).
    virtual int scanBuffers() const { return kScanBuffers; }

    virtual QString name() const = 0;
    /// How many scan() calls may run at once, each on a thread of the caller's (a pool of devices: one per
    /// device). The Scanner then scans that many batches at a time and still reports them in order.
    virtual int concurrentScans() const { return 1; }
    /// Largest haystack one batch may have on this engine (a GPU binding limit, say).
    virtual int64_t maxBatchBytes() const { return INT64_MAX; }
    /// Batch size that suits this engine when the user chose none.
    virtual int64_t preferredBatchBytes() const { return 64 << 20; }
    /// Segment size that suits this engine when the user chose none.
    virtual int64_t preferredSegmentBytes() const { return 256 << 10; }
    /// Patterns whose ends the caller only counts (counted[pattern]; see Scanner::setListHits): an engine may
    /// report their ends per batch file in BatchResult::counts instead of one hit each (millions of matches of
    /// `{ 00 00 00 00 }` then cost a few numbers). An engine that does not count reports them as hits.
    virtual void setCountedPatterns(const std::vector<bool> &counted) { Q_UNUSED(counted); }
    /// Whether scan() measures where its time goes, per pattern (BatchResult::patternMs; Scanner::setProfiling).
    /// Off by default; an engine that cannot leaves patternMs empty.
    virtual void setProfiling(bool on) { Q_UNUSED(on); }
    /// Host threads the engine's own work may use from now on (LaunchParams::threads, resolved): called before
    /// the first newHaystack() of a scan and whenever the parameters change. Default: ignored.
    virtual void setHostThreads(int threads) { Q_UNUSED(threads); }
    /// Memory for a batch of `bytes` (the batcher's buffers; called on the reader thread). An engine may hand
    /// out memory its device reads from directly. Default: allocateHaystack().
    virtual Haystack newHaystack(int64_t bytes) { return allocateHaystack(bytes); }
    /// Called once before a scan's first batch, on the thread that calls scan(), while the first batch is being
    /// read: an engine may make ready what its first scan() would otherwise wait for (a GPU's pipelines, tables
    /// and buffers of `batchBytes`). A failure that leaves the engine unusable is reported by the first scan();
    /// any other is met again, and reported, by the batch that needs what failed. Default: nothing.
    virtual void prepare(const PatternCatalog &catalog, const LaunchParams &params, int64_t batchBytes)
    {
        Q_UNUSED(catalog);
        Q_UNUSED(params);
        Q_UNUSED(batchBytes);
    }
    /// Called for each batch once it is read, before scan(), on a thread of the caller's (neither the reader's
    /// nor the one that calls scan()): an engine may compute there what depends on the batch alone (into
    /// FileBatch::prepared), beside the scan of the batch before. Must not touch what scan() uses. Default:
    /// nothing.
    virtual void prepareBatch(FileBatch &batch, const PatternCatalog &catalog) const
    {
        Q_UNUSED(batch);
        Q_UNUSED(catalog);
    }
    /// Called after prepareBatch(), on the same thread, before the batch is queued for scan(): an engine that can
    /// move a batch to its device beside a running scan() may start that here, so that a batch read during a scan
    /// is on the device when its own scan starts (setNext() comes only at the start of the scan before). Must be
    /// safe against a scan() running meanwhile. The batch stays alive and unchanged until its scan() or
    /// forgetNext(). Default: nothing.
    virtual void copyAhead(const FileBatch &batch) { Q_UNUSED(batch); }
    /// Called before a scan() with the batch the scan after it will get, once that one is read: an engine may
    /// start moving it to its device while it scans this one. That batch stays alive and unchanged until its
    /// scan() or forgetNext(). Default: ignored.
    virtual void setNext(const FileBatch &next) { Q_UNUSED(next); }
    /// The batch last given to setNext(), and any given to copyAhead() and not scanned, will not be scanned (a
    /// cancel, the end of a run): the engine is done with them when this returns, and copies nothing ahead
    /// until its next prepare(). Default: nothing.
    virtual void forgetNext() { }
    /// `carryIn` has, per batch file and unbounded group, the state to resume from (see BatchResult);
    /// entries of first chunks are ignored. Returns false with `error` set when the batch could not run.
    virtual bool scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                      const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error) = 0;
};

} // namespace Hitscope
