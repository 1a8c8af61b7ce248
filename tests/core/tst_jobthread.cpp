// SPDX-License-Identifier: GPL-3.0-or-later
// The thread the batcher reads each batch on: jobs run one at a time, in the order posted, all on one thread kept
// from job to job; wait() returns only once they have run; the destructor runs what is still queued; the thread
// and the loops it starts run at the nice level asked for.
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include <QTest>

#include "util/jobthread.h"
#include "util/parallel.h"

using namespace Hitscope;

class TestJobThread : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void jobsRunInOrderOnOneKeptThread()
    {
        JobThread thread;
        std::vector<int> order;
        std::set<std::thread::id> ids;
        std::atomic<int> running { 0 };
        bool overlapped = false;
        for (int round = 0; round < 50; ++round) {
            for (int k = 0; k < 20; ++k)
                thread.post([&, k, round] {
                    overlapped |= running.fetch_add(1) != 0;
                    // Long enough for a second thread, if there were one, to start the next job meanwhile.
                    if (k % 7 == 0)
                        std::this_thread::sleep_for(std::chrono::microseconds(50));
                    order.push_back(round * 20 + k);
                    ids.insert(std::this_thread::get_id());
                    running.fetch_sub(1);
                });
            thread.wait();
            // Everything posted has run once wait() returns.
            QCOMPARE(int(order.size()), (round + 1) * 20);
        }
        QVERIFY(!overlapped);
        for (size_t i = 0; i < order.size(); ++i)
            QCOMPARE(order[i], int(i));
        QCOMPARE(int(ids.size()), 1);
        QVERIFY(*ids.begin() != std::this_thread::get_id());
    }

    void waitWithNothingPostedReturns()
    {
        JobThread thread;
        thread.wait();
        thread.wait();
        // And the thread still takes jobs afterwards.
        bool ran = false;
        thread.post([&] { ran = true; });
        thread.wait();
        QVERIFY(ran);
    }

    void destructorRunsWhatIsQueued()
    {
        std::atomic<int> ran { 0 };
        {
            JobThread thread;
            thread.post([] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
            for (int k = 0; k < 10; ++k)
                thread.post([&] { ran++; });
        }
        QCOMPARE(ran.load(), 10);
    }

    void runsAtTheNiceLevelAskedFor()
    {
        const int here = getpriority(PRIO_PROCESS, id_t(gettid()));
        if (here > 19 - 3)
            QSKIP("this test already runs at the lowest priority");
        JobThread thread(3);
        int level = 0;
        std::vector<int> workerLevels(4, 0);
        thread.post([&] {
            level = getpriority(PRIO_PROCESS, id_t(gettid()));
            // The read threads are the job thread's own pool: started from it, they share its level.
            runWorkers(4, [&](int w) { workerLevels[size_t(w)] = getpriority(PRIO_PROCESS, id_t(gettid())); });
        });
        thread.wait();
        QCOMPARE(level, here + 3);
        for (int l : workerLevels)
            QCOMPARE(l, here + 3);
        // The constructing thread keeps its own.
        QCOMPARE(getpriority(PRIO_PROCESS, id_t(gettid())), here);
    }
};

QTEST_GUILESS_MAIN(TestJobThread)
#include "tst_jobthread.moc"
