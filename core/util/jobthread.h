// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace Hitscope {

/**
 * One thread kept for jobs run one after another, in the order they are posted. The batcher reads each batch
 * on such a thread: one started per batch cost a thread, its io_uring ring and the ring's kernel workers every
 * batch, and small batches made that a cost per few megabytes.
 */
class JobThread
{
public:
    /// The thread runs `niceSteps` nice levels below the constructing thread (lowerThreadPriority); so do the
    /// threads it starts. `name`: the thread's (nameThisThread()).
    explicit JobThread(int niceSteps = 0, const char *name = "hs-jobs");
    /// Runs the jobs posted so far, then ends the thread.
    ~JobThread();
    JobThread(const JobThread &) = delete;
    JobThread &operator=(const JobThread &) = delete;

    /// Queues `job`; it runs after those posted before it. A job must not throw.
    void post(std::function<void()> job);
    /// Returns once every job posted so far has run.
    void wait();

private:
    void loop(int niceSteps, const std::string &name);

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_idle;
    std::deque<std::function<void()>> m_jobs;
    bool m_running = false; // a job taken from m_jobs has not returned yet
    bool m_stop = false;
    std::thread m_thread; // last: started once the members it uses exist
};

} // namespace Hitscope
