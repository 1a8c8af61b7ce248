// SPDX-License-Identifier: GPL-3.0-or-later
// The profile view after a scan, as the GUI gets it: a ScanJob with profiling on (the CPU engine: Qt 6.4's
// offscreen platform has no Vulkan) gives its profile once, just before finished(); the view lists the slow rule
// first with its reasons in full in the tooltip, sorts by any column on the raw figures, and says nothing about
// the GPU. Without profiling no profile comes. The model passes QAbstractItemModelTester.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QLabel>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "profileview.h"
#include "report/ruleprofilemodel.h"
#include "session/scanjob.h"
#include "testutil.h"

using namespace Hitscope;

class TestProfileView : public QObject
{
    Q_OBJECT
public:
    static void initMain()
    {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        qputenv("QT_FONT_DPI", "96");
    }

private:
    QTemporaryDir m_tmp;
    QString m_rules;
    QString m_dir;

    // Runs a scan; `order` gets "profile" and "finished" as they come.
    RuleProfile scan(bool profiling, QStringList &order)
    {
        ScanJob job;
        job.setProfiling(profiling);
        RuleProfile profile;
        connect(&job, &ScanJob::profileReady, this, [&](const RuleProfile &p) {
            order << QStringLiteral("profile");
            profile = p;
        });
        connect(&job, &ScanJob::finished, this, [&] { order << QStringLiteral("finished"); });
        connect(&job, &ScanJob::failed, this, [&](const QString &why) { order << QStringLiteral("failed: ") + why; });
        LaunchParams params;
        params.threads = 2;
        job.start({ m_rules }, { QFile::encodeName(m_dir) }, {}, params, EngineChoice::Cpu);
        // The caller compares `order`: a scan that does not end in time leaves it short.
        if (!QTest::qWaitFor([&] { return !order.isEmpty() && !order.back().startsWith(QLatin1String("profile")); },
                             120000))
            order << QStringLiteral("timed out");
        return profile;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_dir = m_tmp.path() + QLatin1String("/files");
        QByteArray big(2 << 20, 'a');
        for (qsizetype i = 0; i < big.size(); ++i)
            big[i] = i % 11 == 3 ? 'x' : "abcdefghijklmnopqrstuvwyz \n"[(i * 7919) % 27];
        QVERIFY(TestUtil::writeFile(m_dir + QLatin1String("/big.txt"), big));
        QVERIFY(TestUtil::writeFile(m_dir + QLatin1String("/a.txt"), "a Distinctive-Marker-0042 b"));
        m_rules = m_tmp.path() + QLatin1String("/rules.yar");
        QVERIFY(TestUtil::writeFile(m_rules, "rule cheap { strings: $c = \"Distinctive-Marker-0042\" condition: $c }\n"
                                             "rule slow_byte { strings: $a = { 78 } condition: $a }\n"
                                             "rule quiet { strings: $q = \"Never-Anywhere-Marker-31\" condition: $q }\n"));
    }

    void profileComesBeforeFinished()
    {
        QStringList order;
        const RuleProfile profile = scan(true, order);
        QCOMPARE(order, QStringList({ QStringLiteral("profile"), QStringLiteral("finished") }));
        QCOMPARE(profile.rows.size(), size_t(3));
        QVERIFY(profile.engineSplit);

        order.clear();
        scan(false, order);
        QCOMPARE(order, QStringList({ QStringLiteral("finished") }));
    }

    void viewListsTheSlowestFirst()
    {
        QStringList order;
        const RuleProfile profile = scan(true, order);
        ProfileView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.resize(900, 300);
        view.show();
        view.setProfile(profile);
        QTableView *table = view.table();
        QAbstractItemModel *shown = table->model();
        QCOMPARE(shown->rowCount(), 3);
        QCOMPARE(shown->index(0, RuleProfileModel::RuleColumn).data().toString(), QStringLiteral("slow_byte"));
        QCOMPARE(shown->index(0, RuleProfileModel::RankColumn).data().toString(), QStringLiteral("1"));
        QCOMPARE(shown->index(0, RuleProfileModel::LocationColumn).data().toString(), m_rules + QStringLiteral(":2"));
        const QString tip = shown->index(0, RuleProfileModel::ReasonsColumn).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QLatin1String("its atom is 1 byte (\"x\")")) && tip.contains(QLatin1String("many matches")),
                 qPrintable(tip));
        QCOMPARE(tip.count(QLatin1Char('\n')), profile.rows.front().reasons.size() - 1); // a line each
        QVERIFY(shown->index(0, RuleProfileModel::EngineColumn).data().toString() != QLatin1String("-"));
        QVERIFY(!view.findChild<QLabel *>(QStringLiteral("profileNote"))->isVisible());

        // By hits, fewest first: the raw numbers, not their text ("190,650" sorts before "2").
        table->sortByColumn(RuleProfileModel::HitsColumn, Qt::AscendingOrder);
        QCOMPARE(shown->index(0, RuleProfileModel::RuleColumn).data().toString(), QStringLiteral("quiet"));
        QCOMPARE(shown->index(2, RuleProfileModel::RuleColumn).data().toString(), QStringLiteral("slow_byte"));
        QCOMPARE(shown->index(2, RuleProfileModel::HitsColumn).data(RuleProfileModel::SortRole).toLongLong(),
                 qint64(profile.rows.front().hits));

        // A GPU scan's profile: no engine time per rule, and the view says why.
        RuleProfile gpu = profile;
        gpu.engineSplit = false;
        for (RuleProfileRow &row : gpu.rows)
            row.engineMs.reset();
        view.setProfile(gpu);
        QVERIFY(view.findChild<QLabel *>(QStringLiteral("profileNote"))->isVisible());
        table->sortByColumn(RuleProfileModel::RankColumn, Qt::AscendingOrder);
        QCOMPARE(shown->index(0, RuleProfileModel::EngineColumn).data().toString(), QStringLiteral("-"));
        QVERIFY(shown->index(0, RuleProfileModel::EngineColumn).data(Qt::ToolTipRole).toString().contains(
            QLatin1String("CPU engine")));
        view.clear();
        QCOMPARE(shown->rowCount(), 0);
    }
};

QTEST_MAIN(TestProfileView)
#include "tst_profileview.moc"
