// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <atomic>

#include <QByteArray>

#include "engine/fileentry.h"

namespace Hitscope {

/// A folder's entries, names sorted, each lstat()ed (regular files only if asked).
struct FolderListing
{
    struct Entry
    {
        explicit Entry(QByteArray n)
            : name(std::move(n))
        {
        }
        QByteArray name;
        struct stat st {};
        int error = 0; ///< errno of the lstat(), 0 when `st` holds it
        /// Whether `st` is the lstat(); if not, the entry is a regular file by its folder entry (d_type), of size
        /// FileEntry::kUnknownSize.
        bool statted = true;
    };
    std::vector<Entry> entries;
    int error = 0; ///< errno of opening or reading the folder (entries read until then are kept)
};

/**
 * Lists folders on worker threads ahead of a walk that takes them one by one in its own order. On the H200 the
 * scan's one-thread walk listed 57,168 files in 0.19-0.27 s, as long as reading and scanning their 4.14 GiB: a
 * walk's time is mostly the lstat() of each entry, which workers take off its thread. Workers list the
 * subfolders of every folder listed (not those whose name matches `exclude`, nor a folder already on its own
 * path: a bind mount loop), deepest first, at most `maxAhead` folders and `maxEntries` entries ahead of the
 * walk. A folder not listed yet when it is taken is listed on the caller's thread. Sizes are those of the
 * lstat(), taken ahead: a file that grows meanwhile is scanned as far as it was (one that shrinks, as far as
 * it goes: see Batcher).
 *
 * Threading: take() from one thread; workers are stopped and joined by the destructor.
 */
class FolderLister
{
public:
    /// Listing stops early once `cancelled` is true (a folder's listing then ends where it was). Workers run
    /// `nice` levels below the caller. With `statRegularFiles` off, entries the folder types as regular files
    /// are not lstat()ed (WalkOptions::statRegularFiles).
    FolderLister(int threads, std::vector<QByteArray> excludeGlobs, const std::atomic_bool *cancelled = nullptr,
                 int nice = 0, size_t maxAhead = 4096, size_t maxEntries = size_t(1) << 18,
                 bool statRegularFiles = true);
    ~FolderLister();

    FolderLister(const FolderLister &) = delete;
    FolderLister &operator=(const FolderLister &) = delete;

    /// `path`'s listing (waited for when a worker is listing it). `id` is the folder's (device, inode) and
    /// `ancestors` those of the folders above it, for the loop test of the subfolders queued ahead.
    FolderListing take(const QByteArray &path, std::pair<dev_t, ino_t> id,
                       const std::vector<std::pair<dev_t, ino_t>> &ancestors);
    /// Lists `path` on the calling thread; stops early once `cancelled` is true.
    static FolderListing list(const QByteArray &path, const std::atomic_bool *cancelled = nullptr,
                              bool statRegularFiles = true);

private:
    using FolderId = std::pair<dev_t, ino_t>;
    struct Pending
    {
        QByteArray path;
        std::vector<FolderId> chain; // the folder's own id last
        uint64_t ticket;             // the slot's it was queued for (the same path may be queued again)
    };
    struct Slot
    {
        uint64_t ticket = 0;
        bool started = false;
        bool done = false;
        FolderListing listing;
    };

    void work();
    // Queues the subfolders of a listed folder, first one on top. Called with the mutex held.
    void queueChildren(const QByteArray &path, const FolderListing &listing, const std::vector<FolderId> &chain);

    bool stopped() const;

    std::vector<QByteArray> m_exclude;
    const std::atomic_bool *m_cancelled;
    bool m_statRegularFiles;
    size_t m_maxAhead;
    size_t m_maxEntries;
    std::mutex m_mutex;
    std::condition_variable m_workAvailable;
    std::condition_variable m_listed;
    std::deque<Pending> m_stack;        // back = next to list
    std::map<QByteArray, Slot> m_slots; // queued, being listed or listed, not taken yet
    size_t m_ahead = 0;                 // listed or being listed, not taken yet
    size_t m_aheadEntries = 0;          // their entries
    uint64_t m_nextTicket = 1;
    bool m_stop = false;
    std::vector<std::thread> m_workers;
};

} // namespace Hitscope
