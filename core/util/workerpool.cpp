// SPDX-License-Identifier: GPL-3.0-or-later
#include "workerpool.h"

#include <exception>
#include <string>

#include "util/threadname.h"

namespace Hitscope {

WorkerPool::~WorkerPool()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        ++m_generation;
    }
    m_wake.notify_all();
    for (std::thread &t : m_threads)
        t.join();
}

WorkerPool &WorkerPool::forThisThread()
{
    thread_local WorkerPool pool;
    return pool;
}

int WorkerPool::workers() const
{
    std::lock_guard lock(m_mutex);
    return int(m_threads.size());
}

void WorkerPool::dispatch(int threads, Job job)
{
    std::unique_lock lock(m_mutex);
    if (m_busy) {
        // Called from inside this pool's own job, on the calling thread: its workers are taken.
        lock.unlock();
        std::vector<std::thread> extra;
        for (int t = 1; t < threads; ++t)
            extra.emplace_back([job, t] { job.call(job.fn, t); });
        job.call(job.fn, 0);
        for (std::thread &t : extra)
            t.join();
        return;
    }
    // Started from the calling thread, so that they share its nice level.
    if (int(m_threads.size()) < threads - 1) {
        const std::string owner = thisThreadName();
        while (int(m_threads.size()) < threads - 1) {
            const int index = int(m_threads.size()) + 1;
            m_threads.emplace_back([this, index, owner] {
                std::string suffix = "/";
                suffix.append(std::to_string(index));
                nameThisThreadAfter(owner, suffix);
                loop(index);
            });
        }
    }
    m_busy = true;
    m_job = job;
    m_wanted = threads;
    m_remaining = threads - 1;
    ++m_generation;
    lock.unlock();
    m_wake.notify_all();
    // The workers run a job on this thread's stack: it is not left before they are done, not even by a throw.
    std::exception_ptr thrown;
    try {
        job.call(job.fn, 0);
    } catch (...) {
        thrown = std::current_exception();
    }
    lock.lock();
    m_done.wait(lock, [&] { return m_remaining == 0; });
    m_busy = false;
    lock.unlock();
    if (thrown)
        std::rethrow_exception(thrown);
}

void WorkerPool::loop(int index)
{
    uint64_t seen = 0;
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [&] { return m_generation != seen; });
        seen = m_generation;
        if (m_stop)
            return;
        if (index >= m_wanted)
            continue;
        const Job job = m_job;
        lock.unlock();
        job.call(job.fn, index);
        lock.lock();
        if (--m_remaining == 0)
            m_done.notify_one();
    }
}

} // namespace Hitscope
