// SPDX-License-Identifier: GPL-3.0-or-later
#include "batcher.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/parallel.h"

namespace Hitscope {

namespace {
QString errnoText(int err)
{
    return QString::fromLocal8Bit(std::strerror(err));
}

// Reads exactly `size` bytes unless the file ends first; returns bytes read or -1.
int64_t readFully(int fd, uint8_t *dst, int64_t size, int64_t offset)
{
    int64_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(fd, dst + done, size_t(size - done), offset + done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            break;
        done += n;
    }
    return done;
}

// What reading one chunk found.
struct Outcome
{
    int64_t got = 0; // -1 after a read error
    int error = 0;
    bool opened = true;
};

// Reads the chunks of `b` into its haystack with up to `threads` threads; one outcome per chunk.
std::vector<Outcome> readChunks(FileBatch &b, int threads, int64_t pieceBytes)
{
    // A chunk is opened once, by whichever of its pieces comes first, so that every piece reads the same file
    // even if its path is replaced meanwhile; the last piece to finish closes it.
    struct ChunkRead
    {
        std::once_flag once;
        int fd = -1;
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
    // A large chunk read by one thread would leave the others idle at the end of the batch: every chunk is
    // cut into pieces, handed out in order.
    const size_t numFiles = b.files.size();
    std::unique_ptr<ChunkRead[]> chunks(new ChunkRead[numFiles]);
    std::vector<Piece> pieces;
    int64_t bytes = 0;
    for (size_t i = 0; i < numFiles; ++i) {
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
    auto read = [&](size_t k, int) {
        Piece &p = pieces[k];
        const BatchFile &f = b.files[p.chunk];
        ChunkRead &c = chunks[p.chunk];
        std::call_once(c.once, [&] {
            // O_NOFOLLOW: a file swapped for a link since the walk is not read, unless links were followed.
            const int fd = ::open(f.path.constData(), O_RDONLY | (f.viaLink ? 0 : O_NOFOLLOW) | O_NONBLOCK | O_CLOEXEC);
            struct stat st;
            if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
                c.openError = fd < 0 ? errno : EINVAL;
                if (fd >= 0)
                    ::close(fd);
                return;
            }
            c.fd = fd;
        });
        if (c.fd >= 0 && p.size > 0) {
            // Past a shrunk file's end this reads short or nothing; bytes past the planned size (the file grew
            // since the walk) are not read: the planned size is what is scanned.
            p.got = readFully(c.fd, b.haystack.get() + f.dataOffset + (p.begin - f.holdBegin), p.size, p.begin);
            if (p.got < 0)
                p.error = errno;
        }
        if (c.piecesLeft.fetch_sub(1) == 1 && c.fd >= 0)
            ::close(c.fd);
    };
    // Starting a thread costs about as much as reading a few small files, or a fraction of a full piece.
    const size_t work = pieces.size() + 3 * size_t(bytes / pieceBytes);
    parallelFor(pieces.size(), int(std::min<size_t>(size_t(threads), std::max<size_t>(1, work / 4))), read);

    std::vector<Outcome> outcomes(numFiles);
    for (size_t i = 0; i < numFiles; ++i) {
        outcomes[i].opened = chunks[i].fd >= 0;
        outcomes[i].error = chunks[i].openError;
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
} // namespace

Batcher::Batcher(int overlap, Acquire acquire, Emit emit, const std::atomic_bool *cancelled)
    : m_overlap(overlap)
    , m_acquire(std::move(acquire))
    , m_emit(std::move(emit))
    , m_cancelled(cancelled)
{
}

Batcher::~Batcher() = default;

void Batcher::setReadThreads(int threads)
{
    m_readThreads = std::max(1, threads);
}

void Batcher::setPieceBytes(int64_t bytes)
{
    m_pieceBytes = std::max<int64_t>(1, bytes);
}

void Batcher::setSizes(int64_t batchBytes, int64_t segmentBytes)
{
    // A chunk must be able to hold its overlap, context and lookahead bytes and still own something.
    m_batchBytes = std::max<int64_t>(batchBytes, 2 * (int64_t(m_overlap) + 2) + 4096);
    m_segmentBytes = std::max<int64_t>(segmentBytes, 64);
}

void Batcher::ensureBatch()
{
    if (m_batch)
        return;
    m_batch = m_acquire();
    m_batch->clear();
    m_batch->index = m_nextBatchIndex++;
    m_batch->overlap = m_overlap;
    if (m_batch->capacity < m_batchBytes) {
        m_batch->haystack = allocateHaystack(m_batchBytes);
        m_batch->capacity = m_batchBytes;
    }
}

void Batcher::flush()
{
    if (m_batch && !m_batch->files.empty())
        readBatch();
    if (m_batch && (!m_batch->files.empty() || !m_batch->problems.empty()))
        m_emit(std::move(m_batch));
    m_batch.reset();
}

void Batcher::addProblem(const FileProblem &problem)
{
    ensureBatch();
    m_batch->problems.push_back(problem);
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
        m_batch->segments.push_back(s);
    }
}

void Batcher::addFile(const FileEntry &entry)
{
    // Only planned here: the bytes are read at flush(), by several threads at once.
    const int fileIndex = m_nextFileIndex++;
    const int64_t size = entry.size;
    int64_t pos = 0;
    bool first = true;
    for (;;) {
        if (m_cancelled && *m_cancelled)
            break;
        ensureBatch();
        const int64_t context = pos > 0 ? std::min<int64_t>(pos, m_overlap + 1) : 0;
        int64_t room = m_batch->capacity - m_batch->used - context - 1;
        // Start a fresh batch rather than owning a sliver of a large file here.
        if (room < std::min<int64_t>(size - pos, 64 << 10) && !m_batch->files.empty()) {
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
        f.dataOffset = m_batch->used;
        f.firstChunk = first;
        f.lastChunk = f.ownEnd >= size;
        m_batch->used += f.holdEnd - f.holdBegin;
        m_batch->ownedBytes += f.ownEnd - f.ownBegin;
        m_batch->files.push_back(f);
        addSegments(m_batch->files.back(), uint32_t(m_batch->files.size() - 1));
        first = false;
        pos = f.ownEnd;
        if (f.lastChunk)
            break;
        flush();
        // The chunk just read found the file shorter than planned (or unreadable): it ended there.
        if (m_endedEarly == fileIndex)
            break;
    }
}

void Batcher::readBatch()
{
    FileBatch &b = *m_batch;
    const std::vector<Outcome> outcomes = readChunks(b, m_readThreads, m_pieceBytes);

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
            b.problems.push_back({ f.path, QStringLiteral("cannot open: ") + errnoText(o.error) });
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
    if (!changed)
        return;
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

void Batcher::finish()
{
    flush();
}

} // namespace Hitscope
