// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

namespace Hitscope {

/// A blocking queue of owned objects between threads: push() hands one over, pop() waits for one (null once
/// closed and drained). The Scanner's batches travel reader -> scanning thread -> resolver through such queues and
/// come back through one of empty batches, so at most a few haystacks exist at once and none is page-faulted in
/// anew.
template<typename T>
class OwningQueue
{
public:
    void push(std::unique_ptr<T> b)
    {
        std::lock_guard lock(m_mutex);
        m_items.push_back(std::move(b));
        m_cv.notify_all();
    }
    // Returns null once closed and drained.
    std::unique_ptr<T> pop()
    {
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [&] { return !m_items.empty() || m_closed; });
        if (m_items.empty())
            return nullptr;
        auto b = std::move(m_items.front());
        m_items.pop_front();
        return b;
    }
    // Null when nothing is queued now.
    std::unique_ptr<T> tryPop()
    {
        std::lock_guard lock(m_mutex);
        if (m_items.empty())
            return nullptr;
        auto b = std::move(m_items.front());
        m_items.pop_front();
        return b;
    }
    void close()
    {
        std::lock_guard lock(m_mutex);
        m_closed = true;
        m_cv.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<std::unique_ptr<T>> m_items;
    bool m_closed = false;
};

} // namespace Hitscope
