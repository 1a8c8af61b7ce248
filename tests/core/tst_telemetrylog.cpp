// SPDX-License-Identifier: GPL-3.0-or-later
// The GUI's one store of a scan's batch telemetry: every batch kept in arrival order, found by its index, and
// each change announced, so that the charts (and the export) show exactly what the scan reported.
#include <QSignalSpy>
#include <QTest>

#include "report/telemetrylog.h"

using namespace Hitscope;

class TestTelemetryLog : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void keepsBatchesAndFindsThemByIndex()
    {
        TelemetryLog log;
        QSignalSpy added(&log, &TelemetryLog::batchAdded);
        // Batches arrive in the order they finish, which need not be their index order.
        for (int index : { 1, 0, 2 }) {
            BatchTelemetry t;
            t.index = index;
            t.hits = 10 * index;
            log.append(t);
        }
        QCOMPARE(added.count(), 3);
        QCOMPARE(added.at(0).at(0).value<BatchTelemetry>().index, 1);
        QCOMPARE(log.batches().size(), 3);
        QCOMPARE(log.batches().at(1).index, 0);
        QVERIFY(log.find(2));
        QCOMPARE(log.find(2)->hits, 20);
        QCOMPARE(log.find(0)->hits, 0);
        QVERIFY(!log.find(3));
    }

    void clearForgetsTheScanAndSaysSo()
    {
        TelemetryLog log;
        BatchTelemetry t;
        t.index = 4;
        log.append(t);
        QSignalSpy cleared(&log, &TelemetryLog::cleared);
        log.clear();
        QCOMPARE(cleared.count(), 1);
        QVERIFY(log.batches().isEmpty());
        QVERIFY(!log.find(4));
        // A new scan numbers its batches from 0 again.
        t.index = 0;
        log.append(t);
        QCOMPARE(log.batches().size(), 1);
        QVERIFY(log.find(0));
    }
};

QTEST_GUILESS_MAIN(TestTelemetryLog)
#include "tst_telemetrylog.moc"
