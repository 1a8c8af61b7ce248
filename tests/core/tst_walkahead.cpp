// SPDX-License-Identifier: GPL-3.0-or-later
#include <thread>

#include <QDeadlineTimer>
#include <QDir>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "scan/walkahead.h"
#include "testutil.h"

using namespace Hitscope;

namespace {
struct Walked
{
    QByteArrayList paths;
    int64_t bytes = 0;
};
} // namespace

/// WalkAhead hands the walk's items over between two threads and wakes either side only when it may be waiting
/// (the taker on an empty queue, the walker on a full one). Whatever the queue's size and whichever side is
/// slower, every item must arrive, in the walk's order, and the walk must stop when told.
class TestWalkAhead : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    Walked m_expected;

    // Takes every item; the taker pauses now and then when `slowTaker`, so that the queue fills up.
    Walked take(size_t maxAhead, bool slowTaker)
    {
        Walked got;
        WalkAhead walk({ QFile::encodeName(m_tmp.path()) }, WalkOptions {}, nullptr, maxAhead);
        WalkAhead::Item item;
        // A walker that is never woken again shows as a taker that waits for ever: a failure, not a hang.
        const QDeadlineTimer deadline(30000);
        for (int n = 0;; ++n) {
            const WalkAhead::Next next = walk.next(item, 2);
            if (next == WalkAhead::Next::End)
                break;
            if (next == WalkAhead::Next::Waiting) {
                if (deadline.hasExpired())
                    return got;
                continue;
            }
            if (item.file) {
                got.paths << item.file->path;
                got.bytes += item.file->size;
            }
            if (slowTaker && n % 97 == 0)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        // Once the walk has ended, what is ahead is exact: nothing is left.
        if (walk.bytesAhead() != 0)
            got.bytes = -1;
        return got;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        QRandomGenerator rng(11);
        for (int d = 0; d < 12; ++d)
            for (int f = 0; f < 60; ++f)
                QVERIFY(TestUtil::writeFile(m_tmp.filePath(QStringLiteral("d%1/sub%2/f%3").arg(d).arg(f % 3).arg(f)),
                                            QByteArray(int(rng.bounded(200)), 'x')));
        FileWalker(WalkOptions {}).walk(
            { QFile::encodeName(m_tmp.path()) },
            [&](const FileEntry &e) {
                m_expected.paths << e.path;
                m_expected.bytes += e.size;
            },
            [](const FileProblem &) {});
        QCOMPARE(m_expected.paths.size(), 720);
    }

    void everyItemInOrder_data()
    {
        QTest::addColumn<qulonglong>("maxAhead");
        QTest::addColumn<bool>("slowTaker");
        for (qulonglong maxAhead : { 1ull, 2ull, 3ull, 64ull, 65536ull }) {
            QTest::addRow("queue of %llu, fast taker", maxAhead) << maxAhead << false;
            QTest::addRow("queue of %llu, slow taker", maxAhead) << maxAhead << true;
        }
    }

    void everyItemInOrder()
    {
        QFETCH(qulonglong, maxAhead);
        QFETCH(bool, slowTaker);
        const Walked got = take(size_t(maxAhead), slowTaker);
        QCOMPARE(got.paths, m_expected.paths);
        QCOMPARE(got.bytes, m_expected.bytes);
    }

    void stopsWhenDestroyedWithAFullQueue()
    {
        // The walker waits on a full queue of one; going away must wake it and end its thread.
        for (int round = 0; round < 20; ++round) {
            WalkAhead walk({ QFile::encodeName(m_tmp.path()) }, WalkOptions {}, nullptr, 1);
            WalkAhead::Item item;
            for (int k = 0; k < round; ++k)
                QVERIFY(walk.next(item, 1000) == WalkAhead::Next::Item);
        }
    }

    void stopsWhenCancelled()
    {
        std::atomic_bool cancelled { false };
        WalkAhead walk({ QFile::encodeName(m_tmp.path()) }, WalkOptions {}, &cancelled, 4);
        WalkAhead::Item item;
        QVERIFY(walk.next(item, 1000) == WalkAhead::Next::Item);
        cancelled = true;
        // The walk stops at its next entry: the items already queued, and at most the one it was pushing.
        int more = 0;
        for (;;) {
            const WalkAhead::Next next = walk.next(item, 1000);
            if (next == WalkAhead::Next::End)
                break;
            QVERIFY(next == WalkAhead::Next::Item);
            ++more;
        }
        QVERIFY2(more <= 6, qPrintable(QString::number(more)));
    }
};

QTEST_GUILESS_MAIN(TestWalkAhead)
#include "tst_walkahead.moc"
