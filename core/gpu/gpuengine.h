// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <memory>

#include "automata/patterncatalog.h"
#include "engine/engine.h"
#include "gpu/dispatchplans.h"
#include "gpu/gpubatchprofile.h"
#include "gpu/rhidevice.h"
#include "gpu/scandispatch.h"
#include "util/parallel.h"

namespace Hitscope {

struct BatchPlan;
class FrameStaging;
class GpuTimer;
class HaystackPrefetcher;
class HostImports;
class KeyFilter;
class KeyPass;
class ScanPipelines;

/**
 * The GPU engine on QRhi compute: per batch one upload (haystack and a small segment table) and a frame of
 * dispatches over every (segment, group) work item, derived on the GPU from the table; unbounded groups'
 * speculative segments are fixed up on the GPU too, in passes, until every segment's entry state is the one its
 * predecessor ended in. Persistent workers claim items with atomics; every attempted hit is counted and a batch
 * whose hits overflow the ring is re-run with a larger ring. Every item proves on the GPU that it completed; a
 * batch where one did not (a device error, Mesa's loop limit) fails, and FallbackEngine (session/) re-runs it on
 * the CPU engine, as one that ran past the timeout, so nothing is lost.
 *
 * Threading: created, used and destroyed on one thread, which owns the QRhi and every resource; newHaystack()
 * is called on the reader's thread, never while the engine is being destroyed (a Scanner's reader ends with
 * its run); haystacks may outlive the engine.
 */
class GpuEngine : public Engine
{
public:
    static std::unique_ptr<GpuEngine> create(const RhiDeviceOptions &options, QString *error);
    /**
     * The engine choice users make (--engine, the GUI's combo): with `required` (gpu), a device or null with
     * `error`; otherwise (auto) a hardware device or null with `notice` saying why the CPU engine runs instead
     * (no device, or Mesa's software Vulkan, which is slower than the CPU engine on the same cores).
     */
    static std::unique_ptr<GpuEngine> choose(bool required, const RhiDeviceOptions &options, QString *notice,
                                             QString *error);
    ~GpuEngine() override;

    QString name() const override;
    int64_t maxBatchBytes() const override;
    int64_t preferredBatchBytes() const override;
    int64_t preferredSegmentBytes() const override;
    /// Counted in the kernel: one ring entry per run of a counted pattern's ends rather than one per end.
    void setCountedPatterns(const std::vector<bool> &counted) override;
    /// Memory the GPU copies batches from where they were read (imported with VK_EXT_external_memory_host);
    /// plain memory where the device cannot import it. Thread-safe.
    Haystack newHaystack(int64_t bytes) override;
    void setHostThreads(int threads) override { m_threads = std::max(1, threads); }
    /// Host memory imports made so far (a buffer given back and handed out again is not imported again).
    int64_t hostImportsMade() const;
    /// Runs a batch of one small file through the kernel: pipeline, tables and buffers (the haystack's of
    /// `batchBytes`) are made and first used before the first batch arrives. On the H200 the first batch's
    /// call took 110 ms of a 0.6 s scan, most of it in these.
    void prepare(const PatternCatalog &catalog, const LaunchParams &params, int64_t batchBytes) override;
    /// The batch's segment table (4-16 ms of a 512 MiB batch's engine call on the H200), beside the scan.
    void prepareBatch(FileBatch &batch, const PatternCatalog &catalog) const override;
    /// The next batch's haystack, when the device imported it, is copied to the GPU by the transfer queue while
    /// this one is scanned (Vulkan; HITSCOPE_GPU_NO_PREFETCH turns it off).
    void setNext(const FileBatch &next) override;
    /// Starts the copy of a batch the moment it is ready, when the transfer queue is idle and the spare buffer
    /// free (a device with a transfer queue of its own only: lavapipe's one queue is QRhi's, used by the scan).
    void copyAhead(const FileBatch &batch) override;
    void forgetNext() override;
    /// The GPU's part of a batch. False, with the reason, where the device failed, a batch did not complete or
    /// the device failed before (disabled()): FallbackEngine then runs it on the CPU. On a tableless catalog the
    /// result leaves the prefilter's screens to the host (BatchResult::screenBlocks).
    bool scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
              const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error) override;
    /// A device error happened: every later scan() fails at once.
    bool disabled() const { return m_disabled; }
    /// Why the last prepare() failed (once; empty when it did not).
    QString takePrepareError() { return std::exchange(m_prepareError, QString()); }
    /// Batches whose haystack was on the GPU before their scan began (see setNext()).
    int64_t batchesPrefetched() const;
    /// Whether batches are copied on a queue of their own, beside the scan (and so also by copyAhead()).
    bool copiesBesideScans() const;

    RhiDevice &device() { return *m_device; }
    /// True on Mesa's software drivers, where an invocation may run only 65,535 loop iterations.
    bool loopLimited() const { return m_loopLimited; }

    /**
     * Kernel time with the data resident: uploads the batch once, then runs its dispatches `repeats` times
     * and returns the fastest GPU time in milliseconds (0 when the device has no timestamps).
     */
    double residentKernelMs(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                            int repeats, QString *error);

private:
    /// A catalog of tableless groups (CompileOptions::tableless) as the GPU runs it: the groups with tables that the
    /// prefilter does not cover, walked by the scan kernel, and the prefilter's keys, marked by the key kernel;
    /// the host runs the screens where keys were marked, and the windows (BatchResult::screenBlocks).
    struct Screened
    {
        const PatternCatalog *source = nullptr;
        const DfaGroup *sourceGroups = nullptr;
        PatternCatalog device;
        /// Per unbounded group of `device`, its index among the source catalog's unbounded groups.
        std::vector<size_t> unboundedOf;
        size_t sourceUnbounded = 0;
        bool screenedOnDevice = false; ///< a group of `device` holds a pattern the screens report
    };
    /// One frame's work: the items of its phases, their Params blocks and the queue's size; with `withBatch`, the
    /// batch's uploads (and with `keys`, the key kernel first).
    struct FrameWork
    {
        std::vector<uint32_t> phaseItems;
        std::vector<uint32_t> paramWords;
        int queueWords = 0;
        uint32_t attemptsBefore = 0; ///< later frames append to the same hit ring
        bool withBatch = false;
        bool resident = false;
        const KeyFilter *keys = nullptr;
    };
    /// The frames of a batch: hits attempted, items scanned again, passes and frames run.
    struct FramesRun
    {
        uint32_t attempts = 0;
        int64_t rescanned = 0;
        int passes = 0;
        bool overflow = false;
    };

    explicit GpuEngine(std::unique_ptr<RhiDevice> device);
    const Screened &screenedFor(const PatternCatalog &catalog);
    /// The catalog the device runs for `catalog`, and the key filter it marks with (null: none).
    const PatternCatalog &deviceCatalog(const PatternCatalog &catalog, const KeyFilter **keys);
    /// scan() for a catalog of tableless groups: the GPU's part.
    bool scanScreened(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                      const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error,
                      const FileBatch *next);
    bool ensureBuffer(std::unique_ptr<QRhiBuffer> &buffer, QRhiBuffer::Type type, QRhiBuffer::UsageFlags usage,
                      int64_t bytes, QString *error);
    bool ensureTables(const PatternCatalog &catalog, QRhiResourceUpdateBatch *updates, int64_t *uploaded,
                      QString *error);
    bool ensureBindings(QString *error);
    /// With `next`, starts copying that batch's haystack before this one's frames (see setNext()).
    /// With `keys`, the key kernel marks the batch's blocks first (m_keyPass).
    bool runOnGpu(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                  const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error,
                  const FileBatch *next = nullptr, const KeyFilter *keys = nullptr);
    /// Whether the batch's haystack was copied ahead (swapped into m_haystack); false with `error` when the
    /// copy failed.
    bool takePrefetched(const FileBatch &batch, bool *resident, QString *error);
    /// Every frame of a batch: the main phases and fix-up passes until the unbounded groups settle, again with
    /// a larger ring while the hits overflow it.
    bool runFrames(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                   const BatchPlan &plan, bool resident, const KeyFilter *keys, BatchTelemetry &t, FramesRun &run,
                   QString *error);
    /// The frames of one ring capacity: false with `error` on a failure; run.overflow when the ring filled.
    bool runPasses(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                   const BatchPlan &plan, int64_t capacity, bool withBatch, bool resident, const KeyFilter *keys,
                   BatchTelemetry &t, FramesRun &run, QString *error);
    /// The read-back of the batch's results, decoded into `result`.
    bool finishBatch(const FileBatch &batch, const PatternCatalog &catalog, const BatchPlan &plan,
                     const FramesRun &run, BatchResult &result, QString *error);
    /// One frame: uploads, the key kernel, one compute pass per phase, then the queue read back into `queue`.
    bool runFrame(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                  const FrameWork &work, BatchTelemetry &t, std::vector<uint32_t> &queue, QString *error);
    /// Buffers, tables, bindings, key tables and pipeline of a frame, with their uploads in `updates`.
    QRhiComputePipeline *setUpFrame(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                                    const FrameWork &work, int paramsBytes, QRhiResourceUpdateBatch *updates,
                                    BatchTelemetry &t, QString *error);
    /// Records and submits a frame whose uploads are staged.
    bool submitFrame(const FrameWork &work, QRhiResourceUpdateBatch *updates, const ScanDispatch::Recording &rec,
                     int64_t haystackBytes, QString *error);
    /// Nothing a failed frame queued reaches the device: the next batch uploads its tables again.
    void forgetUploads();

    std::unique_ptr<RhiDevice> m_device;
    std::unique_ptr<Screened> m_screened;
    std::unique_ptr<KeyPass> m_keyPass;
    bool m_loopLimited = false;
    std::atomic_bool m_disabled { false }; // a device error: the rest runs on the CPU (read by prepareBatch too)
    QString m_prepareError;  // why prepare() failed, for the next scan() to report
    int64_t m_preparedTableBytes = 0; // tables prepare() uploaded, counted in the next scan()'s telemetry

    std::unique_ptr<QRhiBuffer> m_params;
    std::unique_ptr<QRhiBuffer> m_haystack;
    std::unique_ptr<QRhiBuffer> m_transitions;
    std::unique_ptr<QRhiBuffer> m_aux;
    std::unique_ptr<QRhiBuffer> m_segments;
    std::unique_ptr<QRhiBuffer> m_itemState;
    std::unique_ptr<QRhiBuffer> m_queue;
    std::unique_ptr<QRhiBuffer> m_hits;
    std::unique_ptr<QRhiShaderResourceBindings> m_bindings;
    bool m_bindingsDirty = true;
    uint64_t m_tablesFingerprint = 0;
    // The catalog of the last prepare() (its address and its groups' storage), and its fingerprint.
    const PatternCatalog *m_preparedCatalog = nullptr;
    const DfaGroup *m_preparedGroups = nullptr;
    uint64_t m_preparedFingerprint = 0;
    bool m_tablesUploaded = false;
    std::vector<bool> m_counted;       // as set; applies to a catalog with exactly this many patterns
    std::vector<bool> m_tablesCounted; // the counted set flagged in the uploaded accept entries
    int64_t m_hitCapacity = 0; // grows when a batch overflows (automatic capacity)

    std::unique_ptr<ScanPipelines> m_pipelines;
    DispatchPlans m_plans;
    std::unique_ptr<GpuTimer> m_timer;
    std::unique_ptr<GpuTimer> m_uploadTimer; // profiling only: the copies from the staging buffer
    bool m_profiling = false;                // HITSCOPE_GPU_PROFILE: per-batch host phase times in the log
    GpuBatchProfile m_profile;
    std::unique_ptr<FrameStaging> m_staging;
    std::shared_ptr<HostImports> m_hostImports; // shared with the haystacks' deleters, which may outlive us
    std::unique_ptr<HaystackPrefetcher> m_prefetcher; // null: no copying ahead
    const FileBatch *m_next = nullptr; // setNext()'s, until the next scan() starts copying it
    std::vector<uint32_t> m_segmentWords; // the segment table and carried states, kept to avoid reallocating
    // Host threads the engine's own work may use (LaunchParams::threads of the latest batch, else all): segment
    // tables, hit conversion, copies, page touching. Read by the reader thread too (newHaystack).
    std::atomic<int> m_threads { hardwareThreads() };
};

} // namespace Hitscope
