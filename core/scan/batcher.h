// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "engine/filebatch.h"
#include "engine/fileentry.h"
#include "util/jobthread.h"

namespace Hitscope {

/**
 * Reads files into batches. Files are packed back to back; a file larger than the room left is split into
 * chunks carried over to the next batches, each chunk holding the overlap it needs. Runs on the reader
 * thread, never on the GPU thread: acquire and emit are called on the thread that calls addFile() and finish().
 */
class Batcher
{
public:
    /// Returns an empty batch to fill (a recycled one when possible: fresh buffers cost page faults).
    using Acquire = std::function<std::unique_ptr<FileBatch>()>;
    /// Receives each full batch.
    using Emit = std::function<void(std::unique_ptr<FileBatch>)>;

    /// Reading stops early (the current file is left unfinished) once `cancelled` is true.
    Batcher(int overlap, Acquire acquire, Emit emit, const std::atomic_bool *cancelled = nullptr);
    /// A batch still being read is waited for and dropped.
    ~Batcher();

    /// Applies to the batches packed from now on.
    void setSizes(int64_t batchBytes, int64_t segmentBytes);
    /// A chunk of a file after its first holds at least this many bytes before those it owns (when the file has
    /// them; default and at least: the overlap and one byte more). For windows that reach further back than
    /// the segments overlap (PatternCatalog::chunkContext()). Call before setSizes().
    void setChunkContext(int bytes);

    /// Where batch buffers come from (default: allocateHaystack()); called on the batcher's thread.
    void setAllocator(std::function<Haystack(int64_t)> allocate);

    /// Threads that read a batch's files at once (default: one per core, at most 8).
    void setReadThreads(int threads);
    /// Nice levels the read threads run below the batcher's thread (default 0).
    void setReadNice(int steps);

    /// Files read in one piece are opened, checked and read through io_uring, a group per system call, where
    /// this process can use it (RingReader); default on. Off: plain calls, four per file.
    void setRingReads(bool on);

    /// Reads are cut into pieces of at most this many bytes, shared out among the read threads (default 8 MiB;
    /// smaller in small batches, so that every thread gets some).
    void setPieceBytes(int64_t bytes);

    /// Smaller batches where the scan starts and ends: the engine starts on a first batch read in a few
    /// milliseconds, and once setBytesAfter() says how much is left, the last batches halve so that the scan
    /// does not end waiting for one full batch to go through the engine and be resolved. A batch then also
    /// ends at maxFilesPerBatch() files. Off by default: a user tuning the batch size sees batches of that size.
    void setRamp(bool on);
    /// Bytes of the files still to come after the next addFile() or addProblem(); -1 (the default) while
    /// unknown. `unsizedFiles` more files of unknown size come too; each counts as the mean size of those sized
    /// so far.
    void setBytesAfter(int64_t bytes, int64_t unsizedFiles = 0);

    /// Plans one file into the batches (its size is the walker's). A full batch is read by several threads
    /// while the next one is planned, and emitted once read; only one batch is held at a time. Problems
    /// (cannot open, read errors) travel with the batch; a file that shrank in between is scanned as far
    /// as it goes. A file of unknown size (FileEntry::kUnknownSize: the walk did not stat it) is opened first,
    /// with others in a group (RingReader::open()), and planned with the size its descriptor gives; the
    /// descriptor is kept and read from, unless the file takes more than one chunk.
    void addFile(const FileEntry &entry);
    void addProblem(const FileProblem &problem);
    /// Emits the batch being read if its reading has finished (addFile and addProblem do too); for a walk that
    /// passes many files it does not add (FileWalker::setOnEntry).
    void poll();
    /// With the ramp on: one file per 64 KiB of the batch size, at least 1024.
    int64_t maxFilesPerBatch() const;
    /// Emits the last, partly filled batch, after the one being read.
    void finish();

private:
    struct Read;

    void planFile(const FileEntry &entry, int fd);
    /// Opens and plans the files of unknown size that addFile() holds back.
    void sizeUnsized();
    /// Remaining bytes for the ramp after the file being planned: m_bytesAfter with the unsized files counted.
    int64_t bytesAfter() const;
    /// Closes the descriptors a plan holds that will not be read (the scan stopped).
    static void closeHeld(FileBatch &batch);

    /// `remaining`: bytes still to be planned from here to the end of the scan, or -1 when unknown.
    void ensurePlan(int64_t remaining);
    int64_t planCapacity(int64_t remaining) const;
    void flush();
    void addSegments(const BatchFile &file, uint32_t batchFileIndex);
    void collect();
    void collectIfRead();
    void dropContinuation(int fileIndex);

    int m_overlap;
    int m_chunkContext; ///< bytes a chunk after a file's first holds before those it owns
    Acquire m_acquire;
    Emit m_emit;
    int64_t m_batchBytes = 64 << 20;
    int64_t m_segmentBytes = 256 << 10;
    int m_nextFileIndex = 0;
    int m_nextBatchIndex = 0;
    // The batch being planned: files, segments and problems, no buffer yet (it takes one when it is read).
    std::unique_ptr<FileBatch> m_plan;
    std::unique_ptr<Read> m_read; // the batch being read, on threads of its own
    const std::atomic_bool *m_cancelled;
    int m_readThreads = int(std::min(8u, std::max(1u, std::thread::hardware_concurrency())));
    int m_readNice = 0;
    int64_t m_pieceBytes = 8 << 20;
    bool m_ringReads = true;
    int m_endedEarly = -1; // index of the last file found shorter than planned
    bool m_ramp = false;
    int64_t m_bytesAfter = -1;
    int64_t m_unsizedAfter = 0;
    // Files of unknown size, held back to be opened as a group, in walk order.
    std::vector<FileEntry> m_unsized;
    int64_t m_sizedFiles = 0; // files sized by opening them, and their bytes: the mean stands for unsized ones
    int64_t m_sizedBytes = 0;
    int m_heldFds = 0;        // descriptors the plan holds
    int m_maxHeldFds = 0;     // at most; within RLIMIT_NOFILE, with the batch being read holding as many
    int64_t m_minBatchBytes = 0;
    std::function<Haystack(int64_t)> m_allocate = allocateHaystack;
    // Reads each batch (worker 0 of the read threads); made at the first read, again when the nice level changes.
    std::unique_ptr<JobThread> m_reader;
    int m_readerNice = 0; // the level m_reader was started at
};

} // namespace Hitscope
