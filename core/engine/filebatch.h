// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <QByteArray>

#include "engine/fileentry.h"

namespace Hitscope {

/**
 * One file's bytes inside a batch: the whole file, or a chunk of a file too large for one batch.
 * A chunk owns the match *ends* in [ownBegin, ownEnd) (file offsets); it also holds the bytes before it
 * that a match ending inside may start at (the overlap, plus one byte of context for \b) and one byte
 * after it (a trailing \b is decided by the next byte).
 */
struct BatchFile
{
    int fileIndex = -1;     ///< index of the file in the scan, in walk order
    QByteArray path;
    int64_t fileSize = 0;
    int64_t holdBegin = 0;  ///< file offset of the first byte held in the haystack
    int64_t holdEnd = 0;
    int64_t dataOffset = 0; ///< haystack offset of holdBegin
    int64_t ownBegin = 0;
    int64_t ownEnd = 0;
    bool firstChunk = true;
    bool lastChunk = true;
    bool failed = false;    ///< could not be opened: not scanned, reported as a problem
    bool viaLink = false;   ///< FileEntry::viaLink: opened through the link
    /// Open already (the batcher opened it to learn its size), for the read to use and close; -1: opened by path.
    int fd = -1;

    const uint8_t *at(const uint8_t *haystack, int64_t fileOffset) const
    {
        return haystack + dataOffset + (fileOffset - holdBegin);
    }
};

/// Frees a haystack made by allocateHaystack().
struct HaystackFree
{
    size_t bytes = 0;
    /// When set, takes the memory instead of unmapping it (an engine that registered it with a device keeps it
    /// for the next buffer, or lets go of it and unmaps it).
    std::function<void(uint8_t *, size_t)> release;
    void operator()(uint8_t *p) const;
};
using Haystack = std::unique_ptr<uint8_t[], HaystackFree>;

/// Memory for a batch's bytes: anonymous pages with transparent huge pages asked for, so that filling a new
/// batch of a GiB takes a few hundred page faults rather than a quarter of a million.
Haystack allocateHaystack(int64_t bytes);

/// A work item of the bounded groups: a piece of one chunk, scanned from scanBegin (the overlap before
/// ownBegin) to scanEnd (one byte past ownEnd, when the file has it). Offsets are file offsets.
struct Segment
{
    uint32_t batchFile = 0;
    int64_t scanBegin = 0;
    int64_t scanEnd = 0;
    int64_t ownBegin = 0;
    int64_t ownEnd = 0;
};

/// What one launch scans: files packed back to back, their chunks, and the bounded groups' segments.
struct FileBatch
{
    int index = 0;
    Haystack haystack;
    int64_t capacity = 0;
    int64_t used = 0;
    int64_t ownedBytes = 0; ///< bytes of files this batch is responsible for (no overlaps)
    int overlap = 0;        ///< bytes before ownBegin a bounded match may start at (max length - 1)
    double bufferWaitMs = 0; ///< time the reader waited for a free buffer for it (the stages behind were busy)
    /// When the read threads started and ended (equal for a batch with nothing to read).
    std::chrono::steady_clock::time_point readBegan, readEnded;
    /// For HITSCOPE_PIPELINE_TRACE: when its plan was complete (the walk had listed its files), and when it was
    /// queued for the engine.
    std::chrono::steady_clock::time_point planned, queued;
    double readMs() const { return std::chrono::duration<double, std::milli>(readEnded - readBegan).count(); }
    std::vector<BatchFile> files;
    std::vector<Segment> segments;
    std::vector<FileProblem> problems; ///< found while walking or reading, reported in order
    /// What the engine's prepareBatch() computed from the batch beside the scan (empty if nothing).
    std::vector<uint32_t> prepared;

    void clear()
    {
        used = 0;
        ownedBytes = 0;
        files.clear();
        segments.clear();
        problems.clear();
        prepared.clear();
    }
};

} // namespace Hitscope
