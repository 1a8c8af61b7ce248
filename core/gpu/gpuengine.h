// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "automata/patterncatalog.h"
#include "engine/engine.h"
#include "gpu/rhidevice.h"
#include "util/parallel.h"

namespace Hitscope {

class GpuTimer;
class KeyFilter;
class VulkanHostBuffer;
class VulkanStaging;
class VulkanTransfer;

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
    int64_t batchesPrefetched() const { return m_batchesPrefetched; }
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
    struct Plan;
    struct Phase;
    struct HostImports;
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
    const Screened &screenedFor(const PatternCatalog &catalog);
    /// scan() for a catalog of tableless groups: the GPU's part.
    bool scanScreened(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                      const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error,
                      const FileBatch *next);
    bool ensureKeyPass(const KeyFilter &keys, QRhiResourceUpdateBatch *updates, int64_t blockWords, QString *error);
    struct Pipeline
    {
        int workgroupSize = 0;
        bool counting = true;
        std::unique_ptr<QRhiComputePipeline> pipeline;
    };

    explicit GpuEngine(std::unique_ptr<RhiDevice> device);
    bool ensureTables(const PatternCatalog &catalog, QRhiResourceUpdateBatch *updates, int64_t *uploaded,
                      QString *error);
    bool ensureBuffer(std::unique_ptr<QRhiBuffer> &buffer, QRhiBuffer::Type type, QRhiBuffer::UsageFlags usage,
                      int64_t bytes, QString *error);
    bool ensureBindings(QString *error);
    /// The scan kernel of that workgroup size, with the counting code when `counting` (see setCountedPatterns).
    QRhiComputePipeline *pipelineFor(int workgroupSize, bool counting, bool *cacheHit, QString *error);
    const Plan &planFor(const std::vector<uint32_t> &queueLens, int lanes, uint32_t budget, bool *cacheHit);
    /// With `next`, starts copying that batch's haystack before this one's frames (see setNext()).
    /// With `keys`, the key kernel marks the batch's blocks first, into m_keyBlockWords.
    bool runOnGpu(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                  const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error,
                  const FileBatch *next = nullptr, const KeyFilter *keys = nullptr);
    /// Bytes of the haystack buffer for `batch` (its buffer's capacity, so that a ramp does not regrow it).
    int64_t haystackBufferBytes(const FileBatch &batch) const;
    /// One frame: uploads (the haystack and segment table with `upload`), one compute pass per phase of
    /// `phaseItems` items (parameters from `paramWords`), then the queue read back into `queue`.
    /// `resident`: the haystack is in m_haystack already (prefetched), only the segment table is uploaded.
    bool runFrame(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                  const std::vector<uint32_t> &phaseItems, const std::vector<uint32_t> &paramWords, int queueWords,
                  uint32_t attemptsBefore, bool upload, bool resident, const KeyFilter *keys, BatchTelemetry &t,
                  std::vector<uint32_t> &queue, QString *error);
    /// The device's import of `batch`'s haystack (one of newHaystack()'s) when it holds `bytes`; else null.
    const VulkanHostBuffer *importedBuffer(const FileBatch &batch, int64_t bytes) const;
    /// Starts copying `next`'s haystack into m_spareHaystack, when the device imported it and no other copy
    /// holds the spare buffer. Called with m_prefetchMutex held.
    void startPrefetch(const FileBatch &next, bool mayGrowSpare);
    /// Waits for a copy in flight and forgets it; copyAhead() does nothing until prepare() has run again.
    void dropPrefetch();

    std::unique_ptr<RhiDevice> m_device;
    std::unique_ptr<Screened> m_screened;
    // The key kernel's buffers, bindings and pipeline, the filter whose tables are uploaded, and what it marked.
    std::unique_ptr<QRhiBuffer> m_keyParams;
    std::unique_ptr<QRhiBuffer> m_keyTables;
    std::unique_ptr<QRhiBuffer> m_keyBlocks;
    std::unique_ptr<QRhiShaderResourceBindings> m_keyBindings;
    std::array<const QRhiBuffer *, 4> m_keyBound {};
    std::unique_ptr<QRhiComputePipeline> m_keyPipeline;
    uint64_t m_keyTablesFingerprint = 0;
    size_t m_keyTablesWords = 0;
    std::vector<uint32_t> m_keyBlockWords; // [0] invocations completed, then a bit per block
    bool m_loopLimited = false;
    std::atomic_bool m_disabled { false }; // a device error: the rest runs on the CPU (read by prepareBatch too)
    QString m_prepareError;  // why prepare() failed, for the next scan() to report
    int64_t m_preparedTableBytes = 0; // tables prepare() uploaded, counted in the next scan()'s telemetry

    std::unique_ptr<QRhiBuffer> m_params;
    std::unique_ptr<QRhiBuffer> m_haystack;
    std::unique_ptr<QRhiBuffer> m_spareHaystack; // the next batch's, copied while m_haystack's is scanned
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

    std::list<Pipeline> m_pipelines; // most recently used first
    std::list<std::pair<uint64_t, std::unique_ptr<Plan>>> m_plans;
    std::unique_ptr<GpuTimer> m_timer;
    std::unique_ptr<GpuTimer> m_uploadTimer; // profiling only: the copies from the staging buffer
    // Profiling only, per batch: the copy into the staging buffer (host), the GPU's copies out of it, frame waits.
    double m_profileStagingMs = 0;
    double m_profileUploadMs = 0;
    double m_profileFrameWaitMs = 0;
    double m_profileSetupMs = 0; // buffers (re)created, tables uploaded, pipeline made
    std::unique_ptr<VulkanStaging> m_staging;
    std::unique_ptr<VulkanTransfer> m_transfer; // null: no prefetching
    // m_transfer, m_prefetched and which buffer is the spare: copyAhead() runs on the preparing thread.
    std::mutex m_prefetchMutex;
    bool m_copyAheadOpen = false; // from the end of prepare() to the next dropPrefetch()
    const FileBatch *m_next = nullptr;          // setNext()'s, until the next scan() starts copying it
    // The batch being copied into m_spareHaystack (compared by address, buffer, index and size: batches and their
    // buffers are reused).
    struct Prefetched
    {
        const FileBatch *batch = nullptr;
        const uint8_t *haystack = nullptr;
        int index = -1;
        int64_t used = 0;
    } m_prefetched;
    int64_t m_batchesPrefetched = 0;
    double m_profileTransferWaitMs = 0; // profiling only: waited for the prefetch copy
    std::shared_ptr<HostImports> m_hostImports; // shared with the haystacks' deleters, which may outlive us
    std::vector<uint32_t> m_segmentWords; // the segment table and carried states, kept to avoid reallocating
    bool m_profile = false;               // HITSCOPE_GPU_PROFILE: per-batch host phase times on stderr
    // Host threads the engine's own work may use (LaunchParams::threads of the latest batch, else all): segment
    // tables, hit conversion, copies, page touching. Read by the reader thread too (newHaystack).
    std::atomic<int> m_threads { hardwareThreads() };
};

} // namespace Hitscope
