// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "automata/lazydfa.h"

namespace Hitscope {

/**
 * The CPU engine's LazyDfa caches, one per worker thread and tableless group, kept from batch to batch: the
 * states a walk has made are what makes the next walk fast. A cache keeps its LazyDfa alive, and is made anew
 * when the group's LazyDfa changes (another catalog).
 */
class LazyCaches
{
public:
    /// Call before the threads start: thread indices below `threads` may then call get() at once.
    void reserveThreads(int threads)
    {
        if (m_threads.size() < size_t(threads))
            m_threads.resize(size_t(threads));
    }

    /// Thread `thread`'s cache of `group`, which only that thread may use.
    LazyDfa::Cache &get(int thread, size_t group, const std::shared_ptr<const LazyDfa> &dfa)
    {
        std::vector<Entry> *perGroup = &m_threads[size_t(thread)];
        if (perGroup->size() <= group)
            perGroup->resize(group + 1);
        Entry &e = (*perGroup)[group];
        if (e.dfa != dfa) {
            e.cache.reset();
            e.dfa = dfa;
            e.cache = std::make_unique<LazyDfa::Cache>(*dfa);
        }
        return *e.cache;
    }

private:
    struct Entry
    {
        std::shared_ptr<const LazyDfa> dfa;
        std::unique_ptr<LazyDfa::Cache> cache;
    };
    std::vector<std::vector<Entry>> m_threads;
};

} // namespace Hitscope
