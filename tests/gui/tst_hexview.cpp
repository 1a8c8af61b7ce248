// SPDX-License-Identifier: GPL-3.0-or-later
// The hex view of a hit: the rows around the match, with exactly the match's bytes highlighted.
#include <QAction>
#include <QPlainTextEdit>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>

#include "hexview.h"
#include "hitsview.h"
#include "mainwindow.h"
#include "report/rulesummarymodel.h"
#include "session/scanjob.h"

using namespace Hitscope;

class TestHexView : public QObject
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

    void showsMatchBytes()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // 4 KiB of filler with a 20-byte match at 1000 (0x3e8): it starts mid-row and spans two rows.
        QByteArray content(4096, '.');
        for (int i = 0; i < content.size(); ++i)
            content[i] = char('a' + i % 26);
        const QByteArray needle = "NEEDLE\x01\x02 in a haystk";
        QCOMPARE(needle.size(), 20);
        const qint64 offset = 1000;
        content.replace(offset, needle.size(), needle);
        const QString path = dir.filePath(QStringLiteral("sample.bin"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QCOMPARE(f.write(content), content.size());
        }

        HexView view(QFile::encodeName(path), offset, needle.size());
        QVERIFY(view.windowTitle().contains(QStringLiteral("sample.bin")));
        QVERIFY(view.windowTitle().contains(QStringLiteral("1000")));
        QCOMPARE(view.windowStart(), qint64(0x2e0)); // offset - 256, down to a row
        const QTextDocument *doc = view.text()->document();
        QCOMPARE(doc->blockCount(), int(HexView::WindowBytes / HexView::BytesPerRow));

        // The row holding the match starts with its offset and shows the file's bytes there.
        const QTextBlock row = doc->findBlockByNumber(int((0x3e0 - 0x2e0) / 16));
        QVERIFY2(row.text().startsWith(QStringLiteral("000003e0")), qPrintable(row.text()));
        const QByteArray rowBytes = content.mid(0x3e0, 16);
        for (int i = 0; i < 16; ++i)
            QCOMPARE(row.text().mid(HexView::hexColumn(i), 2), QString::fromLatin1(rowBytes.mid(i, 1).toHex()));

        // Exactly the match's bytes carry the highlight: in hex and in ASCII.
        QString hex;
        QByteArray ascii;
        for (QTextBlock block = doc->begin(); block.isValid(); block = block.next()) {
            for (auto it = block.begin(); !it.atEnd(); ++it) {
                const QTextFragment fragment = it.fragment();
                if (!fragment.charFormat().boolProperty(HexView::MatchProperty))
                    continue;
                const int column = fragment.position() - block.position();
                if (column >= HexView::asciiColumn())
                    ascii += fragment.text().toLatin1();
                else
                    hex += fragment.text();
            }
        }
        QCOMPARE(hex, QString::fromLatin1(needle.toHex()));
        QByteArray shown = needle;
        shown.replace('\x01', '.').replace('\x02', '.');
        QCOMPARE(ascii, shown);
    }

    void unreadableFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("missing.bin"));
        HexView view(QFile::encodeName(path), 10, 4);
        QCOMPARE(view.windowStart(), qint64(-1));
        QVERIFY(view.text()->toPlainText().contains(QStringLiteral("missing.bin")));
    }

    // The main window's hooks: hits reach the Rules tab, telemetry is kept, a double-click opens the hex view.
    void mainWindowHooks()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("hit.txt"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("0123456789abcdefMATCH here");
        }
        MainWindow window;
        HitRow hit;
        hit.path = QFile::encodeName(path);
        hit.rule = QStringLiteral("r1");
        hit.string = QStringLiteral("$m");
        hit.offset = 16;
        hit.length = 5;
        Q_EMIT window.scanJob()->hitsAvailable({ hit, hit });
        BatchTelemetry t;
        t.index = 0;
        Q_EMIT window.scanJob()->batchFinished(t);
        QCOMPARE(window.ruleSummaryModel()->rowCount(), 1);
        QCOMPARE(window.ruleSummaryModel()->hits(0), 2);
        QCOMPARE(window.telemetry().size(), 1);
        QVERIFY(window.exportHitsAction());
        QVERIFY(window.exportTelemetryAction());
        QTabWidget *tabs = window.resultTabs();
        QCOMPARE(tabs->tabText(1), QStringLiteral("Hits (2)"));
        QCOMPARE(tabs->tabText(2), QStringLiteral("Rules (1)"));

        window.onHitActivated(window.hitsView()->proxy()->index(0, 0));
        auto *view = window.findChild<HexView *>();
        QVERIFY(view);
        QVERIFY(view->windowTitle().contains(QStringLiteral("hit.txt")));
        QCOMPARE(view->windowStart(), qint64(0));
    }
};

QTEST_MAIN(TestHexView)
#include "tst_hexview.moc"
