// SPDX-License-Identifier: GPL-3.0-or-later
#include "batcher.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
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
}

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
    struct Outcome
    {
        int64_t got = 0;
        int error = 0;
        bool opened = true;
    };
    std::vector<Outcome> outcomes(b.files.size());
    std::atomic<size_t> next { 0 };
    auto work = [&] {
        for (size_t i = next++; i < b.files.size(); i = next++) {
            BatchFile &f = b.files[i];
            Outcome &o = outcomes[i];
            const int64_t want = f.holdEnd - f.holdBegin;
            // O_NOFOLLOW: a file swapped for a link since the walk is not read, unless links were followed.
            const int fd = ::open(f.path.constData(), O_RDONLY | (f.viaLink ? 0 : O_NOFOLLOW) | O_NONBLOCK | O_CLOEXEC);
            struct stat st;
            if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
                o.error = fd < 0 ? errno : EINVAL;
                o.opened = false;
                if (fd >= 0)
                    ::close(fd);
                continue;
            }
            if (want > 0) {
                o.got = readFully(fd, b.haystack.get() + f.dataOffset, want, f.holdBegin);
                if (o.got < 0)
                    o.error = errno;
            }
            // More bytes than planned: the file grew since the walk; the planned size is what is scanned.
            ::close(fd);
        }
    };
    const int threads = int(std::min<size_t>(size_t(m_readThreads), std::max<size_t>(1, b.files.size() / 4)));
    runWorkers(std::max(1, threads), [&](int) { work(); });

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
