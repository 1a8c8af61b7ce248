// SPDX-License-Identifier: GPL-3.0-or-later
// The rule editor: checks as the user types (after a pause), marks and lists the errors, saves, asks before
// dropping changes, colours YARA, and tests the unsaved rules on selected files as yara would find them.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextLayout>

#include "codeeditor.h"
#include "diagnosticslist.h"
#include "report/hitstablemodel.h"
#include "ruleeditor.h"
#include "rules/ruleset.h"
#include "ruletestpanel.h"
#include "testutil.h"
#include "testutilyara.h"
#include "yarahighlighter.h"

using namespace Hitscope;

namespace {

// 1-based lines of kRules: the condition line an edit breaks, and where each rule starts.
constexpr int kConditionLine = 8;

const QByteArray kRules = "rule text_and_hex\n"             // 1
                          "{\n"                              // 2
                          "    strings:\n"                   // 3
                          "        $a = \"needle\"\n"        // 4
                          "        $h = { 4D 5A ?? 00 }\n"   // 5
                          "        $z = \"absent-in-both\"\n" // 6
                          "    condition:\n"                 // 7
                          "        $a or $h or $z\n"         // 8
                          "}\n";

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QList<RuleDiagnostic> errors(const RuleEditor &editor)
{
    QList<RuleDiagnostic> out;
    const QList<RuleDiagnostic> all = editor.diagnosticsList()->diagnostics();
    for (const RuleDiagnostic &d : all)
        if (d.severity == RuleDiagnostic::Severity::Error)
            out.push_back(d);
    return out;
}

/// "RULE FILE 0xOFFSET:$id" of every match, sorted, as yara -s prints them (readable where a comparison fails).
using Matches = QStringList;

Matches tableMatches(const HitsTableModel *model)
{
    Matches out;
    for (int i = 0; i < model->totalHits(); ++i) {
        const HitRow &h = model->hit(i);
        out.push_back(QStringLiteral("%1 %2 0x%3:%4")
                          .arg(h.rule, QDir::cleanPath(QFile::decodeName(h.path)))
                          .arg(h.offset, 0, 16)
                          .arg(h.string));
    }
    out.sort();
    return out;
}

Matches yaraMatches(const QString &rules, const QString &target)
{
    QByteArray err;
    const TestUtil::YaraReport report = TestUtil::parseYaraReport(TestUtil::runYara({ QStringLiteral("-s"), rules, target }, &err));
    Matches out;
    for (const auto &[key, lines] : report) {
        for (const QByteArray &line : lines) {
            const QList<QByteArray> parts = line.split(':');
            out.push_back(QString::fromUtf8(key.first) + QLatin1Char(' ')
                          + QDir::cleanPath(QString::fromUtf8(key.second)) + QLatin1Char(' ')
                          + QString::fromUtf8(parts.value(0) + ':' + parts.value(1)));
        }
    }
    out.sort();
    return out;
}

QTextCharFormat formatAt(const QTextBlock &block, int column)
{
    const QList<QTextLayout::FormatRange> ranges = block.layout()->formats();
    for (const QTextLayout::FormatRange &r : ranges)
        if (column >= r.start && column < r.start + r.length)
            return r.format;
    return {};
}

} // namespace

class TestRuleEditor : public QObject
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
    void initTestCase();
    void init();
    void cleanup();
    void errorAppearsAfterThePauseAndGoesWhenFixed();
    void clickingAnErrorMovesTheCursor();
    void includeOfASiblingResolves();
    void saveWritesTheFileAndClearsTheMark();
    void unsavedChangesAreAskedAbout();
    void foreignBytesOpenReadOnly();
    void listFilesAreCheckedToo();
    void testButtonNeedsASelection();
    void testOnSelectionFindsWhatYaraFinds();
    void malformedRuleIsRejectedAlone();
    void unreadableFileIsReported();
    void cancelStopsTheTest();
    void highlighterTellsTokensApart();
    void moreWarningsWithOneCall();
    void screenshot();

private:
    void writeSamples();
    bool waitChecked();
    bool runTest();

    QTemporaryDir m_tmp;
    QString m_samples;
    QString m_withMatch;
    QString m_without;
    std::unique_ptr<RuleEditor> m_editor;
};

void TestRuleEditor::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_tmp.isValid());
    writeSamples();
}

void TestRuleEditor::writeSamples()
{
    m_samples = m_tmp.filePath(QStringLiteral("samples"));
    m_withMatch = m_samples + QStringLiteral("/match.bin");
    m_without = m_samples + QStringLiteral("/clean.bin");
    QByteArray match(300, '.');
    match.replace(17, 6, "needle");
    match.replace(200, 6, "needle");
    match.replace(100, 4, QByteArray("MZ\x7f\x00", 4));
    QVERIFY(TestUtil::writeFile(m_withMatch, match));
    QVERIFY(TestUtil::writeFile(m_without, QByteArray(300, '.') + "needl" + QByteArray("MZ\x7f\x01", 4)));
}

void TestRuleEditor::init()
{
    m_editor = std::make_unique<RuleEditor>();
    m_editor->setCheckDelay(150);
    // Qt 6.4's offscreen platform cannot create Vulkan instances: test with the CPU engine.
    m_editor->setEngine(EngineChoice::Cpu);
    // No dialog may block a test: a test that means to be asked sets its own answer.
    m_editor->setSaveQuestion([](const QString &) { return QMessageBox::Discard; });
    m_editor->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_editor.get()));
    QVERIFY(waitChecked());
}

void TestRuleEditor::cleanup()
{
    if (m_editor && m_editor->testPanel()->isRunning()) {
        QSignalSpy finished(m_editor->testPanel(), &RuleTestPanel::testFinished);
        m_editor->testPanel()->cancel();
        QVERIFY(finished.wait(60000));
    }
    m_editor.reset();
}

bool TestRuleEditor::waitChecked()
{
    if (!m_editor->isChecking())
        return true;
    QSignalSpy checked(m_editor.get(), &RuleEditor::rulesChecked);
    return checked.wait(10000);
}

bool TestRuleEditor::runTest()
{
    QSignalSpy finished(m_editor->testPanel(), &RuleTestPanel::testFinished);
    m_editor->testAction()->trigger();
    return m_editor->testPanel()->isRunning() && finished.wait(120000) && finished.size() == 1;
}

void TestRuleEditor::errorAppearsAfterThePauseAndGoesWhenFixed()
{
    const QString path = m_tmp.filePath(QStringLiteral("typing.yar"));
    QVERIFY(TestUtil::writeFile(path, kRules));
    QVERIFY(m_editor->openFile(path));
    QVERIFY(waitChecked());
    QVERIFY(errors(*m_editor).isEmpty());

    m_editor->setCheckDelay(800);
    m_editor->editor()->goToLine(kConditionLine);
    m_editor->editor()->moveCursor(QTextCursor::EndOfBlock);
    QSignalSpy checked(m_editor.get(), &RuleEditor::rulesChecked);
    QTest::keyClicks(m_editor->editor(), QStringLiteral(" and"));
    // Typing goes on without a check: it comes a pause after the last key.
    QTest::qWait(100);
    QCOMPARE(checked.size(), 0);
    QVERIFY(errors(*m_editor).isEmpty());
    QVERIFY(checked.wait(5000));
    QCOMPARE(checked.size(), 1);

    const QList<RuleDiagnostic> found = errors(*m_editor);
    QCOMPARE(found.size(), 1);
    QCOMPARE(found[0].line, kConditionLine + 1); // the closing brace, where yara meets the missing operand
    QCOMPARE(found[0].rule, QStringLiteral("text_and_hex"));
    QCOMPARE(found[0].file, path);
    const auto marks = m_editor->editor()->lineMarks();
    QCOMPARE(marks.size(), size_t(1));
    QCOMPARE(marks.begin()->first, kConditionLine + 1);
    QCOMPARE(marks.begin()->second.first, CodeEditor::Mark::Error);
    // The mark is drawn: an underline under that line of text.
    const QList<QTextEdit::ExtraSelection> selections = m_editor->editor()->extraSelections();
    const bool underlined = std::any_of(selections.begin(), selections.end(), [](const QTextEdit::ExtraSelection &s) {
        return s.format.hasProperty(CodeEditor::MarkProperty) && s.cursor.block().blockNumber() == kConditionLine;
    });
    QVERIFY(underlined);
    QVERIFY(m_editor->title().endsWith(QLatin1Char('*')));
    QCOMPARE(readFile(path), kRules); // checked without saving

    for (int i = 0; i < 4; ++i)
        QTest::keyClick(m_editor->editor(), Qt::Key_Backspace);
    QVERIFY(checked.wait(5000));
    QVERIFY(errors(*m_editor).isEmpty());
    QVERIFY(m_editor->editor()->lineMarks().empty());
}

void TestRuleEditor::clickingAnErrorMovesTheCursor()
{
    QByteArray broken = kRules;
    broken.replace("$a = \"needle\"", "$a = \"needle\" nocase nocase");
    const QString path = m_tmp.filePath(QStringLiteral("click.yar"));
    QVERIFY(TestUtil::writeFile(path, broken));
    QVERIFY(m_editor->openFile(path));
    QVERIFY(waitChecked());
    QCOMPARE(errors(*m_editor).size(), 1);
    QCOMPARE(errors(*m_editor)[0].line, 4);
    m_editor->editor()->goToLine(1);
    QCOMPARE(m_editor->editor()->currentLine(), 1);

    DiagnosticsList *list = m_editor->diagnosticsList();
    QTreeWidgetItem *item = list->topLevelItem(0);
    QVERIFY(item);
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(item).center());
    QCOMPARE(m_editor->editor()->currentLine(), 4);
}

void TestRuleEditor::includeOfASiblingResolves()
{
    QTemporaryDir dir;
    QVERIFY(TestUtil::writeFile(dir.filePath(QStringLiteral("sibling.yar")), "rule sibling_rule { condition: true }\n"));
    const QString main = dir.filePath(QStringLiteral("main.yar"));
    QVERIFY(TestUtil::writeFile(main, "include \"sibling.yar\"\nrule main_rule { condition: sibling_rule }\n"));
    QSignalSpy checked(m_editor.get(), &RuleEditor::rulesChecked);
    QVERIFY(m_editor->openFile(main));
    QVERIFY(checked.wait(10000));
    QVERIFY(errors(*m_editor).isEmpty());
    const auto rules = checked.last().at(0).value<std::shared_ptr<const RuleSet>>();
    QVERIFY(rules);
    QCOMPARE(rules->rules.size(), size_t(2));
    QCOMPARE(rules->rules[0].name, QStringLiteral("sibling_rule"));

    // The same include from another folder does not resolve: it is the file's folder that counts.
    QVERIFY(m_editor->saveAs(m_tmp.filePath(QStringLiteral("elsewhere.yar"))));
    QVERIFY(checked.wait(10000));
    const QList<RuleDiagnostic> found = errors(*m_editor);
    QVERIFY(!found.isEmpty());
    QCOMPARE(found[0].line, 1);
    QVERIFY2(found[0].message.contains(QLatin1String("sibling.yar")), qPrintable(found[0].message));
}

void TestRuleEditor::saveWritesTheFileAndClearsTheMark()
{
    const QString path = m_tmp.filePath(QStringLiteral("save.yar"));
    QVERIFY(TestUtil::writeFile(path, kRules));
    QVERIFY(m_editor->openFile(path));
    QCOMPARE(m_editor->title(), QStringLiteral("save.yar"));
    QVERIFY(!m_editor->isWindowModified());
    QSignalSpy titles(m_editor.get(), &RuleEditor::titleChanged);

    m_editor->editor()->goToLine(1);
    QTest::keyClicks(m_editor->editor(), QStringLiteral("private "));
    QCOMPARE(m_editor->title(), QStringLiteral("save.yar*"));
    QVERIFY(m_editor->isWindowModified());
    QVERIFY(m_editor->windowTitle().contains(QLatin1String("save.yar")));
    QCOMPARE(titles.last().at(0).toString(), QStringLiteral("save.yar*"));

    QSignalSpy saved(m_editor.get(), &RuleEditor::fileSaved);
    m_editor->saveAction()->trigger();
    QCOMPARE(saved.size(), 1);
    QCOMPARE(readFile(path), "private " + kRules);
    QCOMPARE(m_editor->title(), QStringLiteral("save.yar"));
    QVERIFY(!m_editor->isWindowModified());

    // Windows line endings stay so: the edit alone changes the bytes.
    const QString crlf = m_tmp.filePath(QStringLiteral("crlf.yar"));
    QByteArray windows = kRules;
    windows.replace("\n", "\r\n");
    QVERIFY(TestUtil::writeFile(crlf, windows));
    QVERIFY(m_editor->openFile(crlf));
    QVERIFY(m_editor->isEditable());
    m_editor->editor()->goToLine(1);
    QTest::keyClicks(m_editor->editor(), QStringLiteral("global "));
    QVERIFY(m_editor->saveAs(crlf));
    QCOMPARE(readFile(crlf), "global " + windows);
}

void TestRuleEditor::unsavedChangesAreAskedAbout()
{
    const QString path = m_tmp.filePath(QStringLiteral("ask.yar"));
    QVERIFY(TestUtil::writeFile(path, kRules));
    QVERIFY(m_editor->openFile(path));
    QVERIFY(m_editor->maybeSave()); // nothing to lose: not asked
    QTest::keyClicks(m_editor->editor(), QStringLiteral("// edited"));
    QTest::keyClick(m_editor->editor(), Qt::Key_Return);

    QStringList asked;
    QMessageBox::StandardButton answer = QMessageBox::Cancel;
    m_editor->setSaveQuestion([&](const QString &name) {
        asked.push_back(name);
        return answer;
    });
    QVERIFY(!m_editor->maybeSave());
    QVERIFY(!m_editor->close()); // a window stays open on Cancel
    QVERIFY(m_editor->isVisible());
    QCOMPARE(asked, QStringList(2, QStringLiteral("ask.yar")));
    QCOMPARE(readFile(path), kRules);

    answer = QMessageBox::Save;
    QVERIFY(m_editor->maybeSave());
    QCOMPARE(readFile(path), "// edited\n" + kRules);
    QVERIFY(!m_editor->isModified());

    QTest::keyClicks(m_editor->editor(), QStringLiteral("x"));
    answer = QMessageBox::Discard;
    m_editor->newAction()->trigger();
    QCOMPARE(asked.size(), 4);
    QVERIFY(m_editor->filePath().isEmpty());
    QCOMPARE(m_editor->title(), QStringLiteral("untitled.yar"));
    QCOMPARE(readFile(path), "// edited\n" + kRules);
}

void TestRuleEditor::foreignBytesOpenReadOnly()
{
    // Latin-1 bytes in a literal list: a UTF-8 editor would write them back as other bytes.
    const QString path = m_tmp.filePath(QStringLiteral("latin1.txt"));
    const QByteArray data = "caf\xe9\nplain\n";
    QVERIFY(TestUtil::writeFile(path, data));
    QVERIFY(m_editor->openFile(path));
    QVERIFY(!m_editor->isEditable());
    QVERIFY(m_editor->editor()->isReadOnly());
    QVERIFY(!m_editor->saveAction()->isEnabled());
    QVERIFY(!m_editor->saveAs(path));
    QCOMPARE(readFile(path), data);
    QVERIFY(m_editor->findChild<QLabel *>(QStringLiteral("editorNotice"))->isVisible());
    // A list is not coloured as YARA.
    QVERIFY(!m_editor->highlighter()->document());

    // Tested as the bytes on disk, not as the editor shows them (U+FFFD for the byte that is not UTF-8).
    const QString sample = m_tmp.filePath(QStringLiteral("latin1-sample/menu.bin"));
    QVERIFY(TestUtil::writeFile(sample, "-- caf\xe9 --"));
    m_editor->setSelection({ QFile::encodeName(sample) });
    QVERIFY(runTest());
    const HitsTableModel *model = m_editor->testPanel()->model();
    QCOMPARE(model->totalHits(), 1);
    QCOMPARE(model->hit(0).rule, QStringLiteral("latin1:1"));
    QCOMPARE(model->hit(0).offset, qint64(3));
}

void TestRuleEditor::listFilesAreCheckedToo()
{
    const QString path = m_tmp.filePath(QStringLiteral("patterns.tsv"));
    QVERIFY(TestUtil::writeFile(path, "i\tdomain\t[a-z]+\\.example\n-\tbroken\t(abc\n"));
    QVERIFY(m_editor->openFile(path));
    QVERIFY(m_editor->isEditable());
    QVERIFY(!m_editor->highlighter()->document()); // colours are for YARA
    QVERIFY(waitChecked());
    const QList<RuleDiagnostic> found = errors(*m_editor);
    QCOMPARE(found.size(), 1);
    QCOMPARE(found[0].line, 2);
    QCOMPARE(m_editor->editor()->lineMarks().count(2), size_t(1));

    // Fixed and saved, byte for byte.
    m_editor->editor()->moveCursor(QTextCursor::End);
    m_editor->editor()->moveCursor(QTextCursor::PreviousBlock);
    m_editor->editor()->moveCursor(QTextCursor::EndOfBlock);
    QTest::keyClicks(m_editor->editor(), QStringLiteral(")"));
    QVERIFY(waitChecked());
    QVERIFY(errors(*m_editor).isEmpty());
    QVERIFY(m_editor->saveAs(path));
    QCOMPARE(readFile(path), QByteArray("i\tdomain\t[a-z]+\\.example\n-\tbroken\t(abc)\n"));
}

void TestRuleEditor::testButtonNeedsASelection()
{
    QAction *test = m_editor->testAction();
    QVERIFY(!test->isEnabled());
    QVERIFY2(test->toolTip().contains(QLatin1String("Select")), qPrintable(test->toolTip()));
    m_editor->setSelection({ QFile::encodeName(m_withMatch) });
    QVERIFY(test->isEnabled());
    m_editor->setSelection({});
    QVERIFY(!test->isEnabled());
}

void TestRuleEditor::testOnSelectionFindsWhatYaraFinds()
{
    // On disk, rules that find nothing here: the test must use the text as edited.
    QTemporaryDir rulesDir;
    const QString path = rulesDir.filePath(QStringLiteral("tested.yar"));
    QVERIFY(TestUtil::writeFile(path, "rule on_disk { strings: $a = \"zzzz\" condition: $a }\n"));
    QVERIFY(m_editor->openFile(path));
    m_editor->editor()->selectAll();
    m_editor->editor()->insertPlainText(QString::fromUtf8(kRules));
    QVERIFY(m_editor->isModified());

    m_editor->setSelection({ QFile::encodeName(m_withMatch), QFile::encodeName(m_without) });
    QVERIFY(runTest());
    const RuleTestPanel *panel = m_editor->testPanel();
    const Matches got = tableMatches(panel->model());

    // The oracle reads the same text from a file of its own, away from the user's folder.
    const QString oracleRules = m_tmp.filePath(QStringLiteral("oracle/tested.yar"));
    QVERIFY(TestUtil::writeFile(oracleRules, kRules));
    const Matches expected = yaraMatches(oracleRules, m_samples);
    QCOMPARE(expected.size(), 3); // needle twice, the hex string once, all in match.bin
    QCOMPARE(got, expected);
    for (const QString &m : got)
        QVERIFY2(m.contains(QDir::cleanPath(m_withMatch)), qPrintable(m));
    QCOMPARE(panel->summary(), QStringLiteral("1 of 2 files matched 1 rule"));
    QVERIFY(panel->problems().isEmpty());
    // Nothing was saved or written next to the rules.
    QCOMPARE(readFile(path), QByteArray("rule on_disk { strings: $a = \"zzzz\" condition: $a }\n"));
    QCOMPARE(QDir(rulesDir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
             QStringList { QStringLiteral("tested.yar") });
}

void TestRuleEditor::malformedRuleIsRejectedAlone()
{
    const QByteArray rules = kRules
        + "rule malformed\n"
          "{\n"
          "    strings:\n"
          "        $b = { 4D 5A [3-1] }\n"
          "    condition:\n"
          "        $b\n"
          "}\n";
    m_editor->editor()->setPlainText(QString::fromUtf8(rules));
    m_editor->setSelection({ QFile::encodeName(m_withMatch), QFile::encodeName(m_without) });
    QVERIFY(runTest());
    const RuleTestPanel *panel = m_editor->testPanel();
    QCOMPARE(panel->rejections().size(), size_t(1));
    QCOMPARE(panel->rejections()[0].rule, QStringLiteral("malformed"));
    QCOMPARE(panel->summary(), QStringLiteral("1 of 2 files matched 1 rule; 1 rule rejected"));
    QCOMPARE(tableMatches(panel->model()).size(), 3);
    const QLabel *details = panel->findChild<QLabel *>(QStringLiteral("testDetails"));
    QVERIFY2(details->isVisible() && details->text().contains(QLatin1String("rule malformed")),
             qPrintable(details->text()));

    QVERIFY(waitChecked());
    const QList<RuleDiagnostic> found = errors(*m_editor);
    QCOMPARE(found.size(), 1);
    QCOMPARE(found[0].rule, QStringLiteral("malformed"));
    QCOMPARE(found[0].line, 13); // the hex string's line
}

void TestRuleEditor::unreadableFileIsReported()
{
    m_editor->editor()->setPlainText(QString::fromUtf8(kRules));
    const QString missing = m_samples + QStringLiteral("/gone.bin");
    m_editor->setSelection({ QFile::encodeName(m_withMatch), QFile::encodeName(missing) });
    QVERIFY(runTest());
    const RuleTestPanel *panel = m_editor->testPanel();
    QCOMPARE(panel->problems().size(), 1);
    QVERIFY2(panel->problems()[0].contains(QLatin1String("gone.bin")), qPrintable(panel->problems()[0]));
    QCOMPARE(panel->summary(), QStringLiteral("1 of 1 file matched 1 rule; 1 problem"));
    const QLabel *details = panel->findChild<QLabel *>(QStringLiteral("testDetails"));
    QVERIFY(details->isVisible());
    QVERIFY2(details->text().contains(QLatin1String("gone.bin")), qPrintable(details->text()));
}

void TestRuleEditor::cancelStopsTheTest()
{
    m_editor->editor()->setPlainText(QString::fromUtf8(kRules));
    m_editor->setSelection({ QFile::encodeName(m_withMatch), QFile::encodeName(m_without) });
    RuleTestPanel *panel = m_editor->testPanel();
    auto *cancel = panel->findChild<QPushButton *>(QStringLiteral("testCancel"));
    QVERIFY(!cancel->isEnabled());
    QSignalSpy finished(panel, &RuleTestPanel::testFinished);
    m_editor->testAction()->trigger();
    QVERIFY(panel->isRunning());
    QVERIFY(!m_editor->testAction()->isEnabled()); // one test at a time
    QVERIFY(cancel->isEnabled());
    QTest::mouseClick(cancel, Qt::LeftButton);
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished[0].at(0).toBool(), false);
    QCOMPARE(panel->summary(), QStringLiteral("Scan stopped."));
    QVERIFY(!cancel->isEnabled());
    QVERIFY(m_editor->testAction()->isEnabled());

    // The next test runs to its end.
    QVERIFY(runTest());
    QCOMPARE(panel->summary(), QStringLiteral("1 of 2 files matched 1 rule"));
}

void TestRuleEditor::highlighterTellsTokensApart()
{
    m_editor->editor()->setPlainText(QStringLiteral("rule x { strings: $a = \"t\\x41\" $h = { 4D ?? } // note\n"
                                                    "/* a comment\n"
                                                    "   over lines */ condition: $a and pe.is_dll() }\n"));
    m_editor->highlighter()->rehighlight();
    const QTextDocument *doc = m_editor->editor()->document();
    const QTextBlock first = doc->firstBlock();
    const QString line = first.text();
    const QTextCharFormat keyword = formatAt(first, 0);
    const QTextCharFormat name = formatAt(first, int(line.indexOf(QLatin1Char('x'))));
    const QTextCharFormat text = formatAt(first, int(line.indexOf(QLatin1Char('"'))));
    const QTextCharFormat escape = formatAt(first, int(line.indexOf(QLatin1String("\\x41"))));
    const QTextCharFormat hex = formatAt(first, int(line.indexOf(QLatin1String("4D"))));
    const QTextCharFormat comment = formatAt(first, int(line.indexOf(QLatin1String("note"))));
    const QTextCharFormat stringId = formatAt(first, int(line.indexOf(QLatin1String("$h"))));
    const YaraHighlighter *h = m_editor->highlighter();
    QCOMPARE(keyword, h->format(YaraHighlighter::Token::Keyword));
    QCOMPARE(text, h->format(YaraHighlighter::Token::Text));
    QCOMPARE(escape, h->format(YaraHighlighter::Token::Escape));
    QCOMPARE(hex, h->format(YaraHighlighter::Token::Hex));
    QCOMPARE(comment, h->format(YaraHighlighter::Token::Comment));
    QCOMPARE(stringId, h->format(YaraHighlighter::Token::StringId));
    QCOMPARE(name, QTextCharFormat());
    const QList<QTextCharFormat> distinct { keyword, text, hex, comment, stringId };
    for (int i = 0; i < distinct.size(); ++i)
        for (int j = i + 1; j < distinct.size(); ++j)
            QVERIFY2(distinct[i] != distinct[j], qPrintable(QStringLiteral("formats %1 and %2").arg(i).arg(j)));

    // A block comment carries on to the next line, and ends there.
    const QTextBlock third = first.next().next();
    QCOMPARE(formatAt(third, 3), h->format(YaraHighlighter::Token::Comment));
    QCOMPARE(formatAt(third, int(third.text().indexOf(QLatin1String("condition")))),
             h->format(YaraHighlighter::Token::Keyword));
    QCOMPARE(formatAt(third, int(third.text().indexOf(QLatin1String("pe.")))), h->format(YaraHighlighter::Token::Module));

    // On a dark theme the colours turn light enough to read.
    QPalette dark = m_editor->palette();
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    dark.setColor(QPalette::Text, QColor(0xdd, 0xdd, 0xdd));
    const int base = dark.color(QPalette::Base).lightness();
    const auto contrast = [&](YaraHighlighter::Token t) { return h->format(t).foreground().color().lightness() - base; };
    QVERIFY(contrast(YaraHighlighter::Token::Keyword) < 80);
    m_editor->setPalette(dark);
    for (auto t : { YaraHighlighter::Token::Keyword, YaraHighlighter::Token::Text, YaraHighlighter::Token::Hex,
                    YaraHighlighter::Token::StringId, YaraHighlighter::Token::Regex })
        QVERIFY2(contrast(t) >= 80, qPrintable(QStringLiteral("token %1: %2").arg(int(t)).arg(contrast(t))));
    QCOMPARE(formatAt(doc->firstBlock(), 0), h->format(YaraHighlighter::Token::Keyword));
}

void TestRuleEditor::moreWarningsWithOneCall()
{
    m_editor->editor()->setPlainText(QString::fromUtf8(kRules));
    m_editor->checkNow();
    QVERIFY(waitChecked());
    const QString path = m_editor->effectivePath();
    m_editor->addWarnings(QStringLiteral("cost"),
                          { { RuleDiagnostic::Severity::Warning, path, 5, QStringLiteral("text_and_hex"),
                              QStringLiteral("short atom") } });
    QCOMPARE(m_editor->diagnosticsList()->count(RuleDiagnostic::Severity::Warning), 1);
    QCOMPARE(m_editor->editor()->lineMarks().at(5).first, CodeEditor::Mark::Warning);
    // Given again, it replaces; a new check of the text drops it until it is given for that text.
    m_editor->addWarnings(QStringLiteral("cost"),
                          { { RuleDiagnostic::Severity::Warning, path, 6, {}, QStringLiteral("a") },
                            { RuleDiagnostic::Severity::Warning, path, 6, {}, QStringLiteral("b") } });
    QCOMPARE(m_editor->diagnosticsList()->count(RuleDiagnostic::Severity::Warning), 2);
    QVERIFY(!m_editor->editor()->lineMarks().count(5));
    m_editor->checkNow();
    QVERIFY(waitChecked());
    QCOMPARE(m_editor->diagnosticsList()->count(RuleDiagnostic::Severity::Warning), 0);
}

// With HITSCOPE_RULEEDITOR_SCREENSHOT=FILE, saves the editor with an error and a test's result there.
void TestRuleEditor::screenshot()
{
    const QString path = m_tmp.filePath(QStringLiteral("screenshot/iocs.yar"));
    QVERIFY(TestUtil::writeFile(path, kRules + "\nrule unfinished\n{\n    strings:\n        $b = \"MZ\" nocase nocase\n"
                                               "    condition:\n        $b\n}\n"));
    QVERIFY(m_editor->openFile(path));
    QVERIFY(waitChecked());
    m_editor->editor()->goToLine(4);
    m_editor->setSelection({ QFile::encodeName(m_withMatch), QFile::encodeName(m_without) });
    QVERIFY(runTest());
    m_editor->resize(900, 760);
    QApplication::processEvents();
    const QPixmap shot = m_editor->grab();
    QVERIFY(!shot.isNull());
    const QString out = qEnvironmentVariable("HITSCOPE_RULEEDITOR_SCREENSHOT");
    if (!out.isEmpty())
        QVERIFY2(shot.save(out), qPrintable(out));
}

QTEST_MAIN(TestRuleEditor)
#include "tst_ruleeditor.moc"
