// SPDX-License-Identifier: GPL-3.0-or-later
#include "batcher.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "scan/ringreader.h"
#include "util/jobthread.h"
#include "util/parallel.h"
#include "util/preadfully.h"

namespace Hitscope {

namespace {
QString errnoText(int err)
{
    return QString::fromLocal8Bit(std::strerror(err));
}

// O_NOFOLLOW: a file swapped for a link since the walk is not read, unless links were followed. O_NONBLOCK: one
// swapped for a FIFO does not block the open.
int openFlags(bool viaLink)
{
    return O_RDONLY | (viaLink ? 0 : O_NOFOLLOW) | O_NONBLOCK | O_CLOEXEC;
}

// Why a file could not be opened for reading, worded as the walk words it when it opens files itself
// (WalkOptions::testReadableFrom). EINVAL: opened, but not a regular file (swapped since the walk).
QString openProblem(int error)
{
    if (error == EACCES || error == EPERM)
        return QStringLiteral("permission denied");
    if (error == EINVAL)
        return QStringLiteral("not a regular file");
    return QStringLiteral("cannot open: ") + errnoText(error);
}

// What reading one chunk found.
struct Outcome
{
    int64_t got = 0; // -1 after a read error
    int error = 0;
    bool opened = true;
};

// A chunk is opened once, by whichever of its pieces comes first, so that every piece reads the same file
// even if its path is replaced meanwhile; the last piece to finish closes it. A mutex, not std::call_once:
// glibc's call_once ends in a futex wake-up, a system call per file that cost 1.2 us each in a 2-core VM,
// where a mutex nobody waits for makes none.
struct ChunkRead
{
    std::mutex mutex;
    bool openTried = false;
    int fd = -1;
    bool opened = false;
    int openError = 0;
    std::atomic<int> piecesLeft { 0 };
};

struct Piece
{
    uint32_t chunk = 0;
    int64_t begin = 0; // file offset
    int64_t size = 0;
    int64_t got = 0;
    int error = 0;
};

// Work items: a piece of its own, or a group of chunks in one piece each, read through the ring together.
struct ReadItem
{
    uint32_t firstPiece = 0;
    uint32_t count = 1;
    bool group = false;
    int64_t bytes = 0;
};

// Cuts the chunks of `b` into pieces of at most `pieceBytes`; returns the bytes of all the chunks.
int64_t cutPieces(const FileBatch &b, int64_t pieceBytes, ChunkRead *chunks, std::vector<Piece> &pieces)
{
    // A large chunk read by one thread would leave the others idle at the end of the batch: every chunk is
    // cut into pieces, handed out in order.
    int64_t bytes = 0;
    for (size_t i = 0; i < b.files.size(); ++i) {
        const BatchFile &f = b.files[i];
        const int64_t want = f.holdEnd - f.holdBegin;
        // An empty file still gets a piece: opening it is what finds it unreadable.
        int count = 0;
        int64_t at = 0;
        do {
            const int64_t size = std::min(pieceBytes, want - at);
            pieces.push_back({ uint32_t(i), f.holdBegin + at, size });
            at += size;
            ++count;
        } while (at < want);
        chunks[i].piecesLeft = count;
        bytes += want;
    }
    return bytes;
}

void openChunk(const BatchFile &f, ChunkRead &c)
{
    if (f.fd >= 0) { // opened by the batcher, which checked it
        c.fd = f.fd;
        c.opened = true;
        return;
    }
    RingReader::Opening o { f.path.constData(), openFlags(f.viaLink) };
    RingReader::openPlain(std::span(&o, 1));
    c.fd = o.fd;
    c.opened = o.fd >= 0;
    c.openError = o.error;
}

void readPiece(FileBatch &b, ChunkRead *chunks, Piece &p)
{
    const BatchFile &f = b.files[p.chunk];
    ChunkRead &c = chunks[p.chunk];
    {
        std::lock_guard lock(c.mutex);
        if (!c.openTried) {
            openChunk(f, c);
            c.openTried = true;
        }
    }
    if (c.fd >= 0 && p.size > 0) {
        // Past a shrunk file's end this reads short or nothing; bytes past the planned size (the file grew
        // since the walk) are not read: the planned size is what is scanned.
        p.got = preadFully(c.fd, b.haystack.get() + f.dataOffset + (p.begin - f.holdBegin), p.size, p.begin);
        if (p.got < 0)
            p.error = errno;
    }
    if (c.piecesLeft.fetch_sub(1) == 1 && c.fd >= 0)
        ::close(c.fd);
}

std::vector<ReadItem> readItems(const std::vector<Piece> &pieces, const ChunkRead *chunks, int64_t pieceBytes,
                                bool ring)
{
    std::vector<ReadItem> items;
    items.reserve(pieces.size());
    const bool grouping = ring && RingReader::available();
    for (size_t k = 0; k < pieces.size(); ++k) {
        const Piece &p = pieces[k];
        const bool whole = grouping && chunks[p.chunk].piecesLeft.load(std::memory_order_relaxed) == 1;
        // A group holds no more than a piece's bytes, so that the threads still share a batch evenly.
        if (whole && !items.empty()) {
            ReadItem &last = items.back();
            if (last.group && last.count < uint32_t(RingReader::kGroup) && last.bytes + p.size <= pieceBytes) {
                ++last.count;
                last.bytes += p.size;
                continue;
            }
        }
        items.push_back({ uint32_t(k), 1, whole, p.size });
    }
    return items;
}

void readGroup(FileBatch &b, ChunkRead *chunks, Piece *pieces, const ReadItem &item)
{
    RingReader *reader = RingReader::forThisThread();
    if (!reader) {
        for (uint32_t j = 0; j < item.count; ++j)
            readPiece(b, chunks, pieces[item.firstPiece + j]);
        return;
    }
    std::array<RingReader::Request, RingReader::kGroup> requests;
    for (uint32_t j = 0; j < item.count; ++j) {
        const Piece &p = pieces[item.firstPiece + j];
        const BatchFile &f = b.files[p.chunk];
        RingReader::Request &r = requests[j];
        r.path = f.path.constData();
        r.fd = f.fd;
        r.openFlags = openFlags(f.viaLink);
        r.dst = b.haystack.get() + f.dataOffset + (p.begin - f.holdBegin);
        r.size = p.size;
        r.offset = p.begin;
    }
    reader->read(std::span(requests.data(), item.count));
    for (uint32_t j = 0; j < item.count; ++j) {
        Piece &p = pieces[item.firstPiece + j];
        const RingReader::Request &r = requests[j];
        ChunkRead &c = chunks[p.chunk];
        c.opened = r.opened;
        if (!r.opened) {
            c.openError = r.error;
            continue;
        }
        p.got = r.got;
        p.error = r.got < 0 ? r.error : 0;
    }
}

std::vector<Outcome> outcomesOf(FileBatch &b, const ChunkRead *chunks, const std::vector<Piece> &pieces)
{
    const size_t numFiles = b.files.size();
    std::vector<Outcome> outcomes(numFiles);
    for (size_t i = 0; i < numFiles; ++i) {
        outcomes[i].opened = chunks[i].opened;
        outcomes[i].error = chunks[i].openError;
        b.files[i].fd = -1; // closed by the read
    }
    // A chunk's bytes run up to its first short piece; a read error loses the whole chunk, as one pread loop did.
    std::vector<bool> ended(numFiles, false);
    for (const Piece &p : pieces) {
        Outcome &o = outcomes[p.chunk];
        if (!o.opened || o.error != 0 || ended[p.chunk])
            continue;
        if (p.error != 0) {
            o.error = p.error;
            o.got = -1;
            continue;
        }
        o.got += p.got;
        ended[p.chunk] = p.got < p.size;
    }
    return outcomes;
}

// Reads the chunks of `b` into its haystack with up to `threads` threads; one outcome per chunk. With `ring`,
// runs of chunks read in one piece each go through RingReader, where this process can use io_uring.
std::vector<Outcome> readChunks(FileBatch &b, int threads, int64_t pieceBytes, WorkerPool &pool, bool ring)
{
    std::unique_ptr<ChunkRead[]> chunks(new ChunkRead[b.files.size()]);
    std::vector<Piece> pieces;
    const int64_t bytes = cutPieces(b, pieceBytes, chunks.get(), pieces);
    const std::vector<ReadItem> items = readItems(pieces, chunks.get(), pieceBytes, ring);
    // Starting a thread costs about as much as reading a few small files, or a fraction of a full piece.
    const size_t work = pieces.size() + 3 * size_t(bytes / pieceBytes);
    parallelFor(
        items.size(), int(std::min<size_t>(size_t(threads), std::max<size_t>(1, work / 4))),
        [&](size_t i, int) {
            const ReadItem &item = items[i];
            if (item.group)
                readGroup(b, chunks.get(), pieces.data(), item);
            else
                readPiece(b, chunks.get(), pieces[item.firstPiece]);
        },
        pool);
    return outcomesOf(b, chunks.get(), pieces);
}
} // namespace

struct Batcher::Read
{
    std::unique_ptr<FileBatch> batch;
    std::vector<Outcome> outcomes;
    std::atomic_bool done { false };
};

Batcher::Batcher(int overlap, Acquire acquire, Emit emit, const std::atomic_bool *cancelled)
    : m_overlap(overlap)
    , m_chunkContext(overlap + 1)
    , m_acquire(std::move(acquire))
    , m_emit(std::move(emit))
    , m_plan(std::make_unique<FileBatch>())
    , m_cancelled(cancelled)
{
    m_plan->index = -1; // no batch being planned
    // The plan and the batch being read hold descriptors, and the read threads open up to RingReader::kGroup
    // files each besides; 512 are left for those and the rest of the process. At most 4,096 each: a batch of more
    // files (tiny ones, without the ramp) opens the rest again to read them.
    struct rlimit limit {};
    const int64_t soft = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
        ? int64_t(limit.rlim_cur)
        : int64_t(1) << 20;
    m_maxHeldFds = int(std::clamp<int64_t>((soft - 512) / 2, 0, 4096));
}

Batcher::~Batcher()
{
    // The reader thread runs what was posted (the batch being read) before it ends.
    m_reader.reset();
    closeHeld(*m_plan);
}

void Batcher::closeHeld(FileBatch &batch)
{
    for (BatchFile &f : batch.files) {
        if (f.fd >= 0)
            ::close(f.fd);
        f.fd = -1;
    }
}

void Batcher::setAllocator(std::function<Haystack(int64_t)> allocate)
{
    m_allocate = std::move(allocate);
}

void Batcher::setReadThreads(int threads)
{
    m_readThreads = std::max(1, threads);
}

void Batcher::setReadNice(int steps)
{
    m_readNice = std::max(0, steps);
}

void Batcher::setRingReads(bool on)
{
    m_ringReads = on;
}

void Batcher::setPieceBytes(int64_t bytes)
{
    m_pieceBytes = std::max<int64_t>(1, bytes);
}

void Batcher::setChunkContext(int bytes)
{
    m_chunkContext = std::max(m_overlap + 1, bytes);
}

void Batcher::setSizes(int64_t batchBytes, int64_t segmentBytes)
{
    // A chunk must be able to hold its context and lookahead bytes and still own something.
    m_minBatchBytes = 2 * (int64_t(m_chunkContext) + 1) + 4096;
    m_batchBytes = std::max<int64_t>(batchBytes, m_minBatchBytes);
    m_segmentBytes = std::max<int64_t>(segmentBytes, 64);
}

void Batcher::setRamp(bool on)
{
    m_ramp = on;
}

void Batcher::setBytesAfter(int64_t bytes, int64_t unsizedFiles)
{
    m_bytesAfter = bytes;
    m_unsizedAfter = std::max<int64_t>(0, unsizedFiles);
}

int64_t Batcher::bytesAfter() const
{
    if (m_bytesAfter < 0)
        return -1;
    const int64_t mean = m_sizedFiles > 0 ? m_sizedBytes / m_sizedFiles : 64 << 10;
    return m_bytesAfter + m_unsizedAfter * mean;
}

int64_t Batcher::planCapacity(int64_t remaining) const
{
    if (!m_ramp)
        return m_batchBytes;
    // A 16 MiB batch of a 512 MiB scan goes through the H200's engine in a few milliseconds; much smaller
    // ones would cost more in fixed costs per batch than they save.
    const int64_t smallest = std::max(m_minBatchBytes, m_batchBytes / 32);
    int64_t capacity = m_batchBytes;
    // The first batches grow: 1/8, 1/4, 1/2 of the batch size.
    constexpr int kRampUp = 3;
    if (m_nextBatchIndex < kRampUp)
        capacity = m_batchBytes >> (kRampUp - m_nextBatchIndex);
    // The last ones halve: each takes half of what is left, until what is left fits in the smallest.
    if (remaining >= 0)
        capacity = std::min(capacity, (remaining / 2 + 4095) & ~int64_t(4095));
    capacity = std::max(capacity, smallest);
    // Rather than leave a sliver for one more batch, this one takes the rest (with room for chunk overheads).
    if (remaining >= 0 && remaining - capacity < smallest)
        capacity = std::min(m_batchBytes, remaining + smallest);
    return capacity;
}

void Batcher::ensurePlan(int64_t remaining)
{
    if (m_plan->index >= 0)
        return;
    m_plan->capacity = planCapacity(remaining);
    m_plan->index = m_nextBatchIndex++;
    m_plan->overlap = m_overlap;
}

void Batcher::flush()
{
    if (m_plan->index < 0)
        return;
    const auto planned = std::chrono::steady_clock::now();
    // Batches leave in order: the one being read first. Only then is a buffer taken for this one, so the
    // batcher never holds two while the scan waits for one.
    collect();
    // Collecting may have dropped the plan's only chunk (its file ended in the batch before).
    if (m_plan->files.empty() && m_plan->problems.empty())
        return;
    const auto waitBegan = std::chrono::steady_clock::now();
    std::unique_ptr<FileBatch> batch = m_acquire();
    const double waitMs
        = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - waitBegan).count();
    if (!batch) { // the scan closed its pool of buffers: it has stopped
        closeHeld(*m_plan);
        m_heldFds = 0;
        m_plan->clear();
        m_plan->index = -1;
        return;
    }
    if (batch->capacity < m_plan->capacity) {
        // Every buffer the full batch size, also for the ramp's small batches: buffers are recycled, and a
        // larger one later would be fresh memory again (page faults; for the GPU engine, memory to register).
        const int64_t bytes = std::max(m_plan->capacity, m_batchBytes);
        batch->haystack.reset(); // before the new one: not two large buffers at once
        batch->haystack = m_allocate(bytes);
        batch->capacity = bytes;
    }
    // Swapped rather than moved: the plan keeps the recycled batch's vectors and their memory.
    batch->clear();
    std::swap(batch->files, m_plan->files);
    std::swap(batch->segments, m_plan->segments);
    std::swap(batch->problems, m_plan->problems);
    batch->index = m_plan->index;
    batch->overlap = m_plan->overlap;
    batch->used = m_plan->used;
    batch->ownedBytes = m_plan->ownedBytes;
    batch->bufferWaitMs = waitMs;
    batch->readBegan = batch->readEnded = std::chrono::steady_clock::now();
    batch->planned = planned;
    m_plan->clear();
    m_plan->index = -1;
    m_heldFds = 0;
    if (batch->files.empty()) {
        m_emit(std::move(batch));
        return;
    }
    // The reader thread and the read threads it starts keep the nice level they were started at: a new level
    // needs new threads (no read is in flight here, collect() has waited for the last one).
    if (!m_reader || m_readerNice != m_readNice) {
        m_reader.reset();
        m_reader = std::make_unique<JobThread>(m_readNice, "hs-read");
        m_readerNice = m_readNice;
    }
    m_read = std::make_unique<Read>();
    m_read->batch = std::move(batch);
    Read *read = m_read.get();
    // Every read thread gets at least two pieces of a small batch.
    const int64_t pieceBytes = std::min(m_pieceBytes, std::max<int64_t>(1 << 20, read->batch->used / (2 * m_readThreads)));
    // The reader thread is worker 0 of the read threads; they are kept from batch to batch (its WorkerPool), and
    // so are their io_uring rings.
    m_reader->post([read, threads = m_readThreads, pieceBytes, ring = m_ringReads] {
        FileBatch &b = *read->batch;
        b.readBegan = std::chrono::steady_clock::now();
        read->outcomes = readChunks(b, threads, pieceBytes, WorkerPool::forThisThread(), ring);
        b.readEnded = std::chrono::steady_clock::now();
        read->done.store(true, std::memory_order_release);
    });
}

void Batcher::collectIfRead()
{
    if (m_read && m_read->done.load(std::memory_order_acquire))
        collect();
}

void Batcher::poll()
{
    collectIfRead();
    // The walk is slow: files held back are read now rather than when a group is full.
    sizeUnsized();
}

void Batcher::addProblem(const FileProblem &problem)
{
    collectIfRead();
    sizeUnsized(); // problems stay in walk order
    ensurePlan(bytesAfter());
    m_plan->problems.push_back(problem);
}

void Batcher::addSegments(const BatchFile &file, uint32_t batchFileIndex)
{
    for (int64_t b = file.ownBegin; b < file.ownEnd; b += m_segmentBytes) {
        Segment s;
        s.batchFile = batchFileIndex;
        s.ownBegin = b;
        s.ownEnd = std::min(file.ownEnd, b + m_segmentBytes);
        s.scanBegin = std::max<int64_t>(0, b - m_overlap);
        s.scanEnd = std::min(file.fileSize, s.ownEnd + 1);
        m_plan->segments.push_back(s);
    }
}

int64_t Batcher::maxFilesPerBatch() const
{
    // Each file costs the stages a fixed time besides its bytes (open and read, segment table, start finding,
    // conditions, reporting): on the H200 a 512 MiB batch of 30,000 small files took 2-5 times as long in each
    // stage as one of large files, and the stages ran one after the other on it. One file per 64 KiB of batch
    // keeps a batch's time in each stage close to that of its bytes.
    return std::max<int64_t>(1024, m_batchBytes >> 16);
}

void Batcher::addFile(const FileEntry &entry)
{
    // Emitted as soon as it is read, not when the batch being planned is full: the scan may be waiting for it.
    collectIfRead();
    if (entry.size == FileEntry::kUnknownSize) {
        m_unsized.push_back(entry);
        if (m_unsized.size() >= size_t(RingReader::kGroup))
            sizeUnsized();
        return;
    }
    sizeUnsized();
    planFile(entry, -1);
}

void Batcher::sizeUnsized()
{
    if (m_unsized.empty())
        return;
    const size_t n = m_unsized.size();
    std::vector<RingReader::Opening> openings(n);
    for (size_t i = 0; i < n; ++i) {
        openings[i].path = m_unsized[i].path.constData();
        openings[i].openFlags = openFlags(m_unsized[i].viaLink);
    }
    RingReader *ring = m_ringReads ? RingReader::forThisThread() : nullptr;
    if (ring)
        ring->open(openings);
    else
        RingReader::openPlain(openings);
    // The ramp's bytes after each file: those of the files after it in the group, then the walk's.
    std::vector<int64_t> after(n, -1);
    int64_t rest = bytesAfter();
    for (size_t i = n; i-- > 0;) {
        after[i] = rest;
        if (rest >= 0 && openings[i].fd >= 0)
            rest += openings[i].size;
    }
    const int64_t walkBytesAfter = m_bytesAfter, walkUnsizedAfter = m_unsizedAfter;
    m_unsizedAfter = 0;
    for (size_t i = 0; i < n; ++i) {
        const RingReader::Opening &o = openings[i];
        FileEntry entry = std::move(m_unsized[i]);
        if (o.fd < 0) {
            ++m_nextFileIndex; // as a file planned and then found unreadable takes one
            if (m_cancelled && *m_cancelled)
                continue;
            ensurePlan(after[i]);
            m_plan->problems.push_back({ entry.path, openProblem(o.error) });
            continue;
        }
        ++m_sizedFiles;
        m_sizedBytes += o.size;
        entry.size = o.size;
        m_bytesAfter = after[i];
        planFile(entry, o.fd);
    }
    m_bytesAfter = walkBytesAfter;
    m_unsizedAfter = walkUnsizedAfter;
    m_unsized.clear();
}

void Batcher::planFile(const FileEntry &entry, int fd)
{
    if (m_ramp && int64_t(m_plan->files.size()) >= maxFilesPerBatch())
        flush();
    // Only planned here: the bytes are read at flush(), by several threads at once.
    const int fileIndex = m_nextFileIndex++;
    const int64_t size = entry.size;
    int64_t pos = 0;
    bool first = true;
    const int64_t after = bytesAfter();
    for (;;) {
        if (m_cancelled && *m_cancelled)
            break;
        ensurePlan(after >= 0 ? after + (size - pos) : -1);
        const int64_t context = pos > 0 ? std::min<int64_t>(pos, m_chunkContext) : 0;
        int64_t room = m_plan->capacity - m_plan->used - context - 1;
        // Start a fresh batch rather than owning a sliver of a large file here.
        if (room < std::min<int64_t>(size - pos, 64 << 10) && !m_plan->files.empty()) {
            flush();
            continue;
        }
        room = std::max<int64_t>(room, 1);
        BatchFile f;
        f.fileIndex = fileIndex;
        f.path = entry.path;
        f.viaLink = entry.viaLink;
        f.fileSize = size;
        f.ownBegin = pos;
        f.ownEnd = std::min(size, pos + room);
        f.holdBegin = pos - context;
        f.holdEnd = std::min(size, f.ownEnd + 1);
        f.dataOffset = m_plan->used;
        f.firstChunk = first;
        f.lastChunk = f.ownEnd >= size;
        // A file in one chunk is read from the descriptor the batcher opened; one in several is opened again by
        // each chunk's read, as files the walk sized are (few files are that large).
        if (fd >= 0 && f.firstChunk && f.lastChunk && m_heldFds < m_maxHeldFds) {
            f.fd = fd;
            fd = -1;
            ++m_heldFds;
        }
        m_plan->used += f.holdEnd - f.holdBegin;
        m_plan->ownedBytes += f.ownEnd - f.ownBegin;
        m_plan->files.push_back(f);
        addSegments(m_plan->files.back(), uint32_t(m_plan->files.size() - 1));
        first = false;
        pos = f.ownEnd;
        if (f.lastChunk)
            break;
        // The next chunk is planned while this one is read. Should this one find the file shorter than planned
        // (or unreadable), collect() drops the next chunk from the plan and the file ends here.
        flush();
        if (m_endedEarly == fileIndex)
            break;
    }
    if (fd >= 0)
        ::close(fd);
}

void Batcher::collect()
{
    if (!m_read)
        return;
    m_reader->wait();
    FileBatch &b = *m_read->batch;
    const std::vector<Outcome> &outcomes = m_read->outcomes;
    const bool continues = !b.files.back().lastChunk;

    // A file that could not be read, or that shrank, ends where its bytes ended.
    bool changed = false;
    for (size_t i = 0; i < b.files.size(); ++i) {
        BatchFile &f = b.files[i];
        const Outcome &o = outcomes[i];
        const int64_t want = f.holdEnd - f.holdBegin;
        if (o.error == 0 && o.got == want)
            continue;
        changed = true;
        if (!o.opened && f.firstChunk) {
            b.problems.push_back({ f.path, openProblem(o.error) });
            f.failed = true;
        } else if (o.error != 0) {
            b.problems.push_back({ f.path, QStringLiteral("read error: ") + errnoText(o.error) });
        }
        const int64_t size = f.failed ? 0 : f.holdBegin + std::max<int64_t>(0, o.got);
        b.ownedBytes -= f.ownEnd - f.ownBegin;
        f.fileSize = std::max(size, f.ownBegin);
        f.holdEnd = std::max(f.holdBegin, std::min(f.holdEnd, size));
        f.ownEnd = std::max(f.ownBegin, std::min(f.ownEnd, size));
        b.ownedBytes += f.ownEnd - f.ownBegin;
        f.fileSize = std::max(f.ownEnd, size);
        f.lastChunk = true;
        m_endedEarly = f.fileIndex;
    }
    if (changed) {
        std::vector<Segment> kept;
        kept.reserve(b.segments.size());
        for (Segment s : b.segments) {
            const BatchFile &f = b.files[s.batchFile];
            if (s.ownBegin >= f.ownEnd)
                continue;
            s.ownEnd = std::min(s.ownEnd, f.ownEnd);
            s.scanEnd = std::min(f.fileSize, s.ownEnd + 1);
            kept.push_back(s);
        }
        b.segments = std::move(kept);
    }
    if (continues && b.files.back().lastChunk)
        dropContinuation(b.files.back().fileIndex);
    std::unique_ptr<FileBatch> batch = std::move(m_read->batch);
    m_read.reset();
    m_emit(std::move(batch));
}

void Batcher::dropContinuation(int fileIndex)
{
    // A continuing chunk is always the first of its batch: a file's chunks end their batches but the last.
    FileBatch &p = *m_plan;
    if (p.files.empty() || p.files.front().fileIndex != fileIndex)
        return;
    const BatchFile &dropped = p.files.front();
    const int64_t held = dropped.holdEnd - dropped.holdBegin;
    p.used -= held;
    p.ownedBytes -= dropped.ownEnd - dropped.ownBegin;
    p.files.erase(p.files.begin());
    for (BatchFile &f : p.files)
        f.dataOffset -= held;
    std::vector<Segment> kept;
    kept.reserve(p.segments.size());
    for (Segment s : p.segments) {
        if (s.batchFile == 0)
            continue;
        --s.batchFile;
        kept.push_back(s);
    }
    p.segments = std::move(kept);
}

void Batcher::finish()
{
    sizeUnsized();
    flush();
    collect();
}

} // namespace Hitscope
