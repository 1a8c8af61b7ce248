// SPDX-License-Identifier: GPL-3.0-or-later
// The Files view as an analyst uses it after a scan: one row per file that matched, with the rules yara names
// for it, their tags and the score of the worst one; sorted by score, filtered by text and by score; the chosen
// file's hits, bytes and module data beside the list; exported as HTML, JSON and CSV.
#include <map>
#include <set>

#include <QAbstractItemModelTester>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTableWidget>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include "filesview.h"
#include "hexview.h"
#include "moduleview.h"
#include "report/filestablemodel.h"
#include "report/hitstablemodel.h"
#include "session/scanjob.h"
#include "testutil.h"
#include "testutilyara.h"

using namespace Hitscope;

namespace {

const char kRules[] = R"(
rule Severe : apt evil { meta: score = 90 strings: $a = "EVILSTRING" condition: $a }
rule Weak : suspicious { meta: severity = "low" strings: $w = "weakmarker" condition: $w }
rule Quoted { meta: score = "80" strings: $q = "quotedscore" condition: $q }
rule Plain { strings: $p = "plainthing" condition: $p }
rule SevenBytes : size { condition: filesize == 7 }
private rule Hidden { strings: $h = "EVILSTRING" condition: $h }
rule UsesHidden { meta: severity = 40 condition: Hidden and filesize > 100 }
)";

/// path -> the rules yara reports for it.
std::map<QString, std::set<QString>> yaraVerdicts(const QString &rules, const QString &dir)
{
    QByteArray err;
    const QByteArray out = TestUtil::runYara({ QStringLiteral("-r"), rules, dir }, &err);
    std::map<QString, std::set<QString>> verdicts;
    for (const QByteArray &line : out.split('\n')) {
        const qsizetype space = line.indexOf(' ');
        if (space > 0)
            verdicts[QString::fromUtf8(line.mid(space + 1))].insert(QString::fromUtf8(line.left(space)));
    }
    return verdicts;
}

int rowOf(const FilesTableModel &model, const QString &path)
{
    for (int r = 0; r < model.rowCount(); ++r)
        if (QString::fromUtf8(model.verdict(r).path) == path)
            return r;
    return -1;
}

} // namespace

class TestFilesView : public QObject
{
    Q_OBJECT
public:
    static void initMain()
    {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
    }

private Q_SLOTS:
    void initTestCase();
    void testVerdictsAreYaras();
    void testSortAndFilter();
    void testDetailsOfTheSelectedFile();
    void testExports();
    void testExportErrorsNameThePath();
    void testStoppedScanSaysSo();
    void testNewScanClearsTheSelection();

private:
    QString file(const QString &name) const { return m_dir.filePath(name); }

    QTemporaryDir m_dir;
    QString m_rulesPath;
    QString m_targets;
    HitsTableModel m_hits;
    FilesTableModel m_files;
    std::unique_ptr<FilesView> m_view;
};

void TestFilesView::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_rulesPath = file(QStringLiteral("rules.yar"));
    QVERIFY(TestUtil::writeFile(m_rulesPath, kRules));
    m_targets = file(QStringLiteral("targets"));
    QVERIFY(QDir().mkpath(m_targets));
    const QByteArray filler(300, 'x');
    const std::pair<const char *, QByteArray> files[] = {
        { "severe.bin", "MZ" + filler + "EVILSTRING" + filler },
        { "weak.txt", "a weakmarker here, weakmarker there" },
        { "both.txt", filler + "weakmarker EVILSTRING weakmarker" },
        { "quoted.txt", "quotedscore" },
        { "plain.txt", "plainthing" },
        { "seven.txt", "1234567" },
        { "clean.txt", "nothing to see" + filler },
        // What the HTML report must escape.
        { "x&<y>.txt", "EVILSTRING" },
    };
    for (const auto &[name, data] : files)
        QVERIFY(TestUtil::writeFile(QDir(m_targets).filePath(QString::fromUtf8(name)), data));

    ScanJob job;
    QObject::connect(&job, &ScanJob::hitsAvailable, &m_hits, &HitsTableModel::appendHits);
    QObject::connect(&job, &ScanJob::filesMatched, &m_files, &FilesTableModel::appendFiles);
    QAbstractItemModelTester tester(&m_files, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy finished(&job, &ScanJob::finished);
    QSignalSpy failed(&job, &ScanJob::failed);
    LaunchParams params;
    params.batchBytes = 1024; // several batches: verdicts' rows must count across them
    job.start({ m_rulesPath }, { QFile::encodeName(m_targets) }, {}, params, EngineChoice::Cpu);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, 120000);
    QCOMPARE(failed.count(), 0);
    m_view = std::make_unique<FilesView>(&m_files, &m_hits);
    m_view->resize(1000, 500);
    m_view->show();
}

void TestFilesView::testVerdictsAreYaras()
{
    const auto expected = yaraVerdicts(m_rulesPath, m_targets);
    QCOMPARE(expected.size(), size_t(7)); // every file but clean.txt
    QCOMPARE(m_files.rowCount(), int(expected.size()));
    for (const auto &[path, rules] : expected) {
        const int row = rowOf(m_files, path);
        QVERIFY2(row >= 0, qPrintable(path));
        const FileVerdict &v = m_files.verdict(row);
        const QStringList got = v.rules;
        QCOMPARE(std::set<QString>(got.begin(), got.end()), rules);
        // The verdict's rows are the file's rows of the hit table, and all of them.
        int inTable = 0;
        for (int i = 0; i < m_hits.totalHits(); ++i)
            inTable += m_hits.hit(i).path == v.path ? 1 : 0;
        QCOMPARE(v.hitCount, inTable);
        for (int i = 0; i < v.hitCount; ++i)
            QCOMPARE(m_hits.hit(v.firstHit + i).path, v.path);
    }
    const auto verdict = [this](const char *name) { return m_files.verdict(rowOf(m_files, file(QStringLiteral("targets/") + QLatin1String(name)))); };
    QCOMPARE(verdict("severe.bin").score, 90);
    QCOMPARE(verdict("weak.txt").score, 25);              // severity "low"
    QCOMPARE(verdict("both.txt").score, 90);              // the worst rule, not a sum
    QCOMPARE(verdict("quoted.txt").score, 80);            // score = "80"
    QCOMPARE(verdict("plain.txt").score, FileVerdict::kDefaultRuleScore);
    QCOMPARE(verdict("both.txt").tags, (QStringList { QStringLiteral("apt"), QStringLiteral("evil"), QStringLiteral("suspicious") }));
    QCOMPARE(verdict("seven.txt").hitCount, 1); // a condition-only match still has its one row
    QCOMPARE(m_hits.hit(verdict("seven.txt").firstHit).string, QStringLiteral("(condition)"));
    QVERIFY(!verdict("severe.bin").rules.contains(QStringLiteral("Hidden"))); // private: never reported
}

void TestFilesView::testSortAndFilter()
{
    QSortFilterProxyModel *proxy = m_view->proxy();
    m_view->setFilter({});
    m_view->setMinimumScore(0);
    QCOMPARE(proxy->rowCount(), m_files.rowCount());
    // Worst first.
    int previous = 101;
    for (int r = 0; r < proxy->rowCount(); ++r) {
        const int score = proxy->index(r, FilesTableModel::ScoreColumn).data(FilesTableModel::SortRole).toInt();
        QVERIFY(score <= previous);
        previous = score;
    }
    QCOMPARE(proxy->index(0, FilesTableModel::ScoreColumn).data().toInt(), 90);

    m_view->setFilter(QStringLiteral("SUSPICIOUS")); // a tag, any case
    QCOMPARE(proxy->rowCount(), 2);
    m_view->setFilter(QStringLiteral("plain.txt")); // a path
    QCOMPARE(proxy->rowCount(), 1);
    m_view->setFilter(QStringLiteral("Quoted")); // a rule
    QCOMPARE(proxy->rowCount(), 1);
    m_view->setFilter({});
    m_view->setMinimumScore(75);
    QCOMPARE(proxy->rowCount(), 4); // severe.bin, both.txt, quoted.txt, x&<y>.txt
    QCOMPARE(m_view->shownFiles().size(), 4);
    m_view->setMinimumScore(0);

    // Sorting by hits puts both.txt (four) first.
    m_view->table()->sortByColumn(FilesTableModel::HitsColumn, Qt::DescendingOrder);
    QCOMPARE(QString::fromUtf8(m_view->shownFiles().first().path), file(QStringLiteral("targets/both.txt")));
    m_view->table()->sortByColumn(FilesTableModel::ScoreColumn, Qt::DescendingOrder);
}

void TestFilesView::testDetailsOfTheSelectedFile()
{
    m_view->setFilter(QStringLiteral("both.txt"));
    QSignalSpy selection(m_view.get(), &FilesView::selectionChanged);
    m_view->table()->selectRow(0);
    QCOMPARE(selection.count(), 1);
    const QString both = file(QStringLiteral("targets/both.txt"));
    QCOMPARE(selection.first().first().value<QByteArrayList>(), QByteArrayList { QFile::encodeName(both) });
    QCOMPARE(m_view->selectedPaths(), QByteArrayList { QFile::encodeName(both) });

    // Its hits, in the file's order, with the bytes of the first one.
    QTableWidget *hits = m_view->hitsTable();
    QCOMPARE(hits->rowCount(), 4); // three strings, and UsesHidden, whose match has no string of its own
    QCOMPARE(hits->item(0, 0)->text(), QStringLiteral("Weak"));
    QCOMPARE(hits->item(3, 0)->text(), QStringLiteral("UsesHidden"));
    QCOMPARE(hits->item(3, 1)->text(), QStringLiteral("(condition)"));
    QCOMPARE(hits->item(0, 2)->text(), QStringLiteral("0x12c")); // 300
    QCOMPARE(hits->item(1, 0)->text(), QStringLiteral("Severe"));
    QVERIFY(m_view->hexView());
    QCOMPARE(m_view->hexView()->matchOffset(), 300);
    QCOMPARE(m_view->hexView()->matchLength(), 10);
    hits->setCurrentCell(1, 0);
    QCOMPARE(m_view->hexView()->matchOffset(), 311);
    // Esc closes a dialog, not a view embedded in the window.
    QTest::keyClick(m_view->hexView(), Qt::Key_Escape);
    QVERIFY(!m_view->hexView()->isHidden());

    // Module data is read when its tab opens, not before.
    QVERIFY(!m_view->moduleView());
    m_view->details()->setCurrentIndex(1);
    QVERIFY(m_view->moduleView());
    QTRY_VERIFY_WITH_TIMEOUT(m_view->moduleView()->isLoaded(), 30000);
    QVERIFY(m_view->moduleView()->tree()->topLevelItemCount() > 0);
    m_view->details()->setCurrentIndex(0);
    m_view->setFilter({});
}

void TestFilesView::testExports()
{
    const QVector<FileVerdict> shown = m_view->shownFiles();
    QCOMPARE(shown.size(), m_files.rowCount());

    const QString html = file(QStringLiteral("report.html"));
    QString error;
    QVERIFY2(m_view->exportTo(html, &error), qPrintable(error));
    QFile h(html);
    QVERIFY(h.open(QIODevice::ReadOnly));
    const QString page = QString::fromUtf8(h.readAll());
    QVERIFY(page.startsWith(QLatin1String("<!DOCTYPE html>")));
    QVERIFY(page.contains(QLatin1String("x&amp;&lt;y&gt;.txt")));
    QVERIFY(!page.contains(QLatin1String("<y>")));
    // Self-contained: nothing fetched from elsewhere, no script.
    QVERIFY(!page.contains(QLatin1String("http://")) && !page.contains(QLatin1String("https://")));
    QVERIFY(!page.contains(QLatin1String("<script")) && !page.contains(QLatin1String("src=")));
    for (const FileVerdict &v : shown)
        QVERIFY(page.contains(QString::fromUtf8(v.path).toHtmlEscaped()));
    // Files in the list's order: the worst first.
    QVERIFY(page.indexOf(QLatin1String("severe.bin")) < page.indexOf(QLatin1String("plain.txt")));

    const QString json = file(QStringLiteral("report.json"));
    QVERIFY2(m_view->exportTo(json, &error), qPrintable(error));
    QFile j(json);
    QVERIFY(j.open(QIODevice::ReadOnly));
    const QJsonObject doc = QJsonDocument::fromJson(j.readAll()).object();
    const QJsonArray files = doc.value(QLatin1String("files")).toArray();
    QCOMPARE(files.size(), shown.size());
    for (qsizetype i = 0; i < files.size(); ++i) {
        const QJsonObject f = files.at(i).toObject();
        QCOMPARE(f.value(QLatin1String("path")).toString(), QString::fromUtf8(shown[i].path));
        QCOMPARE(f.value(QLatin1String("score")).toInt(), shown[i].score);
        QCOMPARE(f.value(QLatin1String("hits")).toArray().size(), shown[i].hitCount);
        QCOMPARE(f.value(QLatin1String("rules")).toArray().size(), shown[i].rules.size());
    }

    // The list as filtered: one file.
    m_view->setFilter(QStringLiteral("quoted"));
    const QString csv = file(QStringLiteral("report.csv"));
    QVERIFY2(m_view->exportTo(csv, &error), qPrintable(error));
    m_view->setFilter({});
    QFile c(csv);
    QVERIFY(c.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = c.readAll().split('\n');
    QCOMPARE(lines.size(), 3); // header, one row, the empty rest after the last CRLF
    QCOMPARE(lines[0], QByteArray("path,score,rules,tags,hits,size\r"));
    QCOMPARE(lines[1], QFile::encodeName(file(QStringLiteral("targets/quoted.txt"))) + ",80,Quoted,,1,11\r");
}

void TestFilesView::testExportErrorsNameThePath()
{
    QString error;
    const QString missing = file(QStringLiteral("no/such/folder/report.html"));
    QVERIFY(!m_view->exportTo(missing, &error));
    QVERIFY2(error.contains(QDir::toNativeSeparators(missing)), qPrintable(error));
    // Stopped between files: no file, and the error says so.
    const QString stopped = file(QStringLiteral("cancelled.html"));
    QVERIFY(!FileReport::write(stopped, m_view->shownFiles(), FileReport::lookupIn(m_hits.batches()), {}, &error,
                               [](qsizetype written) { return written < 2; }));
    QVERIFY2(error.contains(QLatin1String("cancelled")), qPrintable(error));
    QVERIFY(!QFile::exists(stopped));
    const QString odd = file(QStringLiteral("report.pdf"));
    QVERIFY(!m_view->exportTo(odd, &error));
    QVERIFY2(error.contains(QLatin1String(".html")), qPrintable(error));
    QVERIFY(!QFile::exists(odd));
}

void TestFilesView::testStoppedScanSaysSo()
{
    FileReport::Scan scan;
    scan.ruleFiles = { m_rulesPath };
    scan.finished = QDateTime::currentDateTime();
    scan.complete = false;
    m_view->setScan(scan);
    const QString json = file(QStringLiteral("stopped.json"));
    const QString html = file(QStringLiteral("stopped.html"));
    QString error;
    QVERIFY2(m_view->exportTo(json, &error) && m_view->exportTo(html, &error), qPrintable(error));
    QFile j(json);
    QVERIFY(j.open(QIODevice::ReadOnly));
    QCOMPARE(QJsonDocument::fromJson(j.readAll()).object().value(QLatin1String("complete")).toBool(true), false);
    QFile h(html);
    QVERIFY(h.open(QIODevice::ReadOnly));
    QVERIFY(h.readAll().contains("The scan did not end"));
}

// A new scan empties the list: the rule editor must not go on testing the old selection.
void TestFilesView::testNewScanClearsTheSelection()
{
    m_view->table()->selectRow(0);
    QCOMPARE(m_view->selectedPaths().size(), 1);
    QSignalSpy selection(m_view.get(), &FilesView::selectionChanged);
    m_files.clear();
    QVERIFY(!selection.isEmpty());
    QVERIFY(selection.last().first().value<QByteArrayList>().isEmpty());
    QVERIFY(m_view->selectedPaths().isEmpty());
    QVERIFY(!m_view->hexView());
}

QTEST_MAIN(TestFilesView)
#include "tst_filesview.moc"
