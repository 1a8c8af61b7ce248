// SPDX-License-Identifier: GPL-3.0-or-later
// The worker pool behind every parallel loop: each worker index runs once per call, the threads are kept between
// calls, a loop inside a loop still runs all of its workers, and workers keep the nice level of the thread that
// started them (the read threads rely on it).
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <set>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include <QTest>
#include <QThread>

#include "util/parallel.h"
#include "util/workerpool.h"

using namespace Hitscope;

class TestWorkerPool : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyWorkerRunsOncePerCall()
    {
        WorkerPool pool;
        for (int round = 0; round < 200; ++round) {
            const int threads = 1 + round % 9;
            std::vector<std::atomic<int>> ran(static_cast<size_t>(threads));
            std::mutex mutex;
            std::set<std::thread::id> ids;
            pool.run(threads, [&](int worker) {
                ran[size_t(worker)]++;
                std::lock_guard lock(mutex);
                ids.insert(std::this_thread::get_id());
            });
            for (int w = 0; w < threads; ++w)
                QCOMPARE(ran[size_t(w)].load(), 1);
            // Worker 0 is the calling thread; the others are threads of their own.
            QCOMPARE(int(ids.size()), threads);
            QVERIFY(ids.count(std::this_thread::get_id()) == 1);
        }
        // Kept between calls: never more than the largest call needed besides the calling thread.
        QCOMPARE(pool.workers(), 8);
    }

    void parallelForCoversEveryIndexOnce()
    {
        std::vector<std::atomic<int>> seen(10000);
        std::atomic<int> badWorker { 0 };
        parallelFor(seen.size(), 6, [&](size_t i, int worker) {
            seen[i]++;
            if (worker < 0 || worker >= 6)
                ++badWorker;
        });
        for (const auto &s : seen)
            QCOMPARE(s.load(), 1);
        QCOMPARE(badWorker.load(), 0);
    }

    void loopsInsideLoopsRunAllTheirWorkers()
    {
        // From the calling thread (whose pool is busy) and from the workers (which have pools of their own).
        std::atomic<int> inner { 0 };
        runWorkers(4, [&](int) { runWorkers(3, [&](int) { ++inner; }); });
        QCOMPARE(inner.load(), 12);
        std::atomic<int> again { 0 };
        parallelFor(100, 4, [&](size_t, int) { parallelFor(5, 2, [&](size_t, int) { ++again; }); });
        QCOMPARE(again.load(), 500);
    }

    void aThrowOnTheCallingThreadWaitsForTheWorkers()
    {
        // The workers run a job on the caller's stack: a throw from worker 0 leaves only once they are done, and
        // the pool takes the next call.
        WorkerPool pool;
        std::atomic<int> finished { 0 };
        bool caught = false;
        try {
            pool.run(4, [&](int worker) {
                if (worker == 0)
                    throw std::runtime_error("worker 0");
                QThread::msleep(50);
                ++finished;
            });
        } catch (const std::runtime_error &) {
            caught = true;
        }
        QVERIFY(caught);
        QCOMPARE(finished.load(), 3);
        std::atomic<int> ran { 0 };
        pool.run(4, [&](int) { ++ran; });
        QCOMPARE(ran.load(), 4);
    }

    void workersKeepTheNiceLevelOfTheThreadThatStartedThem()
    {
        int caller = 0;
        std::vector<int> levels(4, -100);
        std::thread t([&] {
            lowerThreadPriority(3);
            caller = getpriority(PRIO_PROCESS, id_t(gettid()));
            WorkerPool pool;
            pool.run(4, [&](int worker) { levels[size_t(worker)] = getpriority(PRIO_PROCESS, id_t(gettid())); });
        });
        t.join();
        QVERIFY(caller > 0 || caller == 19);
        for (int level : levels)
            QCOMPARE(level, caller);
    }
};

QTEST_GUILESS_MAIN(TestWorkerPool)
#include "tst_workerpool.moc"
