// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpuengine.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <sys/mman.h>

#include "automata/atomprefilter.h"
#include "automata/keyfilter.h"
#include "gpu/gputimer.h"
#include "gpu/rhiframe.h"
#include "gpu/vulkanhostbuffer.h"
#include "gpu/vulkanstaging.h"
#include "gpu/vulkantransfer.h"
#include "util/elapsed.h"
#include "util/logcategories.h"
#include "util/parallel.h"
#include "util/runtimeswitches.h"

namespace Hitscope {

namespace {

constexpr int kSegmentWords = 8;
constexpr int kHitWords = 4;
constexpr int kGroupWords = 12;
constexpr uint32_t kNone = 0xffffffffu;
// Accept entries of counted patterns carry kCountedBit (free below the kind bits: pattern ids stay under
// kMaxPatterns); the kernel writes their sums as ring entries with kCountFlag in the pattern word and the
// number in the end word, per pattern or, with kStateFlag, per visited state (shaders/scan.comp).
constexpr uint32_t kCountedBit = 0x20000000u;
constexpr uint32_t kMaxPatterns = kCountedBit;
constexpr uint32_t kCountFlag = 0x80000000u;
constexpr uint32_t kStateFlag = 0x40000000u;
// In an accept index: every end of that state before the end of the file is counted and at the byte itself.
constexpr uint32_t kCountedState = 0x80000000u;
// Mesa's software drivers end an invocation after 65,535 loop iterations: one piece of this many bytes per
// invocation and dispatch leaves room for the hit loops.
constexpr uint32_t kLimitedPieceBytes = 16384;
constexpr uint32_t kUnlimitedPieceBytes = 0x7fffffffu;
// Room for about a million hits (12 MiB) before a batch has to run again with a larger ring; Mesa's storage
// bindings are small, so less there.
constexpr int64_t kDefaultHitCapacity = 1 << 20;
constexpr int64_t kDefaultHitCapacityLimited = 1 << 16;
constexpr size_t kMaxCachedPipelines = 32;
constexpr size_t kMaxCachedPlans = 32;
// Bytes an unbounded group's segment scans before the bytes it owns, so that its DFA usually reaches the same
// state as the segment before it did; where not, it runs again (see runOnGpu).
constexpr int64_t kUnboundedWarmup = 512;
constexpr int kMaxFixupPasses = 4096;
// Fix-up passes recorded per frame: one that finds nothing to scan again costs a few microseconds on a large
// GPU, a frame (a host round trip) far more.
constexpr int kFixupPassesPerFrame = 8;

// The kernel's Params block (shaders/scan.comp).
struct ParamsBlock
{
    uint32_t mode;
    uint32_t round;
    uint32_t headSlot;
    uint32_t counterSlot;
    uint32_t numItems;
    uint32_t budget;
    uint32_t pieceBytes;
    uint32_t hitCapacity;
    uint32_t numGroups;
    uint32_t numSegments;
    uint32_t numUnbounded;
    uint32_t unboundedBase;
    uint32_t carryBase;
    uint32_t generation;
    uint32_t pad[2];
};

constexpr uint32_t kEndsFile = 1;
constexpr uint32_t kChunkStart = 32;
constexpr uint32_t kFirstChunk = 64;
constexpr int kBoundedContextShift = 1;
constexpr int kUnboundedContextShift = 3;

// Runs fn(begin, end, slice) over [0, count) in slices of at least minSlice, one per thread, `maxThreads` at most.
template<typename F>
void parallelSlices(size_t count, size_t minSlice, int maxThreads, F &&fn)
{
    const size_t threads = std::min<size_t>(size_t(std::max(1, maxThreads)), std::max<size_t>(1, count / std::max<size_t>(1, minSlice)));
    const size_t part = (count + threads - 1) / threads;
    runWorkers(int(threads), [&](int k) {
        const size_t begin = std::min(count, size_t(k) * part);
        fn(begin, std::min(count, begin + part), size_t(k));
    });
}

// Spreads a large copy over a few threads: one thread's memcpy is slower than reading the files was.
void parallelCopy(uint8_t *dst, const uint8_t *src, int64_t bytes, int maxThreads)
{
    const int threads = bytes < (int64_t(64) << 20) ? 1 : std::clamp(maxThreads, 1, 8);
    const int64_t part = ((bytes + threads - 1) / threads + 4095) & ~int64_t(4095);
    runWorkers(threads, [&](int t) {
        const int64_t begin = std::min(bytes, t * part);
        const int64_t end = std::min(bytes, begin + part);
        std::memcpy(dst + begin, src + begin, size_t(end - begin));
    });
}

int64_t roundUp4(int64_t v)
{
    return (v + 3) & ~int64_t(3);
}

// The kernel reads the haystack 16 bytes at a time.
int64_t roundUp16(int64_t v)
{
    return (v + 15) & ~int64_t(15);
}

} // namespace

// One kernel launch's worth of work: every item of a mode, one piece (round) of each.
struct GpuEngine::Phase
{
    uint32_t mode = 0; // 0 main items, 1 a fix-up pass over the unbounded items
    uint32_t round = 0;
    uint32_t items = 0;
    uint32_t generation = 0;
    int pass = -1;     // fix-up pass index within the frame
};

struct GpuEngine::Plan
{
    std::vector<uint32_t> dispatchPhases; // the phase of each dispatch, in order; a new phase is a new pass
};

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

// Haystacks of newHaystack() that the device imported, by their first byte. Importing pins the memory and maps
// it for the GPU, which costs about as much as reading the batch, so a haystack given back (the scan's buffers
// when the scan ends) is kept, imported, for the next scan.
struct GpuEngine::HostImports
{
    static constexpr size_t kMaxIdle = Engine::kScanBuffers; // the buffers of one scan

    std::mutex mutex;
    RhiDevice *device = nullptr; // null once the engine is gone
    std::unordered_map<const uint8_t *, std::unique_ptr<VulkanHostBuffer>> buffers; // handed out or idle
    std::vector<std::pair<uint8_t *, size_t>> idle;
    int64_t made = 0;
};

GpuEngine::GpuEngine(std::unique_ptr<RhiDevice> device)
    : m_device(std::move(device))
    , m_hostImports(std::make_shared<HostImports>())
{
    if (VulkanHostBuffer::isSupported(*m_device))
        m_hostImports->device = m_device.get();
    const GpuDeviceInfo &info = m_device->info();
    const QString name = info.deviceName.toLower();
    m_loopLimited = info.deviceType == QLatin1String("cpu") || name.contains(QLatin1String("llvmpipe"))
        || name.contains(QLatin1String("lavapipe")) || name.contains(QLatin1String("softpipe"));
    m_timer = std::make_unique<GpuTimer>(*m_device);
    m_profile = RuntimeSwitches::gpuProfile();
    if (m_profile)
        m_uploadTimer = std::make_unique<GpuTimer>(*m_device);
    // Only imported haystacks are copied ahead: a plain one would first need a staging copy of its own.
    if (m_hostImports->device && !RuntimeSwitches::gpuNoPrefetch())
        m_transfer = VulkanTransfer::create(*m_device);
}

GpuEngine::~GpuEngine()
{
    // QRhi resources go before the device (declaration order would destroy the device last anyway). A copy in
    // flight reads an imported haystack: it ends before the imports go.
    m_transfer.reset();
    {
        // Haystacks still alive keep their memory, but not its import, which needs the device.
        std::lock_guard lock(m_hostImports->mutex);
        m_hostImports->buffers.clear();
        for (const auto &[p, n] : m_hostImports->idle)
            ::munmap(p, n);
        m_hostImports->idle.clear();
        m_hostImports->device = nullptr;
    }
    m_timer.reset();
    m_uploadTimer.reset();
    m_staging.reset();
    m_pipelines.clear();
    m_bindings.reset();
    m_params.reset();
    m_haystack.reset();
    m_spareHaystack.reset();
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
    // Whole huge pages: the import needs whole pages, and the memory is asked to be huge pages anyway.
    constexpr int64_t kHugePage = int64_t(2) << 20;
    const size_t size = size_t((std::max<int64_t>(bytes, 1) + kHugePage - 1) / kHugePage * kHugePage);
    const std::shared_ptr<HostImports> imports = m_hostImports;
    auto giveBack = [imports](uint8_t *p, size_t n) {
        {
            std::lock_guard lock(imports->mutex);
            const auto it = imports->buffers.find(p);
            if (it != imports->buffers.end()) {
                if (imports->idle.size() < HostImports::kMaxIdle) {
                    imports->idle.emplace_back(p, n);
                    return;
                }
                imports->buffers.erase(it); // the import goes before the memory
            }
        }
        ::munmap(p, n);
    };
    RhiDevice *device = nullptr;
    {
        std::lock_guard lock(imports->mutex);
        device = imports->device;
        const auto same = std::find_if(imports->idle.begin(), imports->idle.end(),
                                       [&](const auto &e) { return e.second == size; });
        if (same != imports->idle.end()) {
            uint8_t *p = same->first;
            imports->idle.erase(same);
            return Haystack(p, HaystackFree { size, giveBack });
        }
        // Buffers of another batch size (the size was changed) would stay pinned for nothing.
        for (const auto &[p, n] : imports->idle) {
            imports->buffers.erase(p);
            ::munmap(p, n);
        }
        imports->idle.clear();
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
    const int threads = std::clamp(m_threads.load(std::memory_order_relaxed), 1, 8);
    const size_t part = (size / size_t(threads) + kHugePage - 1) / kHugePage * kHugePage;
    runWorkers(threads, [&](int t) {
        for (size_t at = size_t(t) * part; at < std::min(size, size_t(t + 1) * part); at += 4096)
            mem[at] = 0;
    });
    // Outside the lock: the engine thread looks up imports meanwhile. The device outlives this call: the
    // engine is destroyed only after the scans that read batches (see the class comment).
    const auto t0 = Clock::now();
    std::unique_ptr<VulkanHostBuffer> imported = VulkanHostBuffer::create(*device, h.get(), int64_t(size));
    if (m_profile)
        qCInfo(lcGpu, "%s %zu MiB of host memory in %.1f ms", imported ? "imported" : "could not import",
                     size >> 20, msSince(t0));
    if (!imported)
        return h;
    uint8_t *p = h.release();
    std::lock_guard lock(imports->mutex);
    imports->buffers.emplace(p, std::move(imported));
    ++imports->made;
    return Haystack(p, HaystackFree { size, giveBack });
}

int64_t GpuEngine::hostImportsMade() const
{
    std::lock_guard lock(m_hostImports->mutex);
    return m_hostImports->made;
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
    return m_loopLimited ? kLimitedPieceBytes - 1024 : 4096;
}

bool GpuEngine::ensureBuffer(std::unique_ptr<QRhiBuffer> &buffer, QRhiBuffer::Type type,
                             QRhiBuffer::UsageFlags usage, int64_t bytes, QString *error)
{
    bytes = std::max<int64_t>(16, roundUp4(bytes));
    if (buffer && int64_t(buffer->size()) >= bytes)
        return true;
    if (bytes > m_device->limits().maxStorageBufferRange && m_device->limits().maxStorageBufferRange > 0
        && usage.testFlag(QRhiBuffer::StorageBuffer)) {
        *error = QStringLiteral("a GPU buffer of %1 bytes exceeds the device's storage binding limit (%2 bytes)")
                     .arg(bytes)
                     .arg(m_device->limits().maxStorageBufferRange);
        return false;
    }
    // Grow with headroom so that a slowly growing scan does not recreate buffers every batch.
    const int64_t grown = buffer ? int64_t(buffer->size()) * 3 / 2 : 0;
    int64_t size = std::min<int64_t>(std::max(bytes, grown), INT32_MAX - 3) & ~int64_t(3);
    if (usage.testFlag(QRhiBuffer::StorageBuffer) && m_device->limits().maxStorageBufferRange > 0)
        size = std::min(size, m_device->limits().maxStorageBufferRange & ~int64_t(3));
    std::unique_ptr<QRhiBuffer> b(m_device->rhi()->newBuffer(type, usage, int(std::max(size, bytes))));
    if (!b->create()) {
        *error = QStringLiteral("cannot create a GPU buffer of %1 bytes").arg(bytes);
        return false;
    }
    buffer = std::move(b);
    m_bindingsDirty = true;
    return true;
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

QRhiComputePipeline *GpuEngine::pipelineFor(int workgroupSize, bool counting, bool *cacheHit, QString *error)
{
    for (auto it = m_pipelines.begin(); it != m_pipelines.end(); ++it) {
        if (it->workgroupSize == workgroupSize && it->counting == counting) {
            m_pipelines.splice(m_pipelines.begin(), m_pipelines, it);
            *cacheHit = true;
            return m_pipelines.front().pipeline.get();
        }
    }
    *cacheHit = false;
    // HITSCOPE_GPU_SHADER_DIR: kernels baked elsewhere (same names), for comparing variants in one benchmark run.
    const QString dir = RuntimeSwitches::gpuShaderDir();
    const QString name = QStringLiteral("/scan_wg%1%2.comp.qsb")
                             .arg(workgroupSize)
                             .arg(counting ? QString() : QStringLiteral("_nocount"));
    const QShader shader = RhiDevice::loadShader(dir + name, error);
    if (!shader.isValid()) {
        *error = QStringLiteral("no scan kernel for workgroup size %1 (sizes offered: 32, 64, 128, 256, 512): %2")
                     .arg(workgroupSize)
                     .arg(*error);
        return nullptr;
    }
    std::unique_ptr<QRhiComputePipeline> p(m_device->rhi()->newComputePipeline());
    p->setShaderStage({ QRhiShaderStage::Compute, shader });
    p->setShaderResourceBindings(m_bindings.get());
    if (!p->create()) {
        *error = QStringLiteral("cannot create the GPU scan pipeline (workgroup size %1)").arg(workgroupSize);
        return nullptr;
    }
    m_pipelines.push_front({ workgroupSize, counting, std::move(p) });
    if (m_pipelines.size() > kMaxCachedPipelines)
        m_pipelines.pop_back();
    return m_pipelines.front().pipeline.get();
}

const GpuEngine::Plan &GpuEngine::planFor(const std::vector<uint32_t> &queueLens, int lanes, uint32_t budget,
                                          bool *cacheHit)
{
    uint64_t key = 1469598103934665603ull ^ uint64_t(lanes) ^ (uint64_t(budget) << 32);
    for (uint32_t q : queueLens)
        key = (key ^ q) * 1099511628211ull;
    for (auto it = m_plans.begin(); it != m_plans.end(); ++it) {
        if (it->first == key) {
            m_plans.splice(m_plans.begin(), m_plans, it);
            *cacheHit = true;
            return *m_plans.front().second;
        }
    }
    *cacheHit = false;
    auto plan = std::make_unique<Plan>();
    const int64_t perDispatch = budget == 0 ? INT64_MAX : int64_t(lanes) * budget;
    for (uint32_t r = 0; r < queueLens.size(); ++r) {
        const int64_t waves = budget == 0 ? 1 : (int64_t(queueLens[r]) + perDispatch - 1) / perDispatch;
        for (int64_t w = 0; w < std::max<int64_t>(1, waves); ++w)
            plan->dispatchPhases.push_back(r);
    }
    m_plans.emplace_front(key, std::move(plan));
    if (m_plans.size() > kMaxCachedPlans)
        m_plans.pop_back();
    return *m_plans.front().second;
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
    // Transitions of every group back to back; aux: group descriptors, byte classes, accept lists.
    std::vector<uint32_t> trans;
    std::vector<uint32_t> aux(catalog.groups.size() * kGroupWords, 0);
    uint32_t unbounded = 0;
    for (size_t g = 0; g < catalog.groups.size(); ++g) {
        const Dfa &d = catalog.groups[g].dfa;
        uint32_t *desc = aux.data() + g * kGroupWords;
        desc[0] = uint32_t(trans.size());
        desc[1] = d.numClasses;
        std::copy(d.start.begin(), d.start.end(), desc + 5);
        desc[8] = catalog.groups[g].unbounded() ? unbounded++ : kNone;
        trans.insert(trans.end(), d.transitions.begin(), d.transitions.end());
    }
    for (size_t g = 0; g < catalog.groups.size(); ++g)
        if (catalog.groups[g].unbounded())
            aux.push_back(uint32_t(g));
    for (size_t g = 0; g < catalog.groups.size(); ++g) {
        const Dfa &d = catalog.groups[g].dfa;
        aux[g * kGroupWords + 2] = uint32_t(aux.size());
        aux.insert(aux.end(), d.byteClass.begin(), d.byteClass.end());
        aux[g * kGroupWords + 3] = uint32_t(aux.size());
        const size_t indexAt = aux.size();
        aux.insert(aux.end(), d.acceptIndex.begin(), d.acceptIndex.end());
        aux[g * kGroupWords + 4] = uint32_t(aux.size());
        for (const uint32_t e : d.acceptEntries)
            aux.push_back(!counted.empty() && counted[Dfa::entryPattern(e)] ? e | kCountedBit : e);
        if (counted.empty() || d.numStates >= kStateFlag - 1) // a state's key must not read as an empty slot
            continue;
        // States whose ends before the end of the file are all counted and all at the byte itself: the kernel
        // counts visits to them (a run of zeros) and never looks at their entries; the host does (runOnGpu).
        for (uint32_t st = 0; st < d.numStates; ++st) {
            bool any = false, all = true;
            for (uint32_t k = d.acceptIndex[st]; k < d.acceptIndex[st + 1]; ++k) {
                const uint32_t e = d.acceptEntries[k];
                if (Dfa::entryKind(e) == Dfa::Eof)
                    continue;
                any = true;
                all = all && Dfa::entryKind(e) == Dfa::Now && counted[Dfa::entryPattern(e)];
            }
            if (any && all)
                aux[indexAt + st] |= kCountedState;
        }
    }
    if (trans.size() > 0xffffffffu / 2 || aux.size() > ~kCountedState || catalog.patterns.size() > kMaxPatterns) {
        *error = QStringLiteral("the rule tables are too large for the GPU engine");
        return false;
    }
    trans.push_back(0); // never empty
    const int64_t tBytes = int64_t(trans.size()) * 4;
    const int64_t aBytes = int64_t(aux.size()) * 4;
    if (!ensureBuffer(m_transitions, QRhiBuffer::Immutable, QRhiBuffer::StorageBuffer, tBytes, error)
        || !ensureBuffer(m_aux, QRhiBuffer::Immutable, QRhiBuffer::StorageBuffer, aBytes, error))
        return false;
    updates->uploadStaticBuffer(m_transitions.get(), 0, int(tBytes), trans.data());
    updates->uploadStaticBuffer(m_aux.get(), 0, int(aBytes), aux.data());
    *uploaded = tBytes + aBytes;
    m_tablesFingerprint = fingerprint;
    m_tablesCounted = counted;
    m_tablesUploaded = true;
    return true;
}

namespace {
// The segment table: what the kernel needs to derive every (segment, group) item, 8 words per segment.
// Unbounded groups start each segment a warm-up before the bytes it owns, so that its DFA usually reaches
// the state the previous segment ended in; the fix-up passes scan again where it did not. The carried states
// (word 6 of a continuing chunk's first segment) depend on the batch before and are filled in by runOnGpu.
void buildSegmentTable(const FileBatch &batch, uint64_t numUnbounded, int threads, std::vector<uint32_t> &words)
{
    const uint8_t *haystack = batch.haystack.get();
    auto context = [&](const BatchFile &bf, int64_t scanBegin) -> uint32_t {
        if (scanBegin == 0)
            return Dfa::AtFileStart;
        return isWordByte(*bf.at(haystack, scanBegin - 1)) ? Dfa::AfterWord : Dfa::AfterNonWord;
    };
    const size_t numSegments = batch.segments.size();
    words.assign(numSegments * kSegmentWords, 0);
    // Segments are independent here (144,000 of a 512 MiB batch took 6-10 ms on one thread).
    parallelSlices(numSegments, 1 << 14, threads, [&](size_t begin, size_t end, size_t) {
        for (size_t i = begin; i < end; ++i) {
            const Segment &seg = batch.segments[i];
            const BatchFile &bf = batch.files[seg.batchFile];
            uint32_t *w = words.data() + i * kSegmentWords;
            const bool chunkStart = seg.ownBegin == bf.ownBegin;
            w[0] = uint32_t(bf.dataOffset + (seg.scanBegin - bf.holdBegin));
            w[1] = uint32_t(seg.scanEnd - seg.scanBegin);
            w[2] = uint32_t(seg.ownBegin - seg.scanBegin);
            w[3] = uint32_t(seg.ownEnd - seg.scanBegin);
            w[4] = (seg.scanEnd == bf.fileSize ? kEndsFile : 0) | (context(bf, seg.scanBegin) << kBoundedContextShift)
                | (chunkStart ? kChunkStart : 0) | (bf.firstChunk ? kFirstChunk : 0);
            if (numUnbounded == 0)
                continue;
            const int64_t uBegin = chunkStart ? seg.ownBegin : std::max(bf.ownBegin, seg.ownBegin - kUnboundedWarmup);
            if (!chunkStart)
                w[4] |= context(bf, uBegin) << kUnboundedContextShift;
            w[5] = uint32_t(bf.dataOffset + (uBegin - bf.holdBegin));
            w[6] = kNone;
        }
    });
}
} // namespace

void GpuEngine::prepareBatch(FileBatch &batch, const PatternCatalog &catalog) const
{
    if (m_disabled) // the batches run on the CPU engine
        return;
    const uint64_t numUnbounded = catalog.unboundedGroups();
    buildSegmentTable(batch, numUnbounded, m_threads, batch.prepared);
    // Tagged with what it was built for: runOnGpu builds its own for another catalog.
    batch.prepared.push_back(uint32_t(numUnbounded));
}

void GpuEngine::prepare(const PatternCatalog &catalog, const LaunchParams &params, int64_t batchBytes)
{
    // Nothing of an earlier scan's prepare() that no batch took up (a scan cancelled or with nothing to read),
    // nor a batch copied ahead for it.
    m_prepareError.clear();
    m_preparedTableBytes = 0;
    m_next = nullptr;
    dropPrefetch();
    const bool screened = catalog.tablelessGroups() > 0;
    const PatternCatalog &deviceCatalog = screened ? screenedFor(catalog).device : catalog;
    const KeyFilter *keys = screened && catalog.prefilter ? &catalog.prefilter->keyFilter : nullptr;
    m_preparedCatalog = &deviceCatalog;
    m_preparedGroups = deviceCatalog.groups.data();
    m_preparedFingerprint = deviceCatalog.fingerprint();
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
    // it, batches are still copied ahead from the scan before theirs (startPrefetch()).
    if (copiesBesideScans()) {
        std::lock_guard lock(m_prefetchMutex);
        QString ignored;
        ensureBuffer(m_spareHaystack, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, haystackBytes, &ignored);
    }
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
    if (!runOnGpu(b, deviceCatalog, params, {}, ignored, &error, nullptr, keys && !keys->empty() ? keys : nullptr))
        m_prepareError = error;
    std::lock_guard lock(m_prefetchMutex);
    m_copyAheadOpen = true;
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
        dropPrefetch();
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
    return m_transfer && m_transfer->concurrent();
}

void GpuEngine::copyAhead(const FileBatch &batch)
{
    if (!copiesBesideScans() || m_disabled)
        return;
    std::lock_guard lock(m_prefetchMutex);
    // The spare buffer is made by prepare() on the scanning thread (QRhi's); here it is only written. Not while
    // prepare() runs: its own small batch would find this copy and drop it.
    if (m_copyAheadOpen)
        startPrefetch(batch, false);
}

void GpuEngine::forgetNext()
{
    m_next = nullptr;
    dropPrefetch();
}

void GpuEngine::dropPrefetch()
{
    std::lock_guard lock(m_prefetchMutex);
    m_copyAheadOpen = false;
    if (m_transfer)
        m_transfer->wait();
    // A copy nobody scans leaves the spare released by the transfer queue and never acquired; a new buffer
    // starts without that history (Vulkan's validation warns of a second release without an acquire between).
    if (m_prefetched.batch)
        m_spareHaystack.reset();
    m_prefetched = {};
}

int64_t GpuEngine::haystackBufferBytes(const FileBatch &batch) const
{
    // Sized for the batch's buffer, not its bytes: the small first batches of a ramp would grow it again.
    const int64_t bytes = std::min(std::max(batch.capacity, batch.used), maxBatchBytes());
    return roundUp16(roundUp4(std::max(bytes, batch.used)));
}

const VulkanHostBuffer *GpuEngine::importedBuffer(const FileBatch &batch, int64_t bytes) const
{
    std::lock_guard lock(m_hostImports->mutex);
    const auto it = m_hostImports->buffers.find(batch.haystack.get());
    return it != m_hostImports->buffers.end() && it->second->size() >= bytes ? it->second.get() : nullptr;
}

void GpuEngine::startPrefetch(const FileBatch &next, bool mayGrowSpare)
{
    const int64_t bytes = roundUp4(next.used);
    // A copy in flight (or done and not yet taken up) holds the spare buffer: copyAhead() may have started this
    // very batch's already.
    if (bytes == 0 || m_prefetched.batch)
        return;
    const VulkanHostBuffer *source = importedBuffer(next, bytes);
    if (!source)
        return;
    const int64_t needed = haystackBufferBytes(next);
    if (mayGrowSpare) {
        QString ignored; // the batch is uploaded in its own frame instead, which meets (and reports) the failure
        if (!ensureBuffer(m_spareHaystack, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, needed, &ignored))
            return;
    } else if (!m_spareHaystack || m_spareHaystack->size() < needed) {
        return;
    }
    if (m_transfer->submit(*source, m_spareHaystack.get(), bytes))
        m_prefetched = { &next, next.haystack.get(), next.index, next.used };
}

bool GpuEngine::runOnGpu(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                         const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error,
                         const FileBatch *next, const KeyFilter *keys)
{
    const auto t0 = Clock::now();
    m_threads = params.threads > 0 ? params.threads : hardwareThreads();
    m_profileStagingMs = m_profileUploadMs = m_profileFrameWaitMs = m_profileSetupMs = m_profileTransferWaitMs = 0;
    // This batch's haystack is on the GPU already when it was copied during the scan before.
    bool resident = false;
    {
        std::unique_lock lock(m_prefetchMutex);
        // A copy of another batch (a later one, copied while this one could not be: empty, or not imported) stays
        // in flight for its own scan: this scan uses the other buffer.
        const bool mine = m_prefetched.batch == &batch && m_prefetched.haystack == batch.haystack.get()
            && m_prefetched.index == batch.index && m_prefetched.used == batch.used;
        if (mine) {
            const auto w0 = Clock::now();
            const bool copied = m_transfer->wait();
            m_profileTransferWaitMs = msSince(w0);
            m_prefetched = {};
            if (!copied) {
                *error = QStringLiteral("the GPU device failed while copying batch %1").arg(batch.index);
                m_disabled = true;
                return false;
            }
            // The buffer this scan leaves becomes the spare: its last frame has ended.
            std::swap(m_haystack, m_spareHaystack);
            m_bindingsDirty = true;
            resident = true;
            ++m_batchesPrefetched;
        }
    }
    BatchTelemetry &t = result.telemetry;
    t.engine = name();
    t.backend = m_device->backendName();
    t.device = m_device->deviceName();

    std::vector<int> unbounded;
    std::vector<uint32_t> unboundedIndex(catalog.groups.size(), kNone);
    for (int g = 0; g < int(catalog.groups.size()); ++g) {
        if (catalog.groups[size_t(g)].unbounded()) {
            unboundedIndex[size_t(g)] = uint32_t(unbounded.size());
            unbounded.push_back(g);
        }
    }
    result.carryOut.assign(batch.files.size() * unbounded.size(), 0);
    const uint64_t numSegments = batch.segments.size();
    const uint64_t numGroups = catalog.groups.size();
    const uint64_t numUnbounded = unbounded.size();
    const uint64_t mainItems = numSegments * numGroups;
    t.workItems = int64_t(mainItems);
    if (mainItems == 0 && !keys)
        return true;
    const uint64_t unboundedItems = numSegments * numUnbounded;
    const uint64_t unboundedBase = mainItems * 2;
    const uint64_t stateWords = unboundedBase + unboundedItems * 4;
    if (mainItems >= kNone || stateWords >= (uint64_t(1) << 31)) {
        *error = QStringLiteral("%1 work items are too many for one GPU batch").arg(mainItems);
        return false;
    }

    std::vector<uint32_t> &words = m_segmentWords;
    if (batch.prepared.size() == numSegments * kSegmentWords + 1 && batch.prepared.back() == numUnbounded)
        words.assign(batch.prepared.begin(), batch.prepared.end() - 1);
    else
        buildSegmentTable(batch, numUnbounded, m_threads, words);
    std::vector<uint32_t> carry;
    // The last segment of every chunk that continues in the next batch: its exit states are carried.
    std::vector<std::pair<uint32_t, uint32_t>> carriedOut; // (batch file, segment)
    for (size_t i = 0; i < numSegments && numUnbounded > 0; ++i) {
        const Segment &seg = batch.segments[i];
        const BatchFile &bf = batch.files[seg.batchFile];
        if (seg.ownBegin == bf.ownBegin && !bf.firstChunk) {
            words[i * kSegmentWords + 6] = uint32_t(carry.size() / numUnbounded);
            for (uint64_t u = 0; u < numUnbounded; ++u)
                carry.push_back(carryIn[seg.batchFile * numUnbounded + u]);
        }
        if (!bf.lastChunk && seg.ownEnd == bf.ownEnd)
            carriedOut.emplace_back(seg.batchFile, uint32_t(i));
    }
    const uint64_t carryBase = words.size();
    words.insert(words.end(), carry.begin(), carry.end());
    const double buildMs = msSince(t0);

    const uint32_t pieceBytes = m_loopLimited ? kLimitedPieceBytes : kUnlimitedPieceBytes;
    uint64_t longest = 0;
    for (size_t i = 0; i < numSegments; ++i) {
        const uint32_t *w = words.data() + i * kSegmentWords;
        longest = std::max<uint64_t>(longest, w[1]);
        if (numUnbounded > 0)
            longest = std::max<uint64_t>(longest, uint64_t(w[0]) + w[1] - w[5]);
    }
    const uint32_t rounds = uint32_t(std::max<uint64_t>(1, (longest + pieceBytes - 1) / pieceBytes));

    int64_t capacity = params.hitCapacity > 0
        ? params.hitCapacity
        : std::max(m_hitCapacity, m_loopLimited ? kDefaultHitCapacityLimited : kDefaultHitCapacity);
    const int64_t maxCapacity = std::max<int64_t>(1, m_device->limits().maxStorageBufferRange / (kHitWords * 4));
    const auto b0 = Clock::now();
    if (!ensureBuffer(m_haystack, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, haystackBufferBytes(batch), error)
        || !ensureBuffer(m_segments, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, int64_t(words.size()) * 4, error)
        || !ensureBuffer(m_itemState, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, int64_t(stateWords) * 4, error))
        return false;
    m_profileSetupMs += msSince(b0);
    // The next batch's copy runs beside this one's frames (on a transfer queue) or before them (on one queue).
    if (next && m_transfer) {
        std::lock_guard lock(m_prefetchMutex);
        startPrefetch(*next, true);
    }

    // Queue words of a frame: [0] hit attempts, a head per phase, items completed by the main phases, then per
    // fix-up pass items completed and items scanned again.
    auto paramWords = [&](const std::vector<Phase> &phases, int64_t cap) {
        const uint32_t counters = 1 + uint32_t(phases.size());
        std::vector<uint32_t> out(phases.size() * (sizeof(ParamsBlock) / 4));
        for (size_t k = 0; k < phases.size(); ++k) {
            const Phase &ph = phases[k];
            ParamsBlock p {};
            p.mode = ph.mode;
            p.round = ph.round;
            p.headSlot = uint32_t(1 + k);
            p.counterSlot = ph.mode == 0 ? counters : counters + 1 + 2 * uint32_t(ph.pass);
            p.numItems = ph.items;
            p.budget = m_loopLimited ? 1 : 0;
            p.pieceBytes = pieceBytes;
            p.hitCapacity = uint32_t(std::min<int64_t>(cap, 0xffffffffu));
            p.numGroups = uint32_t(numGroups);
            p.numSegments = uint32_t(numSegments);
            p.numUnbounded = uint32_t(numUnbounded);
            p.unboundedBase = uint32_t(unboundedBase);
            p.carryBase = uint32_t(carryBase);
            p.generation = ph.generation;
            std::memcpy(out.data() + k * (sizeof(ParamsBlock) / 4), &p, sizeof p);
        }
        return out;
    };

    double frameMs = 0;
    int frames = 0, passes = 0;
    int64_t rescanned = 0;
    bool uploadHaystack = true;
    uint32_t attempts = 0;
    for (;;) {
        if (!ensureBuffer(m_hits, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, capacity * kHitWords * 4, error))
            return false;
        // The main items and a first few fix-up passes in one frame, more passes in frames of their own until
        // a pass finds no unbounded segment to scan again.
        attempts = 0;
        rescanned = 0;
        passes = 0;
        bool converged = numUnbounded == 0;
        bool overflow = false;
        bool first = true;
        uint32_t generation = 0;
        while (first || !converged) {
            std::vector<Phase> phases;
            if (first) {
                for (uint32_t r = 0; r < rounds; ++r)
                    phases.push_back({ 0, r, uint32_t(mainItems), 0, -1 });
            }
            const int fixups = converged ? 0 : kFixupPassesPerFrame;
            for (int k = 0; k < fixups; ++k) {
                ++generation;
                for (uint32_t r = 0; r < rounds; ++r)
                    phases.push_back({ 1, r, uint32_t(unboundedItems), generation, k });
            }
            std::vector<uint32_t> phaseItems;
            for (const Phase &ph : phases)
                phaseItems.push_back(ph.items);
            std::vector<uint32_t> q;
            const auto f0 = Clock::now();
            const int queueWords = 2 + int(phases.size()) + 2 * fixups;
            if (!runFrame(batch, catalog, params, phaseItems, paramWords(phases, capacity), queueWords, attempts,
                          first && uploadHaystack, resident, first && uploadHaystack ? keys : nullptr, t, q, error)) {
                // Uploads queued for a frame that did not run are not on the device: the next batch uploads again.
                m_tablesUploaded = false;
                m_keyTablesFingerprint = 0;
                return false;
            }
            frameMs += msSince(f0);
            ++frames;
            if (first)
                uploadHaystack = false; // a re-run for a full hit ring finds the haystack and the table resident
            const uint32_t counters = 1 + uint32_t(phases.size());
            if (first && q[counters] != mainItems) {
                *error = QStringLiteral("%1 of %2 GPU work items completed").arg(q[counters]).arg(mainItems);
                return false;
            }
            for (int k = 0; k < fixups; ++k) {
                const uint32_t done = q[counters + 1 + 2 * k];
                const uint32_t again = q[counters + 2 + 2 * k];
                if (done != unboundedItems) {
                    *error = QStringLiteral("%1 of %2 GPU fix-up items completed").arg(done).arg(unboundedItems);
                    return false;
                }
                if (converged)
                    continue;
                ++passes;
                rescanned += again;
                converged = again == 0;
            }
            attempts = q[0];
            first = false;
            if (int64_t(attempts) > capacity) {
                overflow = true;
                break;
            }
            if (!converged && passes >= kMaxFixupPasses) {
                *error = QStringLiteral("unbounded patterns did not settle after %1 passes").arg(passes);
                return false;
            }
        }
        if (!overflow)
            break;
        // A full ring is never truncated: run again with room for every hit.
        t.hitsRerun += attempts;
        if (attempts > maxCapacity) {
            *error = QStringLiteral("%1 hits do not fit in the largest GPU hit ring").arg(attempts);
            return false;
        }
        capacity = std::min<int64_t>(maxCapacity, std::max<int64_t>(attempts, capacity * 2));
        if (params.hitCapacity <= 0)
            m_hitCapacity = capacity;
    }

    // Read back the hits, the generation of every unbounded item when some were scanned again, and the exit
    // states carried to the next batch.
    const auto r0 = Clock::now();
    QRhi *rhi = m_device->rhi();
    std::vector<std::unique_ptr<QRhiBufferReadbackResult>> reads;
    auto addRead = [&](QRhiResourceUpdateBatch *u, QRhiBuffer *b, int64_t offset, int64_t bytes) {
        reads.push_back(std::make_unique<QRhiBufferReadbackResult>());
        u->readBackBuffer(b, int(offset), int(bytes), reads.back().get());
    };
    {
        RhiFrame frame(rhi);
        if (!frame.isActive()) {
            *error = QStringLiteral("cannot begin a GPU frame");
            m_disabled = true;
            return false;
        }
        QRhiResourceUpdateBatch *u = rhi->nextResourceUpdateBatch();
        addRead(u, m_hits.get(), 0, std::max<int64_t>(16, int64_t(attempts) * kHitWords * 4));
        addRead(u, m_itemState.get(), int64_t(unboundedBase + unboundedItems * 2) * 4,
                rescanned > 0 ? int64_t(unboundedItems) * 4 : 4);
        for (const auto &[file, seg] : carriedOut)
            for (uint64_t uIdx = 0; uIdx < numUnbounded; ++uIdx)
                addRead(u, m_itemState.get(), int64_t(unboundedBase + unboundedItems + uIdx * numSegments + seg) * 4, 4);
        frame.commandBuffer()->resourceUpdate(u);
        if (frame.end() != QRhi::FrameOpSuccess) {
            *error = QStringLiteral("the GPU device failed (frame result %1)").arg(int(frame.result()));
            m_disabled = true;
            return false;
        }
    }
    for (const auto &r : reads) {
        if (r->data.isEmpty()) {
            RhiFrame frame(rhi); // OpenGL may complete read-backs at the next frame
            break;
        }
    }
    for (const auto &r : reads) {
        if (r->data.isEmpty()) {
            *error = QStringLiteral("the GPU read-back did not complete");
            return false;
        }
        t.bytesReadBack += r->data.size();
    }
    for (size_t k = 0; k < carriedOut.size(); ++k)
        for (uint64_t uIdx = 0; uIdx < numUnbounded; ++uIdx)
            result.carryOut[carriedOut[k].first * numUnbounded + uIdx]
                = *reinterpret_cast<const uint32_t *>(reads[2 + k * numUnbounded + uIdx]->data.constData());
    const double readMs = msSince(r0);

    // Hits to file offsets, on several threads when there are many; a hit (or count) of an unbounded item
    // counts only when it comes from the item's last scan.
    const auto h0 = Clock::now();
    const auto *h = reinterpret_cast<const uint32_t *>(reads[0]->data.constData());
    const auto *generations = reinterpret_cast<const uint32_t *>(reads[1]->data.constData());
    const bool filter = rescanned > 0;
    std::vector<std::vector<RawHit>> parts(static_cast<size_t>(std::max(1, m_threads.load())));
    std::vector<std::vector<RawCount>> countParts(parts.size());
    std::vector<int64_t> rerunHits(parts.size(), 0);
    std::vector<int64_t> countedEnds(parts.size(), 0);
    parallelSlices(attempts, 1 << 16, int(parts.size()), [&](size_t begin, size_t end, size_t k) {
        std::vector<RawHit> &out = parts[k];
        out.reserve(end - begin);
        int64_t rerun = 0;
        int64_t ends = 0;
        // Neighbouring lanes scan neighbouring segments of a file and write their counts side by side: equal keys
        // in a row (batch file, group, and the state or the pattern word) are summed before they are expanded.
        uint32_t runFile = 0, runGroup = 0, runKey = 0;
        int64_t runCount = 0;
        auto endRun = [&] {
            if (runCount == 0)
                return;
            if ((runKey & kStateFlag) != 0) {
                // Visits to a state whose ends at the byte are all counted: each visit is one end of each.
                const Dfa &d = catalog.groups[runGroup].dfa;
                const uint32_t st = runKey & ~(kCountFlag | kStateFlag);
                for (uint32_t a = d.acceptIndex[st]; a < d.acceptIndex[st + 1]; ++a) {
                    if (Dfa::entryKind(d.acceptEntries[a]) != Dfa::Now)
                        continue;
                    countParts[k].push_back({ runFile, Dfa::entryPattern(d.acceptEntries[a]), runCount });
                    ends += runCount;
                }
            } else {
                countParts[k].push_back({ runFile, runKey & ~kCountFlag, runCount });
                ends += runCount;
            }
            runCount = 0;
        };
        for (size_t i = begin; i < end; ++i) {
            const uint32_t *e = h + i * kHitWords;
            const uint32_t group = uint32_t(e[0] / numSegments);
            const uint32_t seg = uint32_t(e[0] % numSegments);
            if (e[3] != 0) {
                ++rerun;
                if (generations[unboundedIndex[group] * numSegments + seg] != e[3])
                    continue;
            } else if (filter && unboundedIndex[group] != kNone
                       && generations[unboundedIndex[group] * numSegments + seg] != 0) {
                continue;
            }
            const Segment &s = batch.segments[seg];
            if ((e[1] & kCountFlag) == 0) {
                out.push_back({ s.batchFile, e[1], s.ownBegin + int64_t(e[2]) });
                continue;
            }
            if (runCount == 0 || s.batchFile != runFile || group != runGroup || e[1] != runKey) {
                endRun();
                runFile = s.batchFile;
                runGroup = group;
                runKey = e[1];
            }
            runCount += e[2];
        }
        endRun();
        rerunHits[k] = rerun;
        countedEnds[k] = ends;
    });
    size_t total = 0;
    size_t totalCounts = 0;
    int64_t totalCounted = 0;
    for (size_t k = 0; k < parts.size(); ++k) {
        total += parts[k].size();
        totalCounts += countParts[k].size();
        totalCounted += countedEnds[k];
        t.hitsRerun += rerunHits[k];
    }
    result.hits.clear();
    result.hits.reserve(total);
    for (const auto &p : parts)
        result.hits.insert(result.hits.end(), p.begin(), p.end());
    result.counts.clear();
    result.counts.reserve(totalCounts);
    for (const auto &p : countParts)
        result.counts.insert(result.counts.end(), p.begin(), p.end());
    // Matches, counted ones included (as the CPU engine reports them); hitsRerun stays in ring entries.
    t.hits = int64_t(total) + totalCounted;
    t.fixupPasses = passes;
    t.rescannedSegments = rescanned;
    if (m_profile)
        qCInfo(lcGpu).noquote() << QString::asprintf(
                     "gpu batch %d: %llu segments, %llu items; %s; table %.1f ms, buffers, tables and pipeline %.1f ms, %d frames %.1f ms (staging copy %.1f ms, "
                     "submit and wait %.1f ms: GPU copies %.1f ms, kernel %.1f ms), %d fix-up passes scanning %lld items "
                     "again, read-back %.1f ms, %lld hits and %lld counted ends (%lld counts) %.1f ms",
                     batch.index, static_cast<unsigned long long>(numSegments),
                     static_cast<unsigned long long>(mainItems),
                     resident ? qPrintable(QStringLiteral("copied ahead (waited %1 ms)").arg(m_profileTransferWaitMs, 0, 'f', 1))
                              : "copied in its frame",
                     buildMs, m_profileSetupMs, frames, frameMs, m_profileStagingMs,
                     m_profileFrameWaitMs, m_profileUploadMs, t.gpuMs, passes,
                     static_cast<long long>(rescanned), readMs, static_cast<long long>(total),
                     static_cast<long long>(totalCounted), static_cast<long long>(totalCounts), msSince(h0));
    return true;
}

bool GpuEngine::runFrame(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                         const std::vector<uint32_t> &phaseItems, const std::vector<uint32_t> &paramWords,
                         int queueWords, uint32_t attemptsBefore, bool upload, bool resident, const KeyFilter *keys,
                         BatchTelemetry &t, std::vector<uint32_t> &queue, QString *error)
{
    QRhi *rhi = m_device->rhi();
    const uint32_t budget = m_loopLimited ? 1 : 0;
    const uint32_t maxItems = *std::max_element(phaseItems.begin(), phaseItems.end());
    const int wg = params.workgroupSize;
    const int maxGroups = std::max(1, m_device->limits().maxWorkgroupsPerDimension);
    int groups = params.workerGroups;
    if (groups <= 0) {
        // Enough lanes for every item, bounded by the dispatch limit and, on large GPUs, by what keeps every
        // multiprocessor full (about 2^18 lanes on an H200).
        const int64_t wanted = std::min<int64_t>(maxItems, m_loopLimited ? int64_t(maxItems) : int64_t(1) << 18);
        groups = int(std::clamp<int64_t>((wanted + wg - 1) / wg, 1, maxGroups));
    }
    groups = std::min(groups, maxGroups);
    const int lanes = groups * wg;
    t.workerGroups = groups;
    t.workgroupSize = wg;

    bool planHit = false;
    const Plan &plan = planFor(phaseItems, lanes, budget, &planHit);
    t.planCacheHits += planHit ? 1 : 0;

    const int align = rhi->ubufAlignment();
    const int paramsStride = (int(sizeof(ParamsBlock)) + align - 1) / align * align;
    const int64_t phases = int64_t(phaseItems.size());
    const int64_t hayBytes = roundUp4(batch.used);
    const int64_t segBytes = int64_t(m_segmentWords.size()) * 4;
    if (!ensureBuffer(m_queue, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, int64_t(queueWords) * 4, error)
        || !ensureBuffer(m_params, QRhiBuffer::Static, QRhiBuffer::UniformBuffer, paramsStride * phases, error))
        return false;

    // Tables may have to be (re)created before the bindings that name them.
    const auto s0 = Clock::now();
    QRhiResourceUpdateBatch *updates = rhi->nextResourceUpdateBatch();
    int64_t tableBytes = 0;
    if (!ensureTables(catalog, updates, &tableBytes, error) || !ensureBindings(error)) {
        updates->release();
        return false;
    }
    // The key kernel: 16 bytes a step, 32 steps per invocation (the shared tables are copied once per workgroup),
    // and on Mesa's software drivers as many as keep an invocation's loop iterations well below 65,535: a step
    // probes at most 16 candidates, each reading up to longestProbe() slots, and marks up to 18 blocks.
    const int64_t keyChunks = (batch.used + 15) / 16;
    const int64_t keyBlockWords = 1 + ((batch.used + 63) / 64 + 7) / 8;
    int64_t keySteps = 32;
    if (keys && m_loopLimited)
        keySteps = std::clamp<int64_t>(60000 / (16 * int64_t(keys->longestProbe()) + 64), 1, 32);
    const int keyGroups = int(std::clamp<int64_t>((keyChunks + keySteps * 256 - 1) / (keySteps * 256), 1, maxGroups));
    if (keys && !ensureKeyPass(*keys, updates, keyBlockWords, error)) {
        updates->release();
        return false;
    }
    if (keys) {
        const uint32_t keyParams[4] = { uint32_t(batch.used), uint32_t(keyChunks), 0, 0 };
        updates->uploadStaticBuffer(m_keyParams.get(), 0, sizeof keyParams, keyParams);
        m_keyBlockWords.assign(size_t(keyBlockWords), 0);
        updates->uploadStaticBuffer(m_keyBlocks.get(), 0, int(keyBlockWords * 4), m_keyBlockWords.data());
        t.bytesUploadedData += keyBlockWords * 4 + int64_t(sizeof keyParams);
    }
    bool pipelineHit = false;
    // The tables just ensured flag the counted patterns (an empty set when none is: setCountedPatterns).
    const bool counting = !m_tablesCounted.empty();
    QRhiComputePipeline *pipeline = pipelineFor(wg, counting, &pipelineHit, error);
    if (!pipeline) {
        updates->release();
        return false;
    }
    t.pipelineCacheHits += pipelineHit ? 1 : 0;
    t.bytesUploadedTables += tableBytes;
    m_profileSetupMs += msSince(s0);

    QByteArray paramBytes(int(paramsStride * phases), 0);
    for (int64_t k = 0; k < phases; ++k)
        std::memcpy(paramBytes.data() + k * paramsStride, paramWords.data() + k * (sizeof(ParamsBlock) / 4),
                    sizeof(ParamsBlock));
    std::vector<uint32_t> queueInit(size_t(queueWords), 0);
    queueInit[0] = attemptsBefore; // later frames append to the same hit ring
    // Everything goes through our own mapped staging buffer where there is one (Vulkan): the haystack first,
    // then the segment table, the queue and the parameters. QRhi would allocate pinned staging memory for each
    // of these uploads, every batch.
    auto at256 = [](int64_t v) { return (v + 255) & ~int64_t(255); };
    // A haystack of newHaystack()'s that the device imported is copied to the GPU from where it was read.
    const VulkanHostBuffer *hostSource = upload && !resident ? importedBuffer(batch, hayBytes) : nullptr;
    const int64_t segAt = hostSource || resident ? 0 : at256(std::max<int64_t>(batch.capacity, hayBytes));
    const int64_t queueAt = segAt + at256(segBytes);
    const int64_t paramsAt = queueAt + at256(int64_t(queueWords) * 4);
    const int64_t stagingBytes = paramsAt + paramBytes.size();
    if (!m_staging || m_staging->size() < stagingBytes) {
        const auto a0 = Clock::now();
        m_staging = VulkanStaging::create(*m_device, stagingBytes + stagingBytes / 4);
        m_profileSetupMs += msSince(a0);
    }
    std::vector<VulkanStaging::Copy> copies;
    if (m_staging) {
        uint8_t *base = m_staging->data();
        if (upload) {
            if (!hostSource && !resident) {
                const auto c0 = Clock::now();
                parallelCopy(base, batch.haystack.get(), hayBytes, m_threads);
                m_profileStagingMs += msSince(c0);
                t.bytesStaged += hayBytes;
            }
            std::memcpy(base + segAt, m_segmentWords.data(), size_t(segBytes));
            if (!resident)
                copies.push_back({ 0, m_haystack.get(), hayBytes, hostSource });
            copies.push_back({ segAt, m_segments.get(), segBytes });
        }
        std::memcpy(base + queueAt, queueInit.data(), queueInit.size() * 4);
        std::memcpy(base + paramsAt, paramBytes.constData(), size_t(paramBytes.size()));
        copies.push_back({ queueAt, m_queue.get(), int64_t(queueWords) * 4 });
        copies.push_back({ paramsAt, m_params.get(), paramBytes.size() });
    } else {
        if (upload) {
            if (!resident)
                updates->uploadStaticBuffer(m_haystack.get(), 0, int(hayBytes), batch.haystack.get());
            updates->uploadStaticBuffer(m_segments.get(), 0, int(segBytes), m_segmentWords.data());
        }
        updates->uploadStaticBuffer(m_queue.get(), 0, queueWords * 4, queueInit.data());
        updates->uploadStaticBuffer(m_params.get(), 0, paramBytes.size(), paramBytes.constData());
    }
    if (upload)
        t.bytesUploadedData += hayBytes + segBytes;
    t.bytesUploadedData += int64_t(queueWords) * 4 + paramBytes.size();

    QRhiBufferReadbackResult queueBack;
    bool queueDone = false;
    queueBack.completed = [&queueDone] { queueDone = true; };
    QRhiBufferReadbackResult keyBack;
    {
        RhiFrame frame(rhi);
        if (!frame.isActive()) {
            updates->release();
            *error = QStringLiteral("cannot begin a GPU frame");
            m_disabled = true;
            return false;
        }
        QRhiCommandBuffer *cb = frame.commandBuffer();
        // Uploads first, outside the timed part: the timestamps measure the kernel alone.
        if (!copies.empty()) {
            if (m_uploadTimer)
                m_uploadTimer->begin(cb);
            m_staging->recordCopies(cb, copies);
            if (m_uploadTimer)
                m_uploadTimer->end(cb);
        }
        if (upload && resident)
            m_transfer->recordAcquire(cb, m_haystack.get(), hayBytes);
        cb->beginComputePass(updates);
        cb->endComputePass();
        m_timer->begin(cb);
        if (keys) {
            VulkanStaging::recordComputeBarrier(*m_device, cb);
            cb->beginComputePass();
            cb->setComputePipeline(m_keyPipeline.get());
            cb->setShaderResources(m_keyBindings.get());
            cb->dispatch(keyGroups, 1, 1);
            QRhiResourceUpdateBatch *rb = rhi->nextResourceUpdateBatch();
            rb->readBackBuffer(m_keyBlocks.get(), 0, int(keyBlockWords * 4), &keyBack);
            cb->endComputePass(rb);
        }
        // One compute pass per phase: a phase continues from the states the one before wrote, and a fix-up pass
        // that scans nothing again proves the chains consistent only if no earlier pass still runs beside it:
        // an explicit barrier before every phase (also after the previous frame's), whatever QRhi records itself.
        size_t d = 0;
        while (d < plan.dispatchPhases.size()) {
            const uint32_t phase = plan.dispatchPhases[d];
            VulkanStaging::recordComputeBarrier(*m_device, cb);
            cb->beginComputePass();
            cb->setComputePipeline(pipeline);
            const QRhiCommandBuffer::DynamicOffset offset(0, quint32(phase * uint32_t(paramsStride)));
            cb->setShaderResources(m_bindings.get(), 1, &offset);
            for (; d < plan.dispatchPhases.size() && plan.dispatchPhases[d] == phase; ++d)
                cb->dispatch(groups, 1, 1);
            if (d == plan.dispatchPhases.size()) {
                QRhiResourceUpdateBatch *rb = rhi->nextResourceUpdateBatch();
                rb->readBackBuffer(m_queue.get(), 0, queueWords * 4, &queueBack);
                cb->endComputePass(rb);
                // Outside any pass: beginExternal() inside one needs secondary command buffers.
                m_timer->end(cb);
            } else {
                cb->endComputePass();
            }
        }
        const auto w0 = Clock::now();
        if (frame.end() != QRhi::FrameOpSuccess) {
            *error = QStringLiteral("the GPU device failed (frame result %1)").arg(int(frame.result()));
            m_disabled = true;
            return false;
        }
        m_profileFrameWaitMs += msSince(w0);
    }
    if (m_uploadTimer && !copies.empty())
        m_profileUploadMs += m_uploadTimer->elapsedMs();
    if (!queueDone) {
        RhiFrame frame(rhi); // OpenGL may complete read-backs at the next frame
    }
    if (!queueDone || queueBack.data.size() != queueWords * 4
        || (keys && keyBack.data.size() != keyBlockWords * 4)) {
        *error = QStringLiteral("the GPU read-back did not complete");
        return false;
    }
    if (keys) {
        std::memcpy(m_keyBlockWords.data(), keyBack.data.constData(), size_t(keyBlockWords) * 4);
        t.bytesReadBack += keyBack.data.size();
        if (m_keyBlockWords[0] != uint32_t(keyGroups) * 256u) {
            *error = QStringLiteral("%1 of %2 GPU key screen invocations completed").arg(m_keyBlockWords[0]).arg(keyGroups * 256);
            return false;
        }
    }
    t.gpuMs += m_timer->elapsedMs();
    t.bytesReadBack += queueBack.data.size();
    queue.resize(size_t(queueWords));
    std::memcpy(queue.data(), queueBack.data.constData(), size_t(queueWords) * 4);
    // Lanes that found an item, over lanes launched.
    int64_t busy = 0;
    for (uint32_t items : phaseItems)
        busy += std::min<int64_t>(items, lanes);
    const int64_t launched = int64_t(plan.dispatchPhases.size()) * lanes;
    t.occupancy = launched > 0 ? std::min(1.0, double(busy) / double(launched)) : 0;
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
        m_keyBlockWords.assign(size_t(1 + ((batch.used + 63) / 64 + 7) / 8), 0);
    result.screenBlocks.assign(m_keyBlockWords.begin() + 1, m_keyBlockWords.end());
    result.screensPending = true;
    BatchTelemetry &t = result.telemetry;
    t.keyBlocks = 0;
    for (uint32_t w : result.screenBlocks)
        for (uint32_t v = w; v != 0; v >>= 4)
            t.keyBlocks += (v & 15u) != 0 ? 1 : 0;
    return true;
}

bool GpuEngine::ensureKeyPass(const KeyFilter &keys, QRhiResourceUpdateBatch *updates, int64_t blockWords,
                              QString *error)
{
    const std::vector<uint32_t> &words = keys.words();
    if (!ensureBuffer(m_keyTables, QRhiBuffer::Immutable, QRhiBuffer::StorageBuffer, int64_t(words.size()) * 4, error)
        || !ensureBuffer(m_keyBlocks, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, blockWords * 4, error)
        || !ensureBuffer(m_keyParams, QRhiBuffer::Static, QRhiBuffer::UniformBuffer, 16, error))
        return false;
    const std::array<const QRhiBuffer *, 4> bound { m_keyParams.get(), m_haystack.get(), m_keyTables.get(),
                                                    m_keyBlocks.get() };
    if (!m_keyBindings || bound != m_keyBound) {
        const auto stage = QRhiShaderResourceBinding::ComputeStage;
        std::unique_ptr<QRhiShaderResourceBindings> srb(m_device->rhi()->newShaderResourceBindings());
        srb->setBindings({
            QRhiShaderResourceBinding::uniformBuffer(0, stage, m_keyParams.get()),
            QRhiShaderResourceBinding::bufferLoad(1, stage, m_haystack.get()),
            QRhiShaderResourceBinding::bufferLoad(2, stage, m_keyTables.get()),
            QRhiShaderResourceBinding::bufferLoadStore(3, stage, m_keyBlocks.get()),
        });
        if (!srb->create()) {
            *error = QStringLiteral("cannot create the GPU key screen's bindings");
            return false;
        }
        m_keyBindings = std::move(srb);
        m_keyBound = bound;
    }
    if (!m_keyPipeline) {
        const QString dir = RuntimeSwitches::gpuShaderDir();
        const QShader shader = RhiDevice::loadShader(dir + QStringLiteral("/keyscreen.comp.qsb"), error);
        if (!shader.isValid()) {
            *error = QStringLiteral("no key screen kernel: %1").arg(*error);
            return false;
        }
        std::unique_ptr<QRhiComputePipeline> p(m_device->rhi()->newComputePipeline());
        p->setShaderStage({ QRhiShaderStage::Compute, shader });
        p->setShaderResourceBindings(m_keyBindings.get());
        if (!p->create()) {
            *error = QStringLiteral("cannot create the GPU key screen pipeline");
            return false;
        }
        m_keyPipeline = std::move(p);
    }
    // Another catalog's filter may live where this one's did: compared by content, hashed once when built.
    const uint64_t fingerprint = keys.fingerprint();
    if (m_keyTablesFingerprint != fingerprint || m_keyTablesWords != words.size()) {
        updates->uploadStaticBuffer(m_keyTables.get(), 0, int(words.size() * 4), words.data());
        m_keyTablesFingerprint = fingerprint;
        m_keyTablesWords = words.size();
    }
    return true;
}

double GpuEngine::residentKernelMs(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                                   int repeats, QString *error)
{
    // The first run uploads the tables; the following ones upload the same haystack again, but the kernel
    // time (timestamps around the dispatches only) does not include uploads.
    double best = 0;
    std::vector<uint32_t> carry(batch.files.size() * catalog.groups.size(), 0);
    const bool screened = catalog.tablelessGroups() > 0;
    const PatternCatalog &deviceCatalog = screened ? screenedFor(catalog).device : catalog;
    const KeyFilter *keys = screened && catalog.prefilter && !catalog.prefilter->keyFilter.empty()
        ? &catalog.prefilter->keyFilter
        : nullptr;
    for (int i = 0; i < repeats; ++i) {
        BatchResult r;
        if (!runOnGpu(batch, deviceCatalog, params, carry, r, error, nullptr, keys))
            return -1;
        if (r.telemetry.gpuMs > 0 && (best == 0 || r.telemetry.gpuMs < best))
            best = r.telemetry.gpuMs;
    }
    return best;
}

} // namespace Hitscope
