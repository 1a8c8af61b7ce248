// SPDX-License-Identifier: GPL-3.0-or-later
#include "batcher.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
        m_batch->haystack.reset(new uint8_t[size_t(m_batchBytes)]);
        m_batch->capacity = m_batchBytes;
    }
}

void Batcher::flush()
{
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
    const int fd = ::open(entry.path.constData(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        addProblem({ entry.path, QStringLiteral("cannot open: ") + errnoText(errno) });
        return;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        addProblem({ entry.path, QStringLiteral("not a regular file any more") });
        return;
    }
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    const int fileIndex = m_nextFileIndex++;
    int64_t size = st.st_size;
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
        f.fileSize = size;
        f.ownBegin = pos;
        f.ownEnd = std::min(size, pos + room);
        f.holdBegin = pos - context;
        f.holdEnd = std::min(size, f.ownEnd + 1);
        f.dataOffset = m_batch->used;
        f.firstChunk = first;
        const int64_t want = f.holdEnd - f.holdBegin;
        const int64_t got = readFully(fd, m_batch->haystack.get() + f.dataOffset, want, f.holdBegin);
        if (got < 0) {
            m_batch->problems.push_back({ entry.path, QStringLiteral("read error: ") + errnoText(errno) });
            size = pos; // what was scanned so far stands; the file ends here for the engines
            f.holdEnd = f.holdBegin;
            f.ownEnd = pos;
        } else if (got < want) {
            // The file shrank since it was measured: scan what is there.
            size = f.holdBegin + got;
            f.holdEnd = size;
            f.ownEnd = std::min(f.ownEnd, size);
        }
        f.fileSize = size;
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
    }
    ::close(fd);
}

void Batcher::finish()
{
    flush();
}

} // namespace Hitscope
