// SPDX-License-Identifier: GPL-3.0-or-later
// The hits table: live appends in chunks under QAbstractItemModelTester, fetchMore() paging, display and sort
// roles, rows found across appended batches (kept shared, not copied), and clear().
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

#include "report/hitstablemodel.h"

using namespace Hitscope;

namespace {

QVector<HitRow> makeRows(int first, int count)
{
    QVector<HitRow> rows;
    rows.reserve(count);
    for (int i = first; i < first + count; ++i) {
        HitRow r;
        r.path = "/corpus/f" + QByteArray::number(i % 7) + ".bin";
        r.rule = QStringLiteral("rule%1").arg(i % 5);
        r.string = QStringLiteral("$s%1").arg(i % 3);
        r.offset = int64_t(i) * 4099;
        r.length = 1 + i % 11;
        r.preview = "hit" + QByteArray::number(i);
        rows.push_back(r);
    }
    return rows;
}

} // namespace

class TestHitsTableModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void headers()
    {
        HitsTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.columnCount(), int(HitsTableModel::NUM_COLUMNS));
        const QStringList want { QStringLiteral("File"),   QStringLiteral("Rule"),   QStringLiteral("String"),
                                 QStringLiteral("Offset"), QStringLiteral("Length"), QStringLiteral("Preview") };
        for (int c = 0; c < HitsTableModel::NUM_COLUMNS; ++c)
            QCOMPARE(model.headerData(c, Qt::Horizontal).toString(), want[c]);
    }

    void appendsUnderTester()
    {
        HitsTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);

        // 25,000 rows in appends of different sizes, as batches deliver them.
        const int sizes[] = { 1, 999, 3000, 6000, 4000, 11000 };
        int total = 0;
        for (int n : sizes) {
            model.appendHits(makeRows(total, n));
            total += n;
            QCOMPARE(model.totalHits(), total);
            QCOMPARE(model.rowCount(), qMin(total, int(HitsTableModel::FetchChunk)));
            QVERIFY(!QTest::currentTestFailed());
        }
        QCOMPARE(total, 25000);
        QCOMPARE(reset.count(), 0);
        // One insert per append while under the first chunk, none once views have what they asked for.
        QCOMPARE(inserted.count(), 4);
        int previousEnd = -1;
        for (const QList<QVariant> &args : inserted) {
            QCOMPARE(args.at(1).toInt(), previousEnd + 1);
            previousEnd = args.at(2).toInt();
        }
        QCOMPARE(previousEnd, HitsTableModel::FetchChunk - 1);

        // Hits arriving while everything asked for is shown keep appearing, once the view has fetched more.
        QVERIFY(model.canFetchMore({}));
        model.fetchMore({});
        QCOMPARE(model.rowCount(), 2 * HitsTableModel::FetchChunk);
        model.fetchMore({});
        QCOMPARE(model.rowCount(), 25000);
        QVERIFY(!model.canFetchMore({}));
        model.appendHits(makeRows(total, 10));
        QCOMPARE(model.rowCount(), 25010);
        QCOMPARE(model.index(25009, HitsTableModel::PreviewColumn).data().toString(), QStringLiteral("hit25009"));
    }

    void totalChangedPastWhatViewsFetched()
    {
        // Views stop being told of rows past what they fetched; counts shown to the user must still move.
        HitsTableModel model;
        QSignalSpy total(&model, &HitsTableModel::totalChanged);
        model.appendHits(makeRows(0, HitsTableModel::FetchChunk + 5));
        model.appendHits(makeRows(HitsTableModel::FetchChunk + 5, 7));
        QCOMPARE(model.rowCount(), int(HitsTableModel::FetchChunk));
        QCOMPARE(total.count(), 2);
        QCOMPARE(total.last().at(0).toInt(), HitsTableModel::FetchChunk + 12);
        model.clear();
        QCOMPARE(total.last().at(0).toInt(), 0);
    }

    void fetchMoreInChunks()
    {
        HitsTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.appendHits(makeRows(0, 34567));
        QCOMPARE(model.rowCount(), 10000);
        QCOMPARE(model.totalHits(), 34567);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QVERIFY(model.canFetchMore({}));
        model.fetchMore({});
        QCOMPARE(model.rowCount(), 20000);
        model.fetchMore({});
        model.fetchMore({});
        QCOMPARE(model.rowCount(), 34567);
        QVERIFY(!model.canFetchMore({}));
        model.fetchMore({}); // nothing left: no insert
        QCOMPARE(inserted.count(), 3);
        QCOMPARE(inserted.at(2).at(1).toInt(), 30000);
        QCOMPARE(inserted.at(2).at(2).toInt(), 34566);
        // A table has no children.
        const QModelIndex child = model.index(0, 0);
        QVERIFY(!model.canFetchMore(child));
        QCOMPARE(model.rowCount(child), 0);
        QCOMPARE(model.columnCount(child), 0);
    }

    void displayAndSortRoles()
    {
        HitsTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        HitRow r;
        r.path = "/data/caf\xc3\xa9.bin";
        r.rule = QStringLiteral("iocs:3");
        r.string = QStringLiteral("$");
        r.offset = 0x1a2b;
        r.length = 70;
        r.preview = QByteArray("MZ\x90\x00\n\\ok", 8);
        model.appendHits({ r });
        auto at = [&](int column, int role) { return model.index(0, column).data(role); };

        QCOMPARE(at(HitsTableModel::FileColumn, Qt::DisplayRole).toString(), QStringLiteral("/data/caf\u00e9.bin"));
        QCOMPARE(at(HitsTableModel::RuleColumn, Qt::DisplayRole).toString(), QStringLiteral("iocs:3"));
        QCOMPARE(at(HitsTableModel::StringColumn, Qt::DisplayRole).toString(), QStringLiteral("$"));
        QCOMPARE(at(HitsTableModel::OffsetColumn, Qt::DisplayRole).toString(), QStringLiteral("0x1a2b"));
        QVERIFY(at(HitsTableModel::OffsetColumn, Qt::ToolTipRole).toString().contains(QStringLiteral("6699")));
        QCOMPARE(at(HitsTableModel::LengthColumn, Qt::DisplayRole).toString(), QStringLiteral("70"));
        QCOMPARE(at(HitsTableModel::PreviewColumn, Qt::DisplayRole).toString(),
                 QStringLiteral("MZ\\x90\\x00\\x0A\\ok"));

        // Raw values: numbers as numbers, so that 0x9 sorts before 0x10.
        QCOMPARE(at(HitsTableModel::OffsetColumn, HitsTableModel::SortRole).userType(), int(QMetaType::LongLong));
        QCOMPARE(at(HitsTableModel::OffsetColumn, HitsTableModel::SortRole).toLongLong(), 0x1a2bLL);
        QCOMPARE(at(HitsTableModel::LengthColumn, HitsTableModel::SortRole).toLongLong(), 70LL);
        QCOMPARE(at(HitsTableModel::RuleColumn, HitsTableModel::SortRole).toString(), QStringLiteral("iocs:3"));
        QCOMPARE(at(HitsTableModel::PreviewColumn, HitsTableModel::SortRole).toByteArray(), r.preview);
        QCOMPARE(at(HitsTableModel::FileColumn, HitsTableModel::RawRole).toByteArray(), r.path);
        QCOMPARE(model.hit(0).offset, r.offset);
    }

    void proxySortsByRawValues()
    {
        HitsTableModel model;
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(HitsTableModel::SortRole);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVector<HitRow> rows;
        for (int64_t off : { 0x10, 0x9, 0x100, 0xa }) {
            HitRow r;
            r.path = "/f";
            r.offset = off;
            r.length = 100 - off % 50;
            rows.push_back(r);
        }
        model.appendHits(rows);
        proxy.sort(HitsTableModel::OffsetColumn);
        QStringList got;
        for (int i = 0; i < proxy.rowCount(); ++i)
            got << proxy.index(i, HitsTableModel::OffsetColumn).data().toString();
        QCOMPARE(got,
                 (QStringList { QStringLiteral("0x9"), QStringLiteral("0xa"), QStringLiteral("0x10"),
                                QStringLiteral("0x100") }));
        // Live appends go through the proxy too.
        model.appendHits(makeRows(0, 3));
        QCOMPARE(proxy.rowCount(), 7);
        QCOMPARE(proxy.index(0, HitsTableModel::OffsetColumn).data().toString(), QStringLiteral("0x0"));
    }

    void rowsAcrossBatches()
    {
        HitsTableModel model;
        const int sizes[] = { 7, 1, 3000, 2, 12000, 500 };
        QVector<QVector<HitRow>> sent;
        int total = 0;
        for (int n : sizes) {
            sent.push_back(makeRows(total, n));
            model.appendHits(sent.back());
            total += n;
        }
        QCOMPARE(model.totalHits(), total);
        // Forwards, backwards and jumping: each row is the one sent at that position.
        for (int i = 0; i < total; ++i)
            QCOMPARE(model.hit(i).offset, int64_t(i) * 4099);
        for (int i = total - 1; i >= 0; i -= 7)
            QCOMPARE(model.hit(i).preview, "hit" + QByteArray::number(i));
        for (int i : { 15508, 0, 3009, 7, 8, 3008, 15009, 3010 })
            QCOMPARE(model.hit(i).offset, int64_t(i) * 4099);
        QCOMPARE(model.index(9, HitsTableModel::PreviewColumn).data().toString(), QStringLiteral("hit9"));

        // A batch is kept as it was sent, not copied row by row (which cost seconds with a million hits).
        QCOMPARE(&model.hit(0), &sent[0].constData()[0]);
        QCOMPARE(&model.hit(3008 + 1), &sent[3].constData()[1]);
    }

    void clearResetsOnly()
    {
        HitsTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.appendHits(makeRows(0, 15000));
        model.fetchMore({});
        QCOMPARE(model.rowCount(), 15000);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        model.clear();
        QCOMPARE(reset.count(), 1);
        QCOMPARE(removed.count(), 0);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.totalHits(), 0);
        QVERIFY(!model.canFetchMore({}));
        // The next scan starts with the first chunk again.
        model.appendHits(makeRows(0, 12000));
        QCOMPARE(model.rowCount(), 10000);
        QVERIFY(model.canFetchMore({}));
        model.appendHits({});
        QCOMPARE(model.rowCount(), 10000);
    }
};

QTEST_GUILESS_MAIN(TestHitsTableModel)
#include "tst_hitstablemodel.moc"
