// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpuengine.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <tuple>

#include "gpu/gputimer.h"
#include "gpu/rhiframe.h"
#include "gpu/vulkanstaging.h"

namespace Hitscope {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

constexpr int kStreamWords = 12;
constexpr int kStreamStateWords = 4;
constexpr int kHitWords = 3;
constexpr int kGroupWords = 8;
constexpr uint32_t kNoCarry = 0xffffffffu;
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

struct ParamsBlock
{
    uint32_t round;
    uint32_t queueLen;
    uint32_t budget;
    uint32_t pieceBytes;
    uint32_t hitCapacity;
    uint32_t numGroups;
    uint32_t pad[2];
};

// Spreads a large copy over a few threads: one thread's memcpy is slower than reading the files was.
void parallelCopy(uint8_t *dst, const uint8_t *src, int64_t bytes)
{
    const int threads = bytes < (int64_t(64) << 20) ? 1 : int(std::min(8u, std::max(1u, std::thread::hardware_concurrency())));
    if (threads == 1) {
        std::memcpy(dst, src, size_t(bytes));
        return;
    }
    const int64_t part = ((bytes + threads - 1) / threads + 4095) & ~int64_t(4095);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        const int64_t begin = std::min(bytes, t * part);
        const int64_t end = std::min(bytes, begin + part);
        pool.emplace_back([=] { std::memcpy(dst + begin, src + begin, size_t(end - begin)); });
    }
    for (auto &th : pool)
        th.join();
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

struct GpuEngine::Stream
{
    uint32_t words[kStreamWords];
    uint32_t batchFile;
    int64_t scanBegin; // file offset of relative position 0
    int unboundedIndex; // -1 for bounded groups
};

struct GpuEngine::DispatchOutput
{
    std::vector<uint32_t> state;                            // kStreamStateWords per stream, caller's order
    std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> hits; // stream, pattern, end relative to its start
};

struct GpuEngine::Plan
{
    std::vector<uint32_t> dispatchRounds; // the round of each dispatch, in order; a new round is a new pass
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

GpuEngine::GpuEngine(std::unique_ptr<RhiDevice> device)
    : m_device(std::move(device))
{
    const GpuDeviceInfo &info = m_device->info();
    const QString name = info.deviceName.toLower();
    m_loopLimited = info.deviceType == QLatin1String("cpu") || name.contains(QLatin1String("llvmpipe"))
        || name.contains(QLatin1String("lavapipe")) || name.contains(QLatin1String("softpipe"));
    m_timer = std::make_unique<GpuTimer>(*m_device);
}

GpuEngine::~GpuEngine()
{
    // QRhi resources go before the device (declaration order would destroy the device last anyway).
    m_timer.reset();
    m_staging.reset();
    m_pipelines.clear();
    m_bindings.reset();
    m_params.reset();
    m_haystack.reset();
    m_transitions.reset();
    m_aux.reset();
    m_streams.reset();
    m_streamState.reset();
    m_queue.reset();
    m_hits.reset();
}

QString GpuEngine::name() const
{
    return QStringLiteral("gpu");
}

int64_t GpuEngine::maxBatchBytes() const
{
    const GpuLimits &l = m_device->limits();
    int64_t limit = l.maxStorageBufferRange > 0 ? l.maxStorageBufferRange : (int64_t(1) << 27);
    if (l.maxBufferBytes > 0)
        limit = std::min(limit, l.maxBufferBytes);
    return std::min<int64_t>(limit, (int64_t(1) << 31) - 4096) & ~int64_t(4095);
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
        QRhiShaderResourceBinding::bufferLoad(4, stage, m_streams.get()),
        QRhiShaderResourceBinding::bufferLoadStore(5, stage, m_streamState.get()),
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

QRhiComputePipeline *GpuEngine::pipelineFor(int workgroupSize, bool *cacheHit, QString *error)
{
    for (auto it = m_pipelines.begin(); it != m_pipelines.end(); ++it) {
        if (it->workgroupSize == workgroupSize) {
            m_pipelines.splice(m_pipelines.begin(), m_pipelines, it);
            *cacheHit = true;
            return m_pipelines.front().pipeline.get();
        }
    }
    *cacheHit = false;
    const QShader shader = RhiDevice::loadShader(QStringLiteral(":/shaders/scan_wg%1.comp.qsb").arg(workgroupSize), error);
    if (!shader.isValid()) {
        *error = QStringLiteral("workgroup size %1 is not offered (32, 64, 128, 256 or 512): %2").arg(workgroupSize).arg(*error);
        return nullptr;
    }
    std::unique_ptr<QRhiComputePipeline> p(m_device->rhi()->newComputePipeline());
    p->setShaderStage({ QRhiShaderStage::Compute, shader });
    p->setShaderResourceBindings(m_bindings.get());
    if (!p->create()) {
        *error = QStringLiteral("cannot create the GPU scan pipeline (workgroup size %1)").arg(workgroupSize);
        return nullptr;
    }
    m_pipelines.push_front({ workgroupSize, std::move(p) });
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
            plan->dispatchRounds.push_back(r);
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
    if (m_tablesUploaded && m_tablesFingerprint == catalog.fingerprint)
        return true;
    // Transitions of every group back to back; aux: group descriptors, byte classes, accept lists.
    std::vector<uint32_t> trans;
    std::vector<uint32_t> aux(catalog.groups.size() * kGroupWords, 0);
    for (size_t g = 0; g < catalog.groups.size(); ++g) {
        const Dfa &d = catalog.groups[g].dfa;
        uint32_t *desc = aux.data() + g * kGroupWords;
        desc[0] = uint32_t(trans.size());
        desc[1] = d.numClasses;
        trans.insert(trans.end(), d.transitions.begin(), d.transitions.end());
    }
    for (size_t g = 0; g < catalog.groups.size(); ++g) {
        const Dfa &d = catalog.groups[g].dfa;
        aux[g * kGroupWords + 2] = uint32_t(aux.size());
        aux.insert(aux.end(), d.byteClass.begin(), d.byteClass.end());
        aux[g * kGroupWords + 3] = uint32_t(aux.size());
        aux.insert(aux.end(), d.acceptIndex.begin(), d.acceptIndex.end());
        aux[g * kGroupWords + 4] = uint32_t(aux.size());
        aux.insert(aux.end(), d.acceptEntries.begin(), d.acceptEntries.end());
    }
    if (trans.size() > 0xffffffffu / 2) {
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
    m_tablesFingerprint = catalog.fingerprint;
    m_tablesUploaded = true;
    return true;
}

bool GpuEngine::readBack(QRhiBuffer *buffer, int offset, int bytes, QByteArray *out)
{
    QRhi *rhi = m_device->rhi();
    QRhiBufferReadbackResult rb;
    bool done = false;
    rb.completed = [&done] { done = true; };
    {
        RhiFrame frame(rhi);
        if (!frame.isActive())
            return false;
        QRhiResourceUpdateBatch *u = rhi->nextResourceUpdateBatch();
        u->readBackBuffer(buffer, offset, bytes, &rb);
        frame.commandBuffer()->resourceUpdate(u);
        if (frame.end() != QRhi::FrameOpSuccess)
            return false;
    }
    if (!done) {
        RhiFrame frame(rhi); // OpenGL may complete read-backs at the next frame
    }
    if (!done || rb.data.size() != bytes)
        return false;
    *out = rb.data;
    return true;
}

bool GpuEngine::scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                     const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error)
{
    const auto t0 = Clock::now();
    QString gpuError;
    if (!m_disabled && runOnGpu(batch, catalog, params, carryIn, result, &gpuError)) {
        result.telemetry.wallMs = msSince(t0);
        if (params.timeoutMs <= 0 || result.telemetry.wallMs <= params.timeoutMs)
            return true;
        gpuError = QStringLiteral("the GPU took %1 ms, more than the %2 ms timeout").arg(qRound(result.telemetry.wallMs)).arg(params.timeoutMs);
    }
    // Nothing is lost: the batch runs again on the CPU with the same tables.
    BatchResult cpu;
    if (!m_fallback.scan(batch, catalog, params, carryIn, cpu, error))
        return false;
    const BatchTelemetry gpuTelemetry = result.telemetry;
    result = std::move(cpu);
    if (!m_disabled)
        result.notices.push_back(QStringLiteral("batch %1: %2; re-run on the CPU engine").arg(batch.index).arg(gpuError));
    result.telemetry.engine = QStringLiteral("cpu (GPU fallback)");
    result.telemetry.bytesUploadedTables = gpuTelemetry.bytesUploadedTables;
    result.telemetry.wallMs = msSince(t0);
    return true;
}

bool GpuEngine::runOnGpu(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                         const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error)
{
    const uint8_t *haystack = batch.haystack.get();
    BatchTelemetry &t = result.telemetry;
    t.engine = name();
    t.backend = m_device->backendName();
    t.device = m_device->deviceName();

    std::vector<int> unbounded;
    for (int g = 0; g < int(catalog.groups.size()); ++g)
        if (catalog.groups[size_t(g)].unbounded())
            unbounded.push_back(g);
    result.carryOut.assign(batch.files.size() * unbounded.size(), 0);

    std::vector<Stream> streams;
    streams.reserve(batch.segments.size() * catalog.groups.size());
    auto addStream = [&](uint32_t batchFile, int group, int64_t scanBegin, int64_t scanEnd, int64_t ownBegin,
                         int64_t ownEnd, uint32_t state, bool eof, int64_t entryAt, int64_t exitAt, int unboundedIndex) {
        const BatchFile &bf = batch.files[batchFile];
        Stream s {};
        s.words[0] = uint32_t(bf.dataOffset + (scanBegin - bf.holdBegin));
        s.words[1] = uint32_t(scanEnd - scanBegin);
        s.words[2] = uint32_t(ownBegin - scanBegin);
        s.words[3] = uint32_t(ownEnd - scanBegin);
        s.words[4] = uint32_t(group);
        s.words[5] = state;
        s.words[6] = eof ? 1u : 0u;
        s.words[7] = exitAt < 0 ? kNoCarry : uint32_t(exitAt - scanBegin);
        s.words[8] = entryAt < 0 ? kNoCarry : uint32_t(entryAt - scanBegin);
        s.batchFile = batchFile;
        s.scanBegin = scanBegin;
        s.unboundedIndex = unboundedIndex;
        streams.push_back(s);
    };
    auto contextState = [&](const Dfa &dfa, const BatchFile &bf, int64_t scanBegin) {
        if (scanBegin == 0)
            return dfa.start[Dfa::AtFileStart];
        return dfa.start[isWordByte(*bf.at(haystack, scanBegin - 1)) ? Dfa::AfterWord : Dfa::AfterNonWord];
    };
    for (int g = 0; g < int(catalog.groups.size()); ++g) {
        if (catalog.groups[size_t(g)].unbounded())
            continue;
        const Dfa &dfa = catalog.groups[size_t(g)].dfa;
        for (const Segment &seg : batch.segments) {
            const BatchFile &bf = batch.files[seg.batchFile];
            addStream(seg.batchFile, g, seg.scanBegin, seg.scanEnd, seg.ownBegin, seg.ownEnd,
                      contextState(dfa, bf, seg.scanBegin), seg.scanEnd == bf.fileSize, -1, -1, -1);
        }
    }
    // Unbounded groups: the same segments, each started speculatively a warm-up before it owns bytes, so that
    // a long file is scanned by many lanes. The state a segment reaches where it starts owning bytes is
    // checked against the state the previous segment ended in; where they differ, the segment runs again
    // from the true state (a DFA is deterministic: equal states at one position give equal futures).
    const size_t firstUnbounded = streams.size();
    for (size_t u = 0; u < unbounded.size(); ++u) {
        const Dfa &dfa = catalog.groups[size_t(unbounded[u])].dfa;
        for (const Segment &seg : batch.segments) {
            const BatchFile &bf = batch.files[seg.batchFile];
            const bool chunkStart = seg.ownBegin == bf.ownBegin;
            int64_t scanBegin = seg.ownBegin;
            uint32_t state;
            if (chunkStart) {
                state = bf.firstChunk ? dfa.start[Dfa::AtFileStart] : carryIn[seg.batchFile * unbounded.size() + u];
            } else {
                scanBegin = std::max(bf.ownBegin, seg.ownBegin - kUnboundedWarmup);
                state = contextState(dfa, bf, scanBegin);
            }
            addStream(seg.batchFile, unbounded[u], scanBegin, seg.scanEnd, seg.ownBegin, seg.ownEnd, state,
                      seg.scanEnd == bf.fileSize, chunkStart ? -1 : seg.ownBegin, seg.ownEnd, int(u));
        }
    }
    t.workItems = int64_t(streams.size());
    if (streams.empty())
        return true;

    DispatchOutput out;
    if (!dispatch(batch, catalog, params, streams, true, t, out, error))
        return false;
    // Hits tagged with their stream, so that a re-run segment's speculative hits can be dropped at the end.
    struct TaggedHit
    {
        uint32_t stream;
        uint16_t pass;
        RawHit hit;
    };
    std::vector<TaggedHit> tagged;
    tagged.reserve(out.hits.size());
    for (const auto &[sid, pattern, end] : out.hits)
        tagged.push_back({ sid, 0, { streams[sid].batchFile, pattern, streams[sid].scanBegin + int64_t(end) } });
    std::vector<uint16_t> superseded(streams.size(), 0); // the pass whose hits count, per stream
    std::vector<uint32_t> exitState(streams.size());
    for (size_t i = 0; i < streams.size(); ++i)
        exitState[i] = out.state[i * kStreamStateWords + 2];

    // Segments of one unbounded chunk are consecutive in `streams`: fix the chains until every entry agrees.
    for (int pass = 0;; ++pass) {
        std::vector<size_t> rerun;
        std::vector<Stream> again;
        for (size_t i = firstUnbounded + 1; i < streams.size(); ++i) {
            const Stream &s = streams[i];
            if (s.words[8] == kNoCarry)
                continue; // a chunk's first segment starts from the true state
            const uint32_t entry = out.state[i * kStreamStateWords + 3];
            if (entry == exitState[i - 1])
                continue;
            Stream fixed = s;
            const int64_t ownBegin = s.scanBegin + s.words[8];
            const BatchFile &bf = batch.files[s.batchFile];
            fixed.words[0] = uint32_t(bf.dataOffset + (ownBegin - bf.holdBegin));
            fixed.words[1] = s.words[1] - s.words[8];
            fixed.words[2] = 0;
            fixed.words[3] = s.words[3] - s.words[8];
            fixed.words[5] = exitState[i - 1];
            fixed.words[7] = s.words[7] - s.words[8];
            fixed.words[8] = 0; // its entry is now the true state by construction
            fixed.scanBegin = ownBegin;
            rerun.push_back(i);
            again.push_back(fixed);
        }
        if (rerun.empty())
            break;
        if (pass >= kMaxFixupPasses) {
            *error = QStringLiteral("unbounded patterns did not settle after %1 passes").arg(pass);
            return false;
        }
        DispatchOutput fix;
        if (!dispatch(batch, catalog, params, again, false, t, fix, error))
            return false;
        t.hitsRerun += int64_t(fix.hits.size());
        // Earlier hits of a stream that runs again are superseded; its new hits are tagged with the pass.
        for (size_t k = 0; k < rerun.size(); ++k) {
            const size_t i = rerun[k];
            streams[i] = again[k];
            ++superseded[i];
            exitState[i] = fix.state[k * kStreamStateWords + 2];
            out.state[i * kStreamStateWords + 3] = again[k].words[5];
        }
        for (const auto &[k, pattern, end] : fix.hits) {
            const uint32_t i = uint32_t(rerun[k]);
            tagged.push_back({ i, superseded[i], { streams[i].batchFile, pattern, streams[i].scanBegin + int64_t(end) } });
        }
    }

    result.hits.reserve(tagged.size());
    for (const TaggedHit &h : tagged)
        if (h.pass == superseded[h.stream])
            result.hits.push_back(h.hit);
    const size_t total = result.hits.size();
    for (size_t i = firstUnbounded; i < streams.size(); ++i) {
        const Stream &s = streams[i];
        const BatchFile &bf = batch.files[s.batchFile];
        if (!bf.lastChunk && s.scanBegin + int64_t(s.words[3]) == bf.ownEnd)
            result.carryOut[s.batchFile * unbounded.size() + size_t(s.unboundedIndex)] = exitState[i];
    }
    t.hits = int64_t(total);
    return true;
}

bool GpuEngine::dispatch(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                         const std::vector<Stream> &input, bool uploadHaystack, BatchTelemetry &t, DispatchOutput &out,
                         QString *error)
{
    QRhi *rhi = m_device->rhi();
    const uint32_t pieceBytes = m_loopLimited ? kLimitedPieceBytes : kUnlimitedPieceBytes;
    const uint32_t budget = m_loopLimited ? 1 : 0;

    // Streams with more pieces first: round r's queue is then a prefix. `order` maps back to the caller's.
    std::vector<uint32_t> order(input.size());
    std::vector<uint32_t> pieces(input.size());
    for (size_t i = 0; i < input.size(); ++i) {
        order[i] = uint32_t(i);
        pieces[i] = std::max<uint32_t>(1, (input[i].words[1] + pieceBytes - 1) / pieceBytes);
    }
    if (std::adjacent_find(pieces.begin(), pieces.end(), std::not_equal_to<>()) != pieces.end())
        std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return pieces[a] > pieces[b]; });
    const uint32_t rounds = pieces[order.front()];
    std::vector<uint32_t> queueLens(rounds, 0);
    for (uint32_t p : pieces)
        for (uint32_t r = 0; r < p; ++r)
            ++queueLens[r];

    const int wg = params.workgroupSize;
    const int maxGroups = std::max(1, m_device->limits().maxWorkgroupsPerDimension);
    int groups = params.workerGroups;
    if (groups <= 0) {
        // Enough lanes for every item of the first round, bounded by the dispatch limit and, on large GPUs,
        // by what keeps every multiprocessor full (about 2^18 lanes on an H200).
        const int64_t wanted = std::min<int64_t>(queueLens[0], m_loopLimited ? int64_t(queueLens[0]) : int64_t(1) << 18);
        groups = int(std::clamp<int64_t>((wanted + wg - 1) / wg, 1, maxGroups));
    }
    groups = std::min(groups, maxGroups);
    const int lanes = groups * wg;
    t.workerGroups = groups;
    t.workgroupSize = wg;

    bool planHit = false;
    const Plan &plan = planFor(queueLens, lanes, budget, &planHit);
    t.planCacheHits += planHit ? 1 : 0;

    int64_t capacity = params.hitCapacity > 0
        ? params.hitCapacity
        : std::max(m_hitCapacity, m_loopLimited ? kDefaultHitCapacityLimited : kDefaultHitCapacity);
    const int64_t maxCapacity = std::max<int64_t>(1, m_device->limits().maxStorageBufferRange / (kHitWords * 4));

    const int align = rhi->ubufAlignment();
    const int paramsStride = (int(sizeof(ParamsBlock)) + align - 1) / align * align;
    const int64_t hayBytes = roundUp4(batch.used);
    std::vector<uint32_t> streamWords(input.size() * kStreamWords);
    for (size_t i = 0; i < input.size(); ++i)
        std::memcpy(streamWords.data() + i * kStreamWords, input[order[i]].words, sizeof input[i].words);
    const std::vector<uint32_t> zeroState(input.size() * kStreamStateWords, 0);
    const std::vector<uint32_t> zeroQueue(2 + rounds, 0);

    // Static, not Immutable: QRhi keeps a Static buffer's staging memory, an Immutable one allocates (and
    // page-faults) a new staging buffer of the batch's size on every upload.
    if (!ensureBuffer(m_haystack, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, roundUp16(hayBytes), error)
        || !ensureBuffer(m_streams, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, int64_t(streamWords.size()) * 4, error)
        || !ensureBuffer(m_streamState, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, int64_t(zeroState.size()) * 4, error)
        || !ensureBuffer(m_queue, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, int64_t(zeroQueue.size()) * 4, error)
        || !ensureBuffer(m_params, QRhiBuffer::Static, QRhiBuffer::UniformBuffer, int64_t(paramsStride) * rounds, error))
        return false;

    for (;;) {
        if (!ensureBuffer(m_hits, QRhiBuffer::Static, QRhiBuffer::StorageBuffer, capacity * kHitWords * 4, error))
            return false;
        // Tables may have to be (re)created before the bindings that name them.
        QRhiResourceUpdateBatch *updates = rhi->nextResourceUpdateBatch();
        int64_t tableBytes = 0;
        if (!ensureTables(catalog, updates, &tableBytes, error) || !ensureBindings(error)) {
            updates->release();
            return false;
        }
        bool pipelineHit = false;
        QRhiComputePipeline *pipeline = pipelineFor(wg, &pipelineHit, error);
        if (!pipeline) {
            updates->release();
            return false;
        }
        t.pipelineCacheHits += pipelineHit ? 1 : 0;
        t.bytesUploadedTables += tableBytes;

        QByteArray paramBytes(paramsStride * int(rounds), 0);
        for (uint32_t r = 0; r < rounds; ++r) {
            ParamsBlock p {};
            p.round = r;
            p.queueLen = queueLens[r];
            p.budget = budget;
            p.pieceBytes = pieceBytes;
            p.hitCapacity = uint32_t(std::min<int64_t>(capacity, 0xffffffffu));
            p.numGroups = uint32_t(catalog.groups.size());
            std::memcpy(paramBytes.data() + int64_t(r) * paramsStride, &p, sizeof p);
        }
        // Everything per batch goes through our own mapped staging buffer where there is one (Vulkan): the
        // haystack first, then the work items, their states, the queue and the parameters. QRhi would
        // allocate pinned staging memory for each of these uploads, every batch.
        const int64_t hayRegion = (std::max<int64_t>(batch.capacity, hayBytes) + 255) & ~int64_t(255);
        const int64_t streamsAt = hayRegion;
        const int64_t stateAt = streamsAt + ((int64_t(streamWords.size()) * 4 + 255) & ~int64_t(255));
        const int64_t queueAt = stateAt + ((int64_t(zeroState.size()) * 4 + 255) & ~int64_t(255));
        const int64_t paramsAt = queueAt + ((int64_t(zeroQueue.size()) * 4 + 255) & ~int64_t(255));
        const int64_t stagingBytes = paramsAt + paramBytes.size();
        if (!m_staging || m_staging->size() < stagingBytes)
            m_staging = VulkanStaging::create(*m_device, stagingBytes + stagingBytes / 4);
        std::vector<VulkanStaging::Copy> copies;
        if (m_staging) {
            uint8_t *base = m_staging->data();
            if (uploadHaystack) {
                parallelCopy(base, batch.haystack.get(), hayBytes);
                copies.push_back({ 0, m_haystack.get(), hayBytes });
            }
            parallelCopy(base + streamsAt, reinterpret_cast<const uint8_t *>(streamWords.data()), int64_t(streamWords.size()) * 4);
            std::memset(base + stateAt, 0, zeroState.size() * 4);
            std::memset(base + queueAt, 0, zeroQueue.size() * 4);
            std::memcpy(base + paramsAt, paramBytes.constData(), size_t(paramBytes.size()));
            copies.push_back({ streamsAt, m_streams.get(), int64_t(streamWords.size()) * 4 });
            copies.push_back({ stateAt, m_streamState.get(), int64_t(zeroState.size()) * 4 });
            copies.push_back({ queueAt, m_queue.get(), int64_t(zeroQueue.size()) * 4 });
            copies.push_back({ paramsAt, m_params.get(), paramBytes.size() });
        } else {
            if (uploadHaystack)
                updates->uploadStaticBuffer(m_haystack.get(), 0, int(hayBytes), batch.haystack.get());
            updates->uploadStaticBuffer(m_streams.get(), 0, int(streamWords.size() * 4), streamWords.data());
            updates->uploadStaticBuffer(m_streamState.get(), 0, int(zeroState.size() * 4), zeroState.data());
            updates->uploadStaticBuffer(m_queue.get(), 0, int(zeroQueue.size() * 4), zeroQueue.data());
            updates->uploadStaticBuffer(m_params.get(), 0, paramBytes.size(), paramBytes.constData());
        }
        if (uploadHaystack) {
            t.bytesUploadedData += hayBytes;
            uploadHaystack = false; // a re-run for a full hit ring finds it resident
        }
        t.bytesUploadedData += int64_t(streamWords.size() + zeroState.size() + zeroQueue.size()) * 4 + paramBytes.size();

        QRhiBufferReadbackResult queueBack, stateBack;
        bool queueDone = false, stateDone = false;
        queueBack.completed = [&queueDone] { queueDone = true; };
        stateBack.completed = [&stateDone] { stateDone = true; };
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
            if (!copies.empty())
                m_staging->recordCopies(cb, copies);
            cb->beginComputePass(updates);
            cb->endComputePass();
            m_timer->begin(cb);
            // One compute pass per round: round r + 1 continues from the states round r wrote.
            size_t d = 0;
            while (d < plan.dispatchRounds.size()) {
                const uint32_t round = plan.dispatchRounds[d];
                cb->beginComputePass();
                cb->setComputePipeline(pipeline);
                const QRhiCommandBuffer::DynamicOffset offset(0, quint32(round * uint32_t(paramsStride)));
                cb->setShaderResources(m_bindings.get(), 1, &offset);
                for (; d < plan.dispatchRounds.size() && plan.dispatchRounds[d] == round; ++d)
                    cb->dispatch(groups, 1, 1);
                if (d == plan.dispatchRounds.size()) {
                    QRhiResourceUpdateBatch *rb = rhi->nextResourceUpdateBatch();
                    rb->readBackBuffer(m_queue.get(), 0, int(zeroQueue.size() * 4), &queueBack);
                    rb->readBackBuffer(m_streamState.get(), 0, int(zeroState.size() * 4), &stateBack);
                    cb->endComputePass(rb);
                    // Outside any pass: beginExternal() inside one needs secondary command buffers.
                    m_timer->end(cb);
                } else {
                    cb->endComputePass();
                }
            }
            if (frame.end() != QRhi::FrameOpSuccess) {
                *error = QStringLiteral("the GPU device failed (frame result %1)").arg(int(frame.result()));
                m_disabled = true;
                return false;
            }
        }
        if (!queueDone || !stateDone) {
            RhiFrame frame(rhi); // OpenGL may complete read-backs at the next frame
        }
        if (!queueDone || !stateDone) {
            *error = QStringLiteral("the GPU read-back did not complete");
            return false;
        }
        t.gpuMs += m_timer->elapsedMs();
        t.bytesReadBack += queueBack.data.size() + stateBack.data.size();
        const auto *q = reinterpret_cast<const uint32_t *>(queueBack.data.constData());
        const auto *st = reinterpret_cast<const uint32_t *>(stateBack.data.constData());

        // Every item must have completed, each with all its bytes: Mesa's loop limit ends invocations silently.
        if (q[1] != input.size()) {
            *error = QStringLiteral("%1 of %2 GPU work items completed").arg(q[1]).arg(input.size());
            return false;
        }
        for (size_t i = 0; i < input.size(); ++i) {
            if (st[i * kStreamStateWords + 1] != input[order[i]].words[1]) {
                *error = QStringLiteral("GPU work item %1 stopped at byte %2 of %3")
                             .arg(i)
                             .arg(st[i * kStreamStateWords + 1])
                             .arg(input[order[i]].words[1]);
                return false;
            }
        }

        const int64_t attempted = q[0];
        if (attempted > capacity) {
            // A full ring is never truncated: run again with room for every hit.
            t.hitsRerun += attempted;
            if (attempted > maxCapacity) {
                *error = QStringLiteral("%1 hits do not fit in the largest GPU hit ring").arg(attempted);
                return false;
            }
            capacity = std::min<int64_t>(maxCapacity, std::max<int64_t>(attempted, capacity * 2));
            if (params.hitCapacity <= 0)
                m_hitCapacity = capacity;
            continue;
        }

        QByteArray hitBytes;
        if (attempted > 0 && !readBack(m_hits.get(), 0, int(attempted * kHitWords * 4), &hitBytes)) {
            *error = QStringLiteral("the GPU hit read-back did not complete");
            return false;
        }
        t.bytesReadBack += hitBytes.size();
        const auto *h = reinterpret_cast<const uint32_t *>(hitBytes.constData());
        out.hits.clear();
        out.hits.reserve(size_t(attempted));
        for (int64_t i = 0; i < attempted; ++i)
            out.hits.push_back({ order[h[i * kHitWords]], h[i * kHitWords + 1], h[i * kHitWords + 2] });
        out.state.assign(input.size() * kStreamStateWords, 0);
        for (size_t i = 0; i < input.size(); ++i)
            std::memcpy(out.state.data() + size_t(order[i]) * kStreamStateWords, st + i * kStreamStateWords,
                        kStreamStateWords * 4);
        // Lanes that found an item, over lanes launched.
        int64_t busy = 0;
        for (uint32_t r = 0; r < rounds; ++r)
            busy += std::min<int64_t>(queueLens[r], lanes);
        const int64_t launched = int64_t(plan.dispatchRounds.size()) * lanes;
        t.occupancy = launched > 0 ? std::min(1.0, double(busy) / double(launched)) : 0;
        return true;
    }
}

double GpuEngine::residentKernelMs(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                                   int repeats, QString *error)
{
    // The first run uploads the tables; the following ones upload the same haystack again, but the kernel
    // time (timestamps around the dispatches only) does not include uploads.
    double best = 0;
    std::vector<uint32_t> carry(batch.files.size() * catalog.groups.size(), 0);
    for (int i = 0; i < repeats; ++i) {
        BatchResult r;
        if (!runOnGpu(batch, catalog, params, carry, r, error))
            return -1;
        if (r.telemetry.gpuMs > 0 && (best == 0 || r.telemetry.gpuMs < best))
            best = r.telemetry.gpuMs;
    }
    return best;
}

} // namespace Hitscope
