// SPDX-License-Identifier: GPL-3.0-or-later
// Rules loaded from a text in memory (an editor's unsaved buffer) as if it were saved at its path: the path's
// folder for includes, its name and the text's lines in errors, and the file on disk left alone.
#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include "rules/ruleloader.h"
#include "rules/rulesources.h"
#include "rules/yaraloader.h"
#include "session/rulesetup.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

QStringList ruleNames(const RuleSet &set)
{
    QStringList names;
    for (const Rule &r : set.rules)
        names << r.name;
    return names;
}

QString describe(const std::vector<Rejection> &rejections)
{
    QStringList out;
    for (const Rejection &r : rejections)
        out << r.toString();
    return out.join(QLatin1Char('\n'));
}

} // namespace

class TestRuleSources : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void textReplacesTheFileOnDisk();
    void syntaxErrorNamesFileAndLine();
    void stringErrorNamesItsLine();
    void includeResolvesFromTheFolderOfThePath();
    void missingIncludeNamesTheIncludingLine();
    void includedFileMayBeATextToo();
    void listTextLoadsAsItsSuffixSays();
    void warningsCarryTheirRule();
    void ruleSetupCompilesTheText();
};

void TestRuleSources::textReplacesTheFileOnDisk()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("rules.yar"));
    QVERIFY(TestUtil::writeFile(path, "rule on_disk { condition: true }\n"));
    RuleSources sources;
    sources.setText(path, "rule in_memory { condition: true }\n");
    const RuleSet set = RuleLoader::loadFiles({ path }, {}, sources);
    QCOMPARE(ruleNames(set), QStringList { QStringLiteral("in_memory") });
    QCOMPARE(set.rules[0].sourceFile, path);
    // The same path without a text is the file.
    QCOMPARE(ruleNames(RuleLoader::loadFiles({ path })), QStringList { QStringLiteral("on_disk") });
}

void TestRuleSources::syntaxErrorNamesFileAndLine()
{
    QTemporaryDir dir;
    // Never written: a new file the user has not saved yet.
    const QString path = dir.filePath(QStringLiteral("new.yar"));
    RuleSet set;
    YaraLoader loader(set);
    loader.loadText(path, "rule good { condition: true }\n"
                          "\n"
                          "rule bad\n"
                          "{\n"
                          "    strings:\n"
                          "        $a = \"abc\"\n"
                          "    condition:\n"
                          "        $a and and\n"
                          "}\n"
                          "rule after { condition: good }\n");
    QCOMPARE(ruleNames(set), (QStringList { QStringLiteral("good"), QStringLiteral("after") }));
    QCOMPARE(set.rejections.size(), size_t(1));
    const Rejection &r = set.rejections[0];
    QCOMPARE(r.file, path);
    QCOMPARE(r.rule, QStringLiteral("bad"));
    QCOMPARE(r.line, 3);       // where the rule starts, as the CLI reports it
    QCOMPARE(r.errorLine, 8);  // where the error is, for the editor to mark
    QVERIFY2(r.reason.startsWith(QLatin1String("line 8: ")), qPrintable(r.reason));
}

void TestRuleSources::stringErrorNamesItsLine()
{
    RuleSet set;
    YaraLoader loader(set);
    loader.loadText(QDir::temp().filePath(QStringLiteral("unsaved.yar")), "rule bad\n"
                                                                          "{\n"
                                                                          "    strings:\n"
                                                                          "        $a = \"abc\"\n"
                                                                          "        $b = { 4D 5A [3-1] 00 }\n"
                                                                          "    condition:\n"
                                                                          "        any of them\n"
                                                                          "}\n");
    QCOMPARE(set.rejections.size(), size_t(1));
    QCOMPARE(set.rejections[0].line, 1);
    QCOMPARE(set.rejections[0].errorLine, 5);
}

void TestRuleSources::includeResolvesFromTheFolderOfThePath()
{
    QTemporaryDir dir;
    QVERIFY(TestUtil::writeFile(dir.filePath(QStringLiteral("sub/base.yar")), "rule base { condition: true }\n"));
    const QString path = dir.filePath(QStringLiteral("main.yar"));
    RuleSources sources;
    sources.setText(path, "include \"sub/base.yar\"\nrule uses_base { condition: base }\n");
    const RuleSet set = RuleLoader::loadFiles({ path }, {}, sources);
    QVERIFY2(set.rejections.empty(), qPrintable(describe(set.rejections)));
    QCOMPARE(ruleNames(set), (QStringList { QStringLiteral("base"), QStringLiteral("uses_base") }));
    QCOMPARE(QDir::cleanPath(set.rules[0].sourceFile), QDir::cleanPath(dir.filePath(QStringLiteral("sub/base.yar"))));
}

void TestRuleSources::missingIncludeNamesTheIncludingLine()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("main.yar"));
    RuleSources sources;
    sources.setText(path, "rule first { condition: true }\ninclude \"absent.yar\"\n");
    const RuleSet set = RuleLoader::loadFiles({ path }, {}, sources);
    QCOMPARE(set.rejections.size(), size_t(1));
    QCOMPARE(set.rejections[0].file, path);
    QCOMPARE(set.rejections[0].line, 2);
    QVERIFY2(set.rejections[0].reason.contains(QLatin1String("absent.yar")), qPrintable(set.rejections[0].reason));
}

void TestRuleSources::includedFileMayBeATextToo()
{
    QTemporaryDir dir;
    const QString main = dir.filePath(QStringLiteral("main.yar"));
    const QString inc = dir.filePath(QStringLiteral("inc.yar"));
    QVERIFY(TestUtil::writeFile(inc, "rule saved_version { condition: true }\n"));
    RuleSources sources;
    sources.setText(main, "include \"inc.yar\"\nrule m { condition: edited_version }\n");
    sources.setText(inc, "rule edited_version { condition: true }\n");
    const RuleSet set = RuleLoader::loadFiles({ main }, {}, sources);
    QVERIFY2(set.rejections.empty(), qPrintable(describe(set.rejections)));
    QCOMPARE(ruleNames(set), (QStringList { QStringLiteral("edited_version"), QStringLiteral("m") }));

    // A text that includes itself is a cycle even though no such file exists.
    RuleSources loop;
    const QString ghost = dir.filePath(QStringLiteral("ghost.yar"));
    loop.setText(ghost, "include \"ghost.yar\"\nrule g { condition: true }\n");
    const RuleSet looped = RuleLoader::loadFiles({ ghost }, {}, loop);
    QCOMPARE(looped.rejections.size(), size_t(1));
    QVERIFY2(looped.rejections[0].reason.contains(QLatin1String("circular")), qPrintable(looped.rejections[0].reason));
}

void TestRuleSources::listTextLoadsAsItsSuffixSays()
{
    QTemporaryDir dir;
    const QString txt = dir.filePath(QStringLiteral("iocs.txt"));
    const QString tsv = dir.filePath(QStringLiteral("patterns.tsv"));
    RuleSources sources;
    sources.setText(txt, "evil.example\nhex: 4D 5Q\n");
    sources.setText(tsv, "i\tdomain\t[a-z]+\\.example\n");
    const RuleSet set = RuleLoader::loadFiles({ txt, tsv }, {}, sources);
    QCOMPARE(ruleNames(set), (QStringList { QStringLiteral("iocs:1"), QStringLiteral("domain") }));
    QCOMPARE(set.rejections.size(), size_t(1));
    QCOMPARE(set.rejections[0].file, txt);
    QCOMPARE(set.rejections[0].line, 2);
}

void TestRuleSources::warningsCarryTheirRule()
{
    const QString path = QDir::temp().filePath(QStringLiteral("warned.yar"));
    RuleSources sources;
    sources.setText(path, "rule quiet { condition: true }\n"
                          "rule slow\n"
                          "{\n"
                          "    strings:\n"
                          "        $a = /abc.*def/\n"
                          "    condition:\n"
                          "        $a\n"
                          "}\n");
    const RuleSet set = RuleLoader::loadFiles({ path }, {}, sources);
    QVERIFY2(set.rejections.empty(), qPrintable(describe(set.rejections)));
    QCOMPARE(set.warnings.size(), size_t(1));
    QCOMPARE(set.warnings[0].file, path);
    QCOMPARE(set.warnings[0].line, 2);
    QCOMPARE(set.warnings[0].rule, QStringLiteral("slow"));
    // The note yara prints says the same.
    QCOMPARE(set.notes.size(), 1);
    QVERIFY(set.notes[0].contains(set.warnings[0].message));
}

void TestRuleSources::ruleSetupCompilesTheText()
{
    QTemporaryDir dir;
    RuleSetup::Options options;
    options.files = { dir.filePath(QStringLiteral("scan.yar")) };
    options.sources.setText(options.files[0], "rule r { strings: $a = \"needle\" condition: $a }\n");
    options.groupingCache = false;
    const RuleSetup setup = RuleSetup::run(options);
    QVERIFY(setup.rejections.empty());
    QVERIFY(setup.usable());
    QCOMPARE(ruleNames(setup.rules), QStringList { QStringLiteral("r") });
    // Nothing was written where the rules are said to be.
    QVERIFY(!QFile::exists(options.files[0]));
}

QTEST_GUILESS_MAIN(TestRuleSources)
#include "tst_rulesources.moc"
