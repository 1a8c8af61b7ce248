// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "scan/filewalker.h"

namespace Hitscope {

/**
 * Runs a FileWalker on a thread of its own, ahead of the thread that reads the files, and keeps what it found
 * in order. Walking (directory entries and sizes) is far faster than reading, so the walk usually ends long
 * before the reading does; from then on bytesAhead() is exact, and the batcher can make the last batches
 * small so that the scan does not end waiting for one large batch to go through the engine.
 */
class WalkAhead
{
public:
    /// One step of the walk: a file to read or a path skipped with a reason.
    struct Item
    {
        std::optional<FileEntry> file;
        FileProblem problem;
    };

    /// Starts walking at once. At most `maxAhead` items wait to be taken (about 100 bytes each, their paths
    /// besides); the walk pauses while that many do.
    WalkAhead(const QByteArrayList &roots, const WalkOptions &options, const std::atomic_bool *cancelled,
              size_t maxAhead = size_t(1) << 16);
    /// Stops the walk early if it still runs.
    ~WalkAhead();

    WalkAhead(const WalkAhead &) = delete;
    WalkAhead &operator=(const WalkAhead &) = delete;

    enum class Next { Item, Waiting, End };
    /// Takes the next item when there is one; waits at most `waitMs` for it (so that the caller can do other
    /// work while the walk is slow) and returns Waiting if none came.
    Next next(Item &item, int waitMs);

    /// Bytes of the files found but not yet taken; exact (every file still to come) once the walk has ended,
    /// otherwise -1. Files of unknown size (WalkOptions::statRegularFiles) are not in it: see unsizedAhead().
    int64_t bytesAhead() const;
    /// Files found but not yet taken whose size the walk did not learn; -1 until the walk has ended.
    int64_t unsizedAhead() const;

private:
    void push(Item &&item);
    // Adds (sign 1) or takes away (-1) an item's file from the counts; with the mutex held.
    void count(const Item &item, int sign);

    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<Item> m_items;
    int64_t m_bytes = 0;
    int64_t m_unsized = 0;
    bool m_ended = false;
    bool m_stop = false;
    size_t m_maxAhead;
    std::atomic_bool m_stopWalk { false };
    const std::atomic_bool *m_cancelled;
    std::thread m_thread;
};

} // namespace Hitscope
