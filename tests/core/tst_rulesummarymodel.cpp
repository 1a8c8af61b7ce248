// SPDX-License-Identifier: GPL-3.0-or-later
// The per-rule summary: counts after live appends, insertions for new rules and dataChanged for known ones,
// never a reset during a scan; all under QAbstractItemModelTester.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

#include "report/rulesummarymodel.h"

using namespace Hitscope;

namespace {

HitRow hit(const char *path, const char *rule, qint64 offset = 0)
{
    HitRow r;
    r.path = path;
    r.rule = QString::fromLatin1(rule);
    r.string = QStringLiteral("$a");
    r.offset = offset;
    r.length = 4;
    return r;
}

} // namespace

class TestRuleSummaryModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void countsAfterAppends()
    {
        RuleSummaryModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(RuleSummaryModel::SortRole);
        proxy.sort(RuleSummaryModel::HitsColumn, Qt::DescendingOrder);
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);

        QCOMPARE(model.columnCount(), int(RuleSummaryModel::NUM_COLUMNS));
        model.appendHits({ hit("/a", "alpha"), hit("/a", "alpha", 9), hit("/b", "beta") });
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(changed.count(), 0);

        // Known rules change in place; a new one is appended once.
        model.appendHits({ hit("/b", "alpha"), hit("/c", "gamma"), hit("/c", "gamma", 5), hit("/a", "alpha", 20) });
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(inserted.count(), 2);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(reset.count(), 0);

        const int alpha = model.rowOf(QStringLiteral("alpha"));
        const int beta = model.rowOf(QStringLiteral("beta"));
        const int gamma = model.rowOf(QStringLiteral("gamma"));
        QCOMPARE(alpha, 0);
        QCOMPARE(model.files(alpha), 2);
        QCOMPARE(model.hits(alpha), 4);
        QCOMPARE(model.files(beta), 1);
        QCOMPARE(model.hits(beta), 1);
        QCOMPARE(model.files(gamma), 1);
        QCOMPARE(model.hits(gamma), 2);
        QCOMPARE(model.rowOf(QStringLiteral("delta")), -1);

        QCOMPARE(model.data(model.index(gamma, RuleSummaryModel::RuleColumn)).toString(), QStringLiteral("gamma"));
        QCOMPARE(model.data(model.index(alpha, RuleSummaryModel::HitsColumn), RuleSummaryModel::SortRole)
                     .toLongLong(),
                 4);
        QCOMPARE(model.data(model.index(alpha, RuleSummaryModel::FilesColumn)).toString(), QStringLiteral("2"));
        QCOMPARE(proxy.data(proxy.index(0, RuleSummaryModel::RuleColumn)).toString(), QStringLiteral("alpha"));

        model.appendHits({});
        QCOMPARE(inserted.count(), 2);
        QCOMPARE(changed.count(), 1);

        model.clear();
        QCOMPARE(reset.count(), 1);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.rowOf(QStringLiteral("alpha")), -1);
    }

    void manyBatches()
    {
        RuleSummaryModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        qint64 total = 0;
        for (int batch = 0; batch < 50; ++batch) {
            QVector<HitRow> rows;
            for (int i = 0; i < 200; ++i) {
                HitRow r = hit("", "", i);
                r.path = "/f" + QByteArray::number((batch * 200 + i) % 13);
                r.rule = QStringLiteral("r%1").arg((batch * 7 + i) % 17);
                rows.push_back(r);
            }
            total += rows.size();
            model.appendHits(rows);
        }
        QCOMPARE(model.rowCount(), 17);
        qint64 sum = 0;
        for (int row = 0; row < model.rowCount(); ++row) {
            sum += model.hits(row);
            QVERIFY(model.files(row) >= 1 && model.files(row) <= 13);
        }
        QCOMPARE(sum, total);
    }
};

QTEST_GUILESS_MAIN(TestRuleSummaryModel)
#include "tst_rulesummarymodel.moc"
