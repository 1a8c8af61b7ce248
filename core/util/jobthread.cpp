// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobthread.h"

#include "util/parallel.h"
#include "util/threadname.h"

namespace Hitscope {

JobThread::JobThread(int niceSteps, const char *name)
    : m_thread([this, niceSteps, name = std::string(name)] { loop(niceSteps, name); })
{
}

JobThread::~JobThread()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_one();
    m_thread.join();
}

void JobThread::post(std::function<void()> job)
{
    {
        std::lock_guard lock(m_mutex);
        m_jobs.push_back(std::move(job));
    }
    m_wake.notify_one();
}

void JobThread::wait()
{
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [&] { return m_jobs.empty() && !m_running; });
}

void JobThread::loop(int niceSteps, const std::string &name)
{
    nameThisThread(name);
    lowerThreadPriority(niceSteps);
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [&] { return m_stop || !m_jobs.empty(); });
        if (m_jobs.empty()) // stopping, with nothing left to run
            return;
        std::function<void()> job = std::move(m_jobs.front());
        m_jobs.pop_front();
        m_running = true;
        lock.unlock();
        job();
        lock.lock();
        m_running = false;
        if (m_jobs.empty())
            m_idle.notify_all();
    }
}

} // namespace Hitscope
