// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace Hitscope {

/**
 * Threads kept for one calling thread's parallel loops. A scan's stages call a parallel loop several times per
 * batch, and starting and joining 15 threads for each call took 0.5 ms on a 2-core machine: hundreds of calls a
 * scan, on the threads that hold the pipeline up. The workers sleep between calls.
 *
 * Each calling thread has its own pool (forThisThread()): its workers are started from it and so share its nice
 * level (lowerThreadPriority), and a loop run inside a worker uses the worker's own pool, never the one it runs in.
 */
class WorkerPool
{
public:
    WorkerPool() = default;
    ~WorkerPool();
    WorkerPool(const WorkerPool &) = delete;
    WorkerPool &operator=(const WorkerPool &) = delete;

    /// The calling thread's pool, made on first use and ended with the thread.
    static WorkerPool &forThisThread();

    /// Runs fn(worker) for worker 0..threads-1, worker 0 on the calling thread, and waits for all of them.
    template<typename F>
    void run(int threads, F &&fn)
    {
        if (threads <= 1) {
            fn(0);
            return;
        }
        using Fn = std::remove_reference_t<F>;
        dispatch(threads, { const_cast<void *>(static_cast<const void *>(&fn)),
                            [](void *f, int worker) { (*static_cast<Fn *>(f))(worker); } });
    }

    /// Workers started so far (for tests).
    int workers() const;

private:
    struct Job
    {
        void *fn = nullptr;
        void (*call)(void *, int) = nullptr;
    };
    void dispatch(int threads, Job job);
    void loop(int index);

    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_done;
    std::vector<std::thread> m_threads; // worker k + 1 is m_threads[k]
    Job m_job;
    uint64_t m_generation = 0;
    int m_wanted = 0;    // workers 1..m_wanted-1 take part in the current job
    int m_remaining = 0; // of those, the ones not yet done
    bool m_busy = false; // a job runs: a loop started from inside it gets threads of its own
    bool m_stop = false;
};

} // namespace Hitscope
