// SPDX-License-Identifier: GPL-3.0-or-later
// The parameter sweep: a 2x2 grid on the CPU engine measures every cell, and "Use best" hands back its params.
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "sweepdialog.h"
#include "testutil.h"

using namespace Hitscope;

class TestSweepDialog : public QObject
{
    Q_OBJECT
public:
    // Forced platform and dpi: GUI tests must not depend on the desktop they run on.
    static void initMain()
    {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        qputenv("QT_FONT_DPI", "96");
    }

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void sweepsGridAndUsesBest()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString rules = dir.filePath(QStringLiteral("rules.txt"));
        QVERIFY(TestUtil::writeFile(rules, "-\tneedle\tneedle\n"));
        for (int i = 0; i < 4; ++i) {
            QByteArray content(256 * 1024, 'x');
            for (int j = 0; j < content.size(); ++j)
                content[j] = char('a' + (j * 7 + i) % 26);
            content.replace(1000 * (i + 1), 6, "needle");
            QVERIFY(TestUtil::writeFile(dir.filePath(QStringLiteral("corpus/f%1.bin").arg(i)), content));
        }

        LaunchParams base;
        base.threads = 2;
        SweepDialog dialog({ rules }, { QFile::encodeName(dir.filePath(QStringLiteral("corpus"))) },
                           EngineChoice::Cpu, base);
        dialog.setAxes(SweepDialog::Axis::SegmentBytes, SweepDialog::Axis::BatchBytes, { 4 << 10, 64 << 10 },
                       { 1 << 20, 4 << 20 });
        dialog.setSampleMiB(1);
        dialog.show();
        QVERIFY(!dialog.useBestButton()->isEnabled());

        QSignalSpy finished(&dialog, &SweepDialog::sweepFinished);
        QSignalSpy failed(&dialog, &SweepDialog::sweepFailed);
        QSignalSpy chosen(&dialog, &SweepDialog::paramsChosen);
        QVERIFY(dialog.onStart());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, 120000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QVERIFY(!dialog.isRunning());

        QCOMPARE(dialog.columns(), 2);
        QCOMPARE(dialog.rows(), 2);
        int bestColumn = -1;
        int bestRow = -1;
        double best = 0;
        for (int row = 0; row < 2; ++row) {
            for (int column = 0; column < 2; ++column) {
                const double t = dialog.throughput(column, row);
                QVERIFY2(t > 0, qPrintable(dialog.cellToolTip(column, row)));
                QVERIFY(dialog.cellToolTip(column, row).contains(QStringLiteral("/s")));
                if (t > best) {
                    best = t;
                    bestColumn = column;
                    bestRow = row;
                }
            }
        }

        QVERIFY(dialog.useBestButton()->isEnabled());
        QTest::mouseClick(dialog.useBestButton(), Qt::LeftButton);
        QCOMPARE(chosen.count(), 1);
        const auto params = chosen.first().first().value<LaunchParams>();
        LaunchParams expected = base;
        expected.segmentBytes = bestColumn == 0 ? 4 << 10 : 64 << 10;
        expected.batchBytes = bestRow == 0 ? 1 << 20 : 4 << 20;
        QCOMPARE(params, expected);
        QVERIFY(dialog.cellToolTip(bestColumn, bestRow).contains(QStringLiteral("fastest")));
    }
};

QTEST_MAIN(TestSweepDialog)
#include "tst_sweepdialog.moc"
