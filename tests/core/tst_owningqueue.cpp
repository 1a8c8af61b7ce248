// SPDX-License-Identifier: GPL-3.0-or-later
// The queue the Scanner's stages hand batches over with: order kept, a waiting pop woken by a push from another
// thread, and null once closed and drained (how each stage learns that the one before it is done).
#include <thread>

#include <QTest>

#include "util/owningqueue.h"

using namespace Hitscope;

class TestOwningQueue : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void firstInFirstOutThenNullOnceClosed()
    {
        OwningQueue<int> q;
        QVERIFY(!q.tryPop());
        for (int i = 0; i < 3; ++i)
            q.push(std::make_unique<int>(i));
        QCOMPARE(*q.tryPop(), 0);
        q.close();
        // Closing does not drop what is queued.
        QCOMPARE(*q.pop(), 1);
        QCOMPARE(*q.pop(), 2);
        QVERIFY(!q.pop());
        QVERIFY(!q.pop());
    }

    void popWaitsForAnotherThread()
    {
        OwningQueue<int> q;
        std::thread producer([&] {
            for (int i = 0; i < 1000; ++i)
                q.push(std::make_unique<int>(i));
            q.close();
        });
        int expected = 0;
        while (std::unique_ptr<int> v = q.pop())
            QCOMPARE(*v, expected++);
        producer.join();
        QCOMPARE(expected, 1000);
    }
};

QTEST_GUILESS_MAIN(TestOwningQueue)
#include "tst_owningqueue.moc"
