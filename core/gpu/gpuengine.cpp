// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpuengine.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "automata/atomprefilter.h"
#include "automata/keyfilter.h"
#include "gpu/batchplan.h"
#include "gpu/batchreadback.h"
#include "gpu/framestaging.h"
#include "gpu/gpubuffer.h"
#include "gpu/gputimer.h"
#include "gpu/haystackprefetcher.h"
#include "gpu/hostimports.h"
#include "gpu/keypass.h"
#include "gpu/rhiframe.h"
#include "gpu/ringdecoder.h"
#include "gpu/scanlayout.h"
#include "gpu/scanpipelines.h"
#include "gpu/scantables.h"
#include "util/elapsed.h"
#include "util/runtimeswitches.h"

namespace Hitscope {

using namespace ScanLayout;

namespace {
// Room for about a million hits (12 MiB) before a batch has to run again with a larger ring; Mesa's storage
// bindings are small, so less there.
constexpr int64_t kDefaultHitCapacity = 1 << 20;
constexpr int64_t kDefaultHitCapacityLimited = 1 << 16;
constexpr int kMaxFixupPasses = 4096;
// Fix-up passes recorded per frame: one that finds nothing to scan again costs a few microseconds on a large
// GPU, a frame (a host round trip) far more.
constexpr int kFixupPassesPerFrame = 8;
// Segments of this many bytes on Mesa's software drivers leave room in a piece (BatchPlan) for the warm-up.
constexpr int64_t kLimitedSegmentBytes = 16384 - 1024;
} // namespace

std::unique_ptr<GpuEngine> GpuEngine::create(const RhiDeviceOptions &options, QString *error)
{
    std::unique_ptr<RhiDevice> device = RhiDevice::create(options, error);
    if (!device)
        return nullptr;
    std::unique_ptr<GpuEngine> engine(new GpuEngine(std::move(device)));
    return engine;
}

std::unique_ptr<GpuEngine> GpuEngine::choose(bool required, const RhiDeviceOptions &options, QString *notice,
                                             QString *error)
{
    QString why;
    std::unique_ptr<GpuEngine> gpu = create(options, &why);
    if (required) {
        if (!gpu)
            *error = why;
        return gpu;
    }
    if (!gpu) {
        *notice = QStringLiteral("no GPU compute device (%1); using the CPU engine").arg(why);
    } else if (gpu->loopLimited()) {
        *notice = QStringLiteral("%1 is a software renderer; using the CPU engine").arg(gpu->device().deviceName());
        gpu.reset();
    }
    return gpu;
}

GpuEngine::GpuEngine(std::unique_ptr<RhiDevice> device)
    : m_device(std::move(device))
{
    const GpuDeviceInfo &info = m_device->info();
    const QString name = info.deviceName.toLower();
    m_loopLimited = info.deviceType == QLatin1String("cpu") || name.contains(QLatin1String("llvmpipe"))
        || name.contains(QLatin1String("lavapipe")) || name.contains(QLatin1String("softpipe"));
    m_hostImports = HostImports::create(m_device.get());
    m_keyPass = std::make_unique<KeyPass>(*m_device, m_loopLimited);
    m_pipelines = std::make_unique<ScanPipelines>(*m_device);
    m_staging = std::make_unique<FrameStaging>(*m_device);
    m_timer = std::make_unique<GpuTimer>(*m_device);
    m_profiling = RuntimeSwitches::gpuProfile();
    if (m_profiling)
        m_uploadTimer = std::make_unique<GpuTimer>(*m_device);
    if (!RuntimeSwitches::gpuNoPrefetch())
        m_prefetcher = HaystackPrefetcher::create(*m_device, m_hostImports, GpuEngine::maxBatchBytes());
}

GpuEngine::~GpuEngine()
{
    // QRhi resources go before the device (declaration order would destroy the device last anyway). A copy in
    // flight reads an imported haystack: it ends before the imports go. Haystacks still alive keep their memory,
    // but not its import, which needs the device.
    m_prefetcher.reset();
    m_hostImports->detach();
    m_timer.reset();
    m_uploadTimer.reset();
    m_staging.reset();
    m_pipelines.reset();
    m_keyPass.reset();
    m_bindings.reset();
    m_params.reset();
    m_haystack.reset();
    m_transitions.reset();
    m_aux.reset();
    m_segments.reset();
    m_itemState.reset();
    m_queue.reset();
    m_hits.reset();
}

QString GpuEngine::name() const
{
    return QStringLiteral("gpu");
}

Haystack GpuEngine::newHaystack(int64_t bytes)
{
    return m_hostImports->newHaystack(bytes, m_threads.load(std::memory_order_relaxed), m_profiling);
}

int64_t GpuEngine::hostImportsMade() const
{
    return m_hostImports->made();
}

int64_t GpuEngine::batchesPrefetched() const
{
    return m_prefetcher ? m_prefetcher->batchesPrefetched() : 0;
}

int64_t GpuEngine::maxBatchBytes() const
{
    const GpuLimits &l = m_device->limits();
    int64_t limit = l.maxStorageBufferRange > 0 ? l.maxStorageBufferRange : (int64_t(1) << 27);
    if (l.maxBufferBytes > 0)
        limit = std::min(limit, l.maxBufferBytes);
    return std::min<int64_t>(limit, (int64_t(1) << 31) - 4096) & ~int64_t(4095);
}

void GpuEngine::setCountedPatterns(const std::vector<bool> &counted)
{
    m_counted = counted;
    if (std::find(m_counted.begin(), m_counted.end(), true) == m_counted.end())
        m_counted.clear();
}

int64_t GpuEngine::preferredBatchBytes() const
{
    // On the H200, 256 MiB batches scanned lits_1000 end to end at 6.4 GB/s where 64 MiB gave 5.6 (fixed costs
    // per batch; docs/benchmarks.md). Mesa's software drivers gain nothing from larger ones.
    return m_loopLimited ? Engine::preferredBatchBytes() : std::min<int64_t>(int64_t(256) << 20, maxBatchBytes());
}

int64_t GpuEngine::preferredSegmentBytes() const
{
    // Throughput needs on the order of 100,000 items in flight on a large GPU: small segments.
    return m_loopLimited ? kLimitedSegmentBytes : 4096;
}

bool GpuEngine::ensureBuffer(std::unique_ptr<QRhiBuffer> &buffer, QRhiBuffer::Type type,
                             QRhiBuffer::UsageFlags usage, int64_t bytes, QString *error)
{
    bool recreated = false;
    const bool ok = ensureGpuBuffer(*m_device, buffer, type, usage, bytes, error, &recreated);
    m_bindingsDirty = m_bindingsDirty || recreated;
    return ok;
}

bool GpuEngine::ensureBindings(QString *error)
{
    if (!m_bindingsDirty && m_bindings)
        return true;
    const auto stage = QRhiShaderResourceBinding::ComputeStage;
    std::unique_ptr<QRhiShaderResourceBindings> srb(m_device->rhi()->newShaderResourceBindings());
    srb->setBindings({
        QRhiShaderResourceBinding::uniformBufferWithDynamicOffset(0, stage, m_params.get(), int(sizeof(ParamsBlock))),
        QRhiShaderResourceBinding::bufferLoad(1, stage, m_haystack.get()),
        QRhiShaderResourceBinding::bufferLoad(2, stage, m_transitions.get()),
        QRhiShaderResourceBinding::bufferLoad(3, stage, m_aux.get()),
        QRhiShaderResourceBinding::bufferLoad(4, stage, m_segments.get()),
        QRhiShaderResourceBinding::bufferLoadStore(5, stage, m_itemState.get()),
        QRhiShaderResourceBinding::bufferLoadStore(6, stage, m_queue.get()),
        QRhiShaderResourceBinding::bufferLoadStore(7, stage, m_hits.get()),
        QRhiShaderResourceBinding::bufferLoad(8, stage, m_haystack.get()),
    });
    if (!srb->create()) {
        *error = QStringLiteral("cannot create the GPU shader resource bindings");
        return false;
    }
    m_bindings = std::move(srb);
    m_bindingsDirty = false;
    // Pipelines made with the old bindings stay valid: the layout is the same.
    return true;
}

bool GpuEngine::ensureTables(const PatternCatalog &catalog, QRhiResourceUpdateBatch *updates, int64_t *uploaded,
                             QString *error)
{
    *uploaded = 0;
    // Patterns of another catalog than the one counted for are not counted (as on the CPU engine).
    static const std::vector<bool> none;
    const std::vector<bool> &counted = m_counted.size() == catalog.patterns.size() ? m_counted : none;
    // prepare() hashed the scan's catalog once (the tables are megabytes); a batch of another is hashed here.
    const bool prepared = &catalog == m_preparedCatalog && catalog.groups.data() == m_preparedGroups;
    const uint64_t fingerprint = prepared ? m_preparedFingerprint : catalog.fingerprint();
    if (m_tablesUploaded && m_tablesFingerprint == fingerprint && m_tablesCounted == counted)
        return true;
    ScanTables tables;
    if (!ScanTables::build(catalog, counted, tables, error))
        return false;
    const int64_t tBytes = int64_t(tables.transitions.size()) * 4;
    const int64_t aBytes = int64_t(tables.aux.size()) * 4;
    if (!ensureBuffer(m_transitions, QRhiBuffer::Immutable, QRhiBuffer::StorageBuffer, tBytes, error)
        || !ensureBuffer(m_aux, QRhiBuffer::Immutable, QRhiBuffer::StorageBuffer, aBytes, error))
        return false;
    updates->uploadStaticBuffer(m_transitions.get(), 0, int(tBytes), tables.transitions.data());
    updates->uploadStaticBuffer(m_aux.get(), 0, int(aBytes), tables.aux.data());
    *uploaded = tBytes + aBytes;
    m_tablesFingerprint = fingerprint;
    m_tablesCounted = counted;
    m_tablesUploaded = true;
    return true;
}

void GpuEngine::prepareBatch(FileBatch &batch, const PatternCatalog &catalog) const
{
    if (m_disabled) // the batches run on the CPU engine
        return;
    const uint64_t numUnbounded = catalog.unboundedGroups();
    BatchPlan::buildSegmentTable(batch, numUnbounded, m_threads, batch.prepared);
    // Tagged with what it was built for: BatchPlan::build builds its own for another catalog.
    batch.prepared.push_back(uint32_t(numUnbounded));
}

const PatternCatalog &GpuEngine::deviceCatalog(const PatternCatalog &catalog, const KeyFilter **keys)
{
    *keys = nullptr;
    if (catalog.tablelessGroups() == 0)
        return catalog;
    if (catalog.prefilter && !catalog.prefilter->keyFilter.empty())
        *keys = &catalog.prefilter->keyFilter;
    return screenedFor(catalog).device;
}

void GpuEngine::prepare(const PatternCatalog &catalog, const LaunchParams &params, int64_t batchBytes)
{
    // Nothing of an earlier scan's prepare() that no batch took up (a scan cancelled or with nothing to read),
    // nor a batch copied ahead for it.
    m_prepareError.clear();
    m_preparedTableBytes = 0;
    m_next = nullptr;
    if (m_prefetcher)
        m_prefetcher->drop();
    const KeyFilter *keys = nullptr;
    const PatternCatalog &device = deviceCatalog(catalog, &keys);
    m_preparedCatalog = &device;
    m_preparedGroups = device.groups.data();
    m_preparedFingerprint = device.fingerprint();
    if (m_disabled)
        return;
    QString error;
    // The device's haystack buffer at its full size; the small batch's bytes go through a small staging buffer
    // (sized by the batch's capacity), as the scan's own buffers are imported.
    const int64_t haystackBytes = roundUp16(roundUp4(std::min(batchBytes, maxBatchBytes())));
    if (!ensureBuffer(m_haystack, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, haystackBytes, &error)) {
        m_prepareError = error;
        return;
    }
    // The spare too, where copyAhead() may fill it from another thread (which cannot make QRhi buffers). Without
    // it, batches are still copied ahead from the scan before theirs (HaystackPrefetcher::start()).
    if (copiesBesideScans())
        m_prefetcher->reserveSpare(haystackBytes);
    constexpr int64_t kBytes = 256;
    FileBatch b;
    b.haystack = allocateHaystack(kBytes);
    std::memset(b.haystack.get(), 0, size_t(kBytes));
    b.capacity = b.used = b.ownedBytes = kBytes;
    BatchFile f;
    f.fileIndex = 0;
    f.fileSize = f.holdEnd = f.ownEnd = kBytes;
    b.files.push_back(f);
    b.segments.push_back({ 0, 0, kBytes, 0, kBytes });
    BatchResult ignored;
    if (!runOnGpu(b, device, params, {}, ignored, &error, nullptr, keys))
        m_prepareError = error;
    if (m_prefetcher)
        m_prefetcher->open();
    // Shown as the first batch's: the bytes moved per batch add up to the scan's.
    m_preparedTableBytes += ignored.telemetry.bytesUploadedTables;
}

bool GpuEngine::scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                     const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error)
{
    // Tables prepare() uploaded are shown as the first batch's: the bytes moved per batch add up to the scan's.
    result.telemetry.bytesUploadedTables += std::exchange(m_preparedTableBytes, 0);
    const FileBatch *next = std::exchange(m_next, nullptr);
    if (m_disabled) {
        if (m_prefetcher)
            m_prefetcher->drop();
        *error = QStringLiteral("the GPU device failed earlier");
        return false;
    }
    // A catalog of tableless groups: the GPU marks where the prefilter's keys occur and walks the groups with
    // tables; the host screens the marked blocks.
    if (catalog.tablelessGroups() > 0)
        return scanScreened(batch, catalog, params, carryIn, result, error, next);
    return runOnGpu(batch, catalog, params, carryIn, result, error, next);
}

void GpuEngine::setNext(const FileBatch &next)
{
    m_next = &next;
}

bool GpuEngine::copiesBesideScans() const
{
    return m_prefetcher && m_prefetcher->concurrent();
}

void GpuEngine::copyAhead(const FileBatch &batch)
{
    if (copiesBesideScans() && !m_disabled)
        m_prefetcher->copyAhead(batch);
}

void GpuEngine::forgetNext()
{
    m_next = nullptr;
    if (m_prefetcher)
        m_prefetcher->drop();
}

bool GpuEngine::takePrefetched(const FileBatch &batch, bool *resident, QString *error)
{
    *resident = false;
    if (!m_prefetcher)
        return true;
    switch (m_prefetcher->take(batch, m_haystack, &m_profile.transferWaitMs)) {
    case HaystackPrefetcher::Taken::No:
        return true;
    case HaystackPrefetcher::Taken::Failed:
        *error = QStringLiteral("the GPU device failed while copying batch %1").arg(batch.index);
        m_disabled = true;
        return false;
    case HaystackPrefetcher::Taken::Yes:
        m_bindingsDirty = true;
        *resident = true;
        return true;
    }
    return true;
}

bool GpuEngine::runOnGpu(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                         const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error,
                         const FileBatch *next, const KeyFilter *keys)
{
    const auto t0 = Clock::now();
    m_threads = params.threads > 0 ? params.threads : hardwareThreads();
    m_profile = GpuBatchProfile();
    // This batch's haystack is on the GPU already when it was copied during the scan before.
    bool resident = false;
    if (!takePrefetched(batch, &resident, error))
        return false;
    m_profile.resident = resident;
    BatchTelemetry &t = result.telemetry;
    t.engine = name();
    t.backend = m_device->backendName();
    t.device = m_device->deviceName();

    BatchPlan plan;
    if (!BatchPlan::build(batch, catalog, carryIn, m_loopLimited, m_threads, m_segmentWords, plan, error))
        return false;
    result.carryOut.assign(batch.files.size() * plan.numUnbounded, 0);
    t.workItems = int64_t(plan.mainItems);
    if (plan.mainItems == 0 && !keys)
        return true;
    m_profile.tableMs = msSince(t0);

    const auto b0 = Clock::now();
    if (!ensureBuffer(m_haystack, QRhiBuffer::Static, QRhiBuffer::StorageBuffer,
                      haystackBufferBytes(batch, maxBatchBytes()), error)
        || !ensureBuffer(m_segments, QRhiBuffer::Static, QRhiBuffer::StorageBuffer,
                         int64_t(m_segmentWords.size()) * 4, error)
        || !ensureBuffer(m_itemState, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, int64_t(plan.stateWords) * 4,
                         error))
        return false;
    m_profile.setupMs += msSince(b0);
    // The next batch's copy runs beside this one's frames (on a transfer queue) or before them (on one queue).
    if (next && m_prefetcher)
        m_prefetcher->start(*next);

    FramesRun run;
    if (!runFrames(batch, catalog, params, plan, resident, keys, t, run, error))
        return false;
    return finishBatch(batch, catalog, plan, run, result, error);
}

bool GpuEngine::runFrames(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                          const BatchPlan &plan, bool resident, const KeyFilter *keys, BatchTelemetry &t,
                          FramesRun &run, QString *error)
{
    int64_t capacity = params.hitCapacity > 0
        ? params.hitCapacity
        : std::max(m_hitCapacity, m_loopLimited ? kDefaultHitCapacityLimited : kDefaultHitCapacity);
    const int64_t maxCapacity = std::max<int64_t>(1, m_device->limits().maxStorageBufferRange / (kHitWords * 4));
    // A re-run for a full hit ring finds the haystack and the segment table resident.
    bool withBatch = true;
    for (;;) {
        if (!ensureBuffer(m_hits, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, capacity * kHitWords * 4, error))
            return false;
        run = FramesRun();
        if (!runPasses(batch, catalog, params, plan, capacity, withBatch, resident, keys, t, run, error))
            return false;
        withBatch = false;
        if (!run.overflow)
            return true;
        // A full ring is never truncated: run again with room for every hit.
        t.hitsRerun += run.attempts;
        if (run.attempts > maxCapacity) {
            *error = QStringLiteral("%1 hits do not fit in the largest GPU hit ring").arg(run.attempts);
            return false;
        }
        capacity = std::min<int64_t>(maxCapacity, std::max<int64_t>(run.attempts, capacity * 2));
        if (params.hitCapacity <= 0)
            m_hitCapacity = capacity;
    }
}

bool GpuEngine::runPasses(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                          const BatchPlan &plan, int64_t capacity, bool withBatch, bool resident,
                          const KeyFilter *keys, BatchTelemetry &t, FramesRun &run, QString *error)
{
    // The main items and a first few fix-up passes in one frame, more passes in frames of their own until a pass
    // finds no unbounded segment to scan again.
    bool converged = plan.numUnbounded == 0;
    bool first = true;
    uint32_t generation = 0;
    while (first || !converged) {
        std::vector<ScanPhase> phases;
        if (first) {
            for (uint32_t r = 0; r < plan.rounds; ++r)
                phases.push_back({ 0, r, uint32_t(plan.mainItems), 0, -1 });
        }
        const int fixups = converged ? 0 : kFixupPassesPerFrame;
        for (int k = 0; k < fixups; ++k) {
            ++generation;
            for (uint32_t r = 0; r < plan.rounds; ++r)
                phases.push_back({ 1, r, uint32_t(plan.unboundedItems), generation, k });
        }
        FrameWork work;
        for (const ScanPhase &ph : phases)
            work.phaseItems.push_back(ph.items);
        work.paramWords = plan.paramWords(phases, capacity);
        work.queueWords = 2 + int(phases.size()) + 2 * fixups;
        work.attemptsBefore = run.attempts;
        work.withBatch = first && withBatch;
        work.resident = resident;
        work.keys = work.withBatch ? keys : nullptr;
        std::vector<uint32_t> q;
        const auto f0 = Clock::now();
        if (!runFrame(batch, catalog, params, work, t, q, error)) {
            forgetUploads();
            return false;
        }
        m_profile.framesMs += msSince(f0);
        ++m_profile.frames;
        const uint32_t counters = 1 + uint32_t(phases.size());
        if (first && q[counters] != plan.mainItems) {
            *error = QStringLiteral("%1 of %2 GPU work items completed").arg(q[counters]).arg(plan.mainItems);
            return false;
        }
        for (int k = 0; k < fixups; ++k) {
            const uint32_t done = q[counters + 1 + 2 * k];
            const uint32_t again = q[counters + 2 + 2 * k];
            if (done != plan.unboundedItems) {
                *error = QStringLiteral("%1 of %2 GPU fix-up items completed").arg(done).arg(plan.unboundedItems);
                return false;
            }
            if (converged)
                continue;
            ++run.passes;
            run.rescanned += again;
            converged = again == 0;
        }
        run.attempts = q[0];
        first = false;
        if (int64_t(run.attempts) > capacity) {
            run.overflow = true;
            return true;
        }
        if (!converged && run.passes >= kMaxFixupPasses) {
            *error = QStringLiteral("unbounded patterns did not settle after %1 passes").arg(run.passes);
            return false;
        }
    }
    return true;
}

void GpuEngine::forgetUploads()
{
    m_tablesUploaded = false;
    m_keyPass->forgetTables();
}

bool GpuEngine::finishBatch(const FileBatch &batch, const PatternCatalog &catalog, const BatchPlan &plan,
                            const FramesRun &run, BatchResult &result, QString *error)
{
    BatchTelemetry &t = result.telemetry;
    const auto r0 = Clock::now();
    BatchReadback back;
    switch (back.read(*m_device, m_hits.get(), m_itemState.get(), plan, run.attempts, run.rescanned > 0, t, error)) {
    case BatchReadback::Outcome::DeviceFailed:
        m_disabled = true;
        return false;
    case BatchReadback::Outcome::Incomplete:
        return false;
    case BatchReadback::Outcome::Done:
        break;
    }
    for (size_t k = 0; k < plan.carriedOut.size(); ++k)
        for (uint64_t u = 0; u < plan.numUnbounded; ++u)
            result.carryOut[plan.carriedOut[k].first * plan.numUnbounded + u] = back.carried(k, u, plan.numUnbounded);
    m_profile.readMs = msSince(r0);

    const auto h0 = Clock::now();
    const RingDecoder::Totals totals = RingDecoder::decode(back.entries(), run.attempts, back.generations(),
                                                           run.rescanned > 0, plan, batch, catalog, m_threads, result);
    t.hitsRerun += totals.rerunEntries;
    // Matches, counted ones included (as the CPU engine reports them); hitsRerun stays in ring entries.
    t.hits = totals.hits + totals.countedEnds;
    t.fixupPasses = run.passes;
    t.rescannedSegments = run.rescanned;
    m_profile.decodeMs = msSince(h0);
    if (m_profiling)
        m_profile.log(batch.index, plan.numSegments, plan.mainItems, t, totals.hits, totals.countedEnds,
                      totals.counts);
    return true;
}

QRhiComputePipeline *GpuEngine::setUpFrame(const FileBatch &batch, const PatternCatalog &catalog,
                                           const LaunchParams &params, const FrameWork &work, int paramsBytes,
                                           QRhiResourceUpdateBatch *updates, BatchTelemetry &t, QString *error)
{
    if (!ensureBuffer(m_queue, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, int64_t(work.queueWords) * 4, error)
        || !ensureBuffer(m_params, QRhiBuffer::Static, QRhiBuffer::UniformBuffer, paramsBytes, error))
        return nullptr;
    // Tables may have to be (re)created before the bindings that name them.
    const auto s0 = Clock::now();
    int64_t tableBytes = 0;
    if (!ensureTables(catalog, updates, &tableBytes, error) || !ensureBindings(error))
        return nullptr;
    if (work.keys && !m_keyPass->prepare(*work.keys, m_haystack.get(), batch.used, updates, t, error))
        return nullptr;
    bool pipelineHit = false;
    // The tables just ensured flag the counted patterns (an empty set when none is: setCountedPatterns).
    const bool counting = !m_tablesCounted.empty();
    QRhiComputePipeline *pipeline
        = m_pipelines->get(params.workgroupSize, counting, m_bindings.get(), &pipelineHit, error);
    if (!pipeline)
        return nullptr;
    t.pipelineCacheHits += pipelineHit ? 1 : 0;
    t.bytesUploadedTables += tableBytes;
    m_profile.setupMs += msSince(s0);
    return pipeline;
}

bool GpuEngine::runFrame(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                         const FrameWork &work, BatchTelemetry &t, std::vector<uint32_t> &queue, QString *error)
{
    QRhi *rhi = m_device->rhi();
    const uint32_t budget = m_loopLimited ? 1 : 0;
    const uint32_t maxItems = *std::max_element(work.phaseItems.begin(), work.phaseItems.end());
    const int wg = params.workgroupSize;
    const int groups = ScanDispatch::workerGroups(params.workerGroups, wg, maxItems,
                                                  m_device->limits().maxWorkgroupsPerDimension, m_loopLimited);
    const int lanes = groups * wg;
    t.workerGroups = groups;
    t.workgroupSize = wg;
    bool planHit = false;
    const std::vector<uint32_t> &dispatchPhases = m_plans.dispatchPhases(work.phaseItems, lanes, budget, &planHit);
    t.planCacheHits += planHit ? 1 : 0;

    const int align = rhi->ubufAlignment();
    const int paramsStride = (int(sizeof(ParamsBlock)) + align - 1) / align * align;
    const int64_t phases = int64_t(work.phaseItems.size());
    QRhiResourceUpdateBatch *updates = rhi->nextResourceUpdateBatch();
    QRhiComputePipeline *pipeline
        = setUpFrame(batch, catalog, params, work, int(paramsStride * phases), updates, t, error);
    if (!pipeline) {
        updates->release();
        return false;
    }

    QByteArray paramBytes(int(paramsStride * phases), 0);
    for (int64_t k = 0; k < phases; ++k)
        std::memcpy(paramBytes.data() + k * paramsStride, work.paramWords.data() + k * kParamsWords,
                    sizeof(ParamsBlock));
    std::vector<uint32_t> queueInit(size_t(work.queueWords), 0);
    queueInit[0] = work.attemptsBefore;
    const int64_t hayBytes = roundUp4(batch.used);
    const VulkanHostBuffer *imported
        = work.withBatch && !work.resident ? m_hostImports->find(batch.haystack.get(), hayBytes) : nullptr;
    m_staging->stage({ batch, work.withBatch, work.resident, imported, m_segmentWords, queueInit, paramBytes },
                     { m_haystack.get(), m_segments.get(), m_queue.get(), m_params.get() }, updates, m_threads, t,
                     m_profile);

    QRhiBufferReadbackResult queueBack;
    bool queueDone = false;
    queueBack.completed = [&queueDone] { queueDone = true; };
    const ScanDispatch::Recording rec { dispatchPhases, pipeline, m_bindings.get(), paramsStride, groups,
                                        m_queue.get(), work.queueWords, &queueBack };
    if (!submitFrame(work, updates, rec, hayBytes, error))
        return false;
    if (!queueDone) {
        RhiFrame frame(rhi); // OpenGL may complete read-backs at the next frame
    }
    if (!queueDone || queueBack.data.size() != work.queueWords * 4) {
        *error = QStringLiteral("the GPU read-back did not complete");
        return false;
    }
    if (work.keys && !m_keyPass->finish(t, error))
        return false;
    t.gpuMs += m_timer->elapsedMs();
    t.bytesReadBack += queueBack.data.size();
    queue.resize(size_t(work.queueWords));
    std::memcpy(queue.data(), queueBack.data.constData(), size_t(work.queueWords) * 4);
    t.occupancy = ScanDispatch::occupancy(work.phaseItems, dispatchPhases.size(), lanes);
    return true;
}

bool GpuEngine::submitFrame(const FrameWork &work, QRhiResourceUpdateBatch *updates,
                            const ScanDispatch::Recording &rec, int64_t haystackBytes, QString *error)
{
    RhiFrame frame(m_device->rhi());
    if (!frame.isActive()) {
        updates->release();
        *error = QStringLiteral("cannot begin a GPU frame");
        m_disabled = true;
        return false;
    }
    QRhiCommandBuffer *cb = frame.commandBuffer();
    // Uploads first, outside the timed part: the timestamps measure the kernels alone.
    const bool copied = m_staging->record(cb, m_uploadTimer.get());
    if (work.withBatch && work.resident)
        m_prefetcher->recordAcquire(cb, m_haystack.get(), haystackBytes);
    cb->beginComputePass(updates);
    cb->endComputePass();
    m_timer->begin(cb);
    if (work.keys)
        m_keyPass->record(cb);
    ScanDispatch::record(*m_device, cb, rec, *m_timer);
    const auto w0 = Clock::now();
    if (frame.end() != QRhi::FrameOpSuccess) {
        *error = QStringLiteral("the GPU device failed (frame result %1)").arg(int(frame.result()));
        m_disabled = true;
        return false;
    }
    m_profile.frameWaitMs += msSince(w0);
    if (m_uploadTimer && copied)
        m_profile.uploadMs += m_uploadTimer->elapsedMs();
    return true;
}

const GpuEngine::Screened &GpuEngine::screenedFor(const PatternCatalog &catalog)
{
    if (m_screened && m_screened->source == &catalog && m_screened->sourceGroups == catalog.groups.data())
        return *m_screened;
    auto s = std::make_unique<Screened>();
    s->source = &catalog;
    s->sourceGroups = catalog.groups.data();
    const AtomPrefilter *pre = catalog.prefilter.get();
    for (size_t g = 0; g < catalog.groups.size(); ++g) {
        const DfaGroup &group = catalog.groups[g];
        if (!group.tableless && !(pre && pre->covers(int(g)))) {
            if (group.unbounded())
                s->unboundedOf.push_back(s->sourceUnbounded);
            s->device.groups.push_back(group);
            for (int p : group.patterns)
                s->screenedOnDevice = s->screenedOnDevice || (pre && pre->isScreened(p));
        }
        s->sourceUnbounded += group.unbounded() ? 1 : 0;
    }
    s->device.patterns = catalog.patterns;
    m_screened = std::move(s);
    return *m_screened;
}

bool GpuEngine::scanScreened(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                             const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error,
                             const FileBatch *next)
{
    const Screened &s = screenedFor(catalog);
    const AtomPrefilter *pre = catalog.prefilter.get();
    if (!pre) {
        *error = QStringLiteral("the rules' tableless groups have no prefilter");
        return false;
    }
    // Carried states of the device's unbounded groups, in and out, from and to the catalog's numbering.
    const size_t sourceU = s.sourceUnbounded, deviceU = s.unboundedOf.size();
    const size_t carriedFiles = sourceU > 0 ? carryIn.size() / sourceU : 0;
    std::vector<uint32_t> deviceCarry(carriedFiles * deviceU, 0);
    for (size_t f = 0; f < carriedFiles; ++f)
        for (size_t k = 0; k < deviceU; ++k)
            deviceCarry[f * deviceU + k] = carryIn[f * sourceU + s.unboundedOf[k]];
    const KeyFilter *keys = pre->keyFilter.empty() ? nullptr : &pre->keyFilter;
    if (!runOnGpu(batch, s.device, params, deviceCarry, result, error, next, keys))
        return false;
    std::vector<uint32_t> carryOut(batch.files.size() * sourceU, 0);
    for (size_t f = 0; f < batch.files.size() && deviceU > 0; ++f)
        for (size_t k = 0; k < deviceU; ++k)
            carryOut[f * sourceU + s.unboundedOf[k]] = result.carryOut[f * deviceU + k];
    result.carryOut = std::move(carryOut);
    if (s.screenedOnDevice) {
        // The screens report these patterns; a group's DFA must not report them again (as DfaWalker skips them).
        std::erase_if(result.hits, [&](const RawHit &h) { return pre->isScreened(int(h.pattern)); });
        std::erase_if(result.counts, [&](const RawCount &c) { return pre->isScreened(int(c.pattern)); });
    }
    if (!keys)
        m_keyPass->clear(batch.used);
    const std::vector<uint32_t> &blocks = m_keyPass->blockWords();
    result.screenBlocks.assign(blocks.begin() + 1, blocks.end());
    result.screensPending = true;
    BatchTelemetry &t = result.telemetry;
    t.keyBlocks = 0;
    for (uint32_t w : result.screenBlocks)
        for (uint32_t v = w; v != 0; v >>= 4)
            t.keyBlocks += (v & 15u) != 0 ? 1 : 0;
    return true;
}

double GpuEngine::residentKernelMs(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                                   int repeats, QString *error)
{
    // The first run uploads the tables; the following ones upload the same haystack again, but the kernel
    // time (timestamps around the dispatches only) does not include uploads.
    double best = 0;
    std::vector<uint32_t> carry(batch.files.size() * catalog.groups.size(), 0);
    const KeyFilter *keys = nullptr;
    const PatternCatalog &device = deviceCatalog(catalog, &keys);
    for (int i = 0; i < repeats; ++i) {
        BatchResult r;
        if (!runOnGpu(batch, device, params, carry, r, error, nullptr, keys))
            return -1;
        if (r.telemetry.gpuMs > 0 && (best == 0 || r.telemetry.gpuMs < best))
            best = r.telemetry.gpuMs;
    }
    return best;
}

} // namespace Hitscope
