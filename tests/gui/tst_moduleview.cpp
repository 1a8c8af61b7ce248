// SPDX-License-Identifier: GPL-3.0-or-later
// The module data view: a PE file's fields as yara reads them, and a clear message for a file that cannot be read.
#include <QApplication>
#include <QLabel>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include "moduleview.h"

using namespace Hitscope;

namespace {

QTreeWidgetItem *child(QTreeWidgetItem *item, const QString &name)
{
    for (int i = 0; i < item->childCount(); ++i)
        if (item->child(i)->text(0) == name)
            return item->child(i);
    return nullptr;
}

bool waitLoaded(ModuleView &view)
{
    QSignalSpy spy(&view, &ModuleView::loaded);
    return view.isLoaded() || spy.wait(30000);
}

} // namespace

class TestModuleView : public QObject
{
    Q_OBJECT
public:
    static void initMain()
    {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        qputenv("QT_FONT_DPI", "96");
    }

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void showsPeFields()
    {
        // shim's EFI application (installed by packaging/setup.sh): a PE file with sections.
        const QByteArray path = "/usr/lib/shim/shimx64.efi";
        QVERIFY2(QFile::exists(QString::fromLatin1(path)), "run packaging/setup.sh");
        ModuleView view(path);
        view.show();
        QVERIFY(waitLoaded(view));
        QTreeWidget *tree = view.tree();
        QVERIFY(tree->topLevelItemCount() >= 10); // pe, elf, math, hash, dotnet, ...
        QTreeWidgetItem *pe = tree->topLevelItem(0);
        QCOMPARE(pe->text(0), QStringLiteral("pe"));
        QVERIFY(pe->isExpanded());
        QTreeWidgetItem *count = child(pe, QStringLiteral("number_of_sections"));
        QTreeWidgetItem *sections = child(pe, QStringLiteral("sections"));
        QVERIFY(count && sections);
        QVERIFY(count->text(1).toInt() > 0);
        QCOMPARE(sections->childCount(), count->text(1).toInt());
        QTreeWidgetItem *first = child(sections, QStringLiteral("[0]"));
        QVERIFY(first && child(first, QStringLiteral("name")));
        QVERIFY(child(first, QStringLiteral("name"))->text(1).startsWith(QLatin1Char('"')));
        // The ELF module has nothing of a PE file: its fields are undefined, as yara says.
        QTreeWidgetItem *elf = tree->topLevelItem(1);
        QCOMPARE(elf->text(0), QStringLiteral("elf"));
        QCOMPARE(child(elf, QStringLiteral("type"))->text(1), QStringLiteral("YR_UNDEFINED"));
    }

    void namesAnUnreadableFile()
    {
        QTemporaryDir dir;
        const QString missing = dir.filePath(QStringLiteral("gone.exe"));
        ModuleView view(QFile::encodeName(missing));
        QVERIFY(waitLoaded(view));
        QCOMPARE(view.tree()->topLevelItemCount(), 0);
        QVERIFY2(view.status()->text().contains(QStringLiteral("gone.exe")), qPrintable(view.status()->text()));
        QVERIFY(view.status()->text().startsWith(QStringLiteral("Cannot read")));
    }

    void closingWhileReadingIsSafe()
    {
        // A dialog closed at once: the reader's result finds no dialog and is dropped, without a word.
        QTest::failOnWarning(QRegularExpression(QStringLiteral(".*")));
        for (int i = 0; i < 3; ++i) {
            auto *view = new ModuleView("/usr/lib/mono/4.5/mscorlib.dll");
            delete view;
        }
        QTest::qWait(100);
        const QWidgetList left = QApplication::topLevelWidgets();
        QVERIFY(std::none_of(left.begin(), left.end(), [](QWidget *w) { return qobject_cast<ModuleView *>(w); }));
    }
};

QTEST_MAIN(TestModuleView)

#include "tst_moduleview.moc"
