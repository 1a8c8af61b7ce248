// SPDX-License-Identifier: GPL-3.0-or-later
#include "folderlister.h"

#include <algorithm>
#include <cerrno>

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include "util/parallel.h"
#include "util/threadname.h"

namespace Hitscope {

FolderLister::FolderLister(int threads, std::vector<QByteArray> excludeGlobs, const std::atomic_bool *cancelled,
                           int nice, size_t maxAhead, size_t maxEntries, bool statRegularFiles)
    : m_exclude(std::move(excludeGlobs))
    , m_cancelled(cancelled)
    , m_statRegularFiles(statRegularFiles)
    , m_maxAhead(std::max<size_t>(1, maxAhead))
    , m_maxEntries(std::max<size_t>(1, maxEntries))
{
    for (int i = 0; i < threads; ++i)
        m_workers.emplace_back([this, nice] {
            nameThisThread("hs-list");
            lowerThreadPriority(nice);
            work();
        });
}

FolderLister::~FolderLister()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_workAvailable.notify_all();
    for (std::thread &t : m_workers)
        t.join();
}

bool FolderLister::stopped() const
{
    return m_cancelled && m_cancelled->load(std::memory_order_relaxed);
}

FolderListing FolderLister::list(const QByteArray &path, const std::atomic_bool *cancelled, bool statRegularFiles)
{
    auto stop = [&] { return cancelled && cancelled->load(std::memory_order_relaxed); };
    FolderListing out;
    DIR *dir = ::opendir(path.constData());
    if (!dir) {
        out.error = errno;
        return out;
    }
    while (!stop()) {
        errno = 0;
        const dirent *entry = ::readdir(dir);
        if (!entry) {
            out.error = errno;
            break;
        }
        const char *n = entry->d_name;
        if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
            continue;
        FolderListing::Entry &e = out.entries.emplace_back(QByteArray(n));
        if (!statRegularFiles && entry->d_type == DT_REG) {
            e.st.st_mode = S_IFREG;
            e.st.st_size = FileEntry::kUnknownSize;
            e.statted = false;
        }
    }
    std::sort(out.entries.begin(), out.entries.end(),
              [](const FolderListing::Entry &a, const FolderListing::Entry &b) { return a.name < b.name; });
    // Relative to the open folder: the kernel does not look the whole path up again for every entry.
    const int fd = ::dirfd(dir);
    for (FolderListing::Entry &e : out.entries) {
        if (stop())
            break; // the walk stops too: what was not statted is not used
        if (e.statted && ::fstatat(fd, e.name.constData(), &e.st, AT_SYMLINK_NOFOLLOW) != 0)
            e.error = errno;
    }
    ::closedir(dir);
    return out;
}

void FolderLister::queueChildren(const QByteArray &path, const FolderListing &listing,
                                 const std::vector<FolderId> &chain)
{
    for (auto it = listing.entries.rbegin(); it != listing.entries.rend(); ++it) {
        if (it->error != 0 || !S_ISDIR(it->st.st_mode))
            continue;
        if (std::any_of(m_exclude.begin(), m_exclude.end(),
                        [&](const QByteArray &g) { return fnmatch(g.constData(), it->name.constData(), 0) == 0; }))
            continue;
        const FolderId id { it->st.st_dev, it->st.st_ino };
        if (std::find(chain.begin(), chain.end(), id) != chain.end())
            continue;
        QByteArray child = path;
        child += '/';
        child += it->name;
        const auto [slot, added] = m_slots.try_emplace(child);
        if (!added)
            continue;
        slot->second.ticket = m_nextTicket++;
        Pending p { std::move(child), chain, slot->second.ticket };
        p.chain.push_back(id);
        m_stack.push_back(std::move(p));
    }
}

void FolderLister::work()
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_workAvailable.wait(lock, [&] {
            return m_stop || (!m_stack.empty() && m_ahead < m_maxAhead && m_aheadEntries < m_maxEntries);
        });
        if (m_stop)
            return;
        Pending p = std::move(m_stack.back());
        m_stack.pop_back();
        const auto slot = m_slots.find(p.path);
        if (slot == m_slots.end() || slot->second.started || slot->second.ticket != p.ticket)
            continue; // taken by the walk meanwhile (and perhaps queued again since)
        slot->second.started = true;
        ++m_ahead;
        lock.unlock();
        FolderListing listing = list(p.path, m_cancelled, m_statRegularFiles);
        lock.lock();
        // The slot stays while it is being listed: take() waits for it rather than erasing it.
        Slot &s = slot->second;
        s.listing = std::move(listing);
        s.done = true;
        m_aheadEntries += s.listing.entries.size();
        if (stopped()) {
            m_listed.notify_all();
            continue;
        }
        queueChildren(p.path, s.listing, p.chain);
        m_listed.notify_all();
        if (!m_stack.empty())
            m_workAvailable.notify_all();
    }
}

FolderListing FolderLister::take(const QByteArray &path, FolderId id, const std::vector<FolderId> &ancestors)
{
    std::unique_lock lock(m_mutex);
    const auto it = m_slots.find(path);
    if (it != m_slots.end() && it->second.started) {
        m_listed.wait(lock, [&] { return it->second.done; });
        FolderListing listing = std::move(it->second.listing);
        m_slots.erase(it);
        --m_ahead;
        m_aheadEntries -= listing.entries.size();
        m_workAvailable.notify_all();
        return listing;
    }
    // Not started: listed here (a queued entry is skipped by the worker that pops it).
    if (it != m_slots.end())
        m_slots.erase(it);
    lock.unlock();
    FolderListing listing = list(path, m_cancelled, m_statRegularFiles);
    if (!m_workers.empty() && !stopped()) {
        std::vector<FolderId> chain = ancestors;
        chain.push_back(id);
        lock.lock();
        queueChildren(path, listing, chain);
        lock.unlock();
        m_workAvailable.notify_all();
    }
    return listing;
}

} // namespace Hitscope
