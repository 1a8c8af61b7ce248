// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "util/workerpool.h"

namespace Hitscope {

/// Runs fn(worker) for worker 0..threads-1, worker 0 on the calling thread, and waits for all of them; the
/// others on `pool` (default: the calling thread's).
template<typename F>
void runWorkers(int threads, F &&fn, WorkerPool &pool = WorkerPool::forThisThread())
{
    pool.run(threads, fn);
}

/// Runs fn(i, worker) for i in 0..count-1 on up to `threads` workers taking the next index as they finish;
/// `worker` (< threads) lets each keep buffers of its own.
template<typename F>
void parallelFor(size_t count, int threads, F &&fn, WorkerPool &pool = WorkerPool::forThisThread())
{
    const int n = int(std::min<size_t>(count, size_t(std::max(1, threads))));
    std::atomic<size_t> next { 0 };
    runWorkers(
        std::max(1, n),
        [&](int worker) {
            for (size_t i; (i = next.fetch_add(1)) < count;)
                fn(i, worker);
        },
        pool);
}

/// Runs fn(begin, end, slice) over [0, count) in contiguous slices of at least `minSlice`, one per worker and
/// `maxThreads` at most: for work whose outputs must stay in index order (slice k's before slice k+1's).
template<typename F>
void parallelSlices(size_t count, size_t minSlice, int maxThreads, F &&fn)
{
    const size_t threads = std::min<size_t>(size_t(std::max(1, maxThreads)),
                                            std::max<size_t>(1, count / std::max<size_t>(1, minSlice)));
    const size_t part = (count + threads - 1) / threads;
    runWorkers(int(threads), [&](int k) {
        const size_t begin = std::min(count, size_t(k) * part);
        fn(begin, std::min(count, begin + part), size_t(k));
    });
}

/// Lowers the calling thread's priority by `steps` nice levels (Linux, where nice values are per thread and the
/// threads it starts inherit its level); does nothing for 0.
inline void lowerThreadPriority(int steps)
{
#ifdef __linux__
    if (steps <= 0)
        return;
    const id_t self = id_t(gettid());
    const int now = getpriority(PRIO_PROCESS, self);
    setpriority(PRIO_PROCESS, self, std::min(19, now + steps));
#else
    (void)steps;
#endif
}

/// Threads the machine offers, at least one.
inline int hardwareThreads()
{
    return int(std::max(1u, std::thread::hardware_concurrency()));
}

} // namespace Hitscope
