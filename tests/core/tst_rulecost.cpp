// SPDX-License-Identifier: GPL-3.0-or-later
// RuleCost: the warnings a rule author sees for strings that make a scan slow, each for the string that causes it
// and none for a string with a long distinctive atom; with and without the compiled catalog.
#include <QTemporaryDir>
#include <QTest>

#include "automata/patterncatalog.h"
#include "automata/rulecost.h"
#include "rules/ruleloader.h"
#include "testutil.h"

using namespace Hitscope;

Q_DECLARE_METATYPE(RuleCostWarning::Kind)

class TestRuleCost : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_file = 0;

    RuleSet load(const QByteArray &text, const char *suffix = ".yar")
    {
        const QString path = m_tmp.path() + QStringLiteral("/r%1%2").arg(m_file++).arg(QLatin1String(suffix));
        if (!TestUtil::writeFile(path, text))
            return {};
        return RuleLoader::loadFiles({ path });
    }

    static QString describe(const std::vector<RuleCostWarning> &w)
    {
        QStringList lines;
        for (const RuleCostWarning &x : w)
            lines << QStringLiteral("rule %1 pattern %2 kind %3: %4").arg(x.rule).arg(x.pattern).arg(int(x.kind)).arg(x.text);
        return lines.join(QLatin1Char('\n'));
    }

private Q_SLOTS:
    void oneWarningPerCause_data()
    {
        QTest::addColumn<QByteArray>("strings");
        QTest::addColumn<RuleCostWarning::Kind>("kind");
        QTest::addColumn<QString>("says");
        using K = RuleCostWarning::Kind;
        QTest::addRow("a one-byte hex string") << QByteArray("$s = { 41 }") << K::ShortAtom << QStringLiteral("1 byte (\"A\")");
        QTest::addRow("a two-byte text string") << QByteArray("$s = \"ab\"") << K::ShortAtom << QStringLiteral("2 bytes");
        QTest::addRow("three letters of either case")
            << QByteArray("$s = \"GET\" nocase") << K::ShortAtom << QStringLiteral("3 bytes (\"[Gg][Ee][Tt]\")");
        QTest::addRow("zeros") << QByteArray("$s = { 00 00 00 00 00 00 }") << K::CommonAtom
                               << QStringLiteral("\\x00\\x00");
        QTest::addRow("a regex of a single letter class") << QByteArray("$s = /[a-z]+/") << K::NoAtom
                                                          << QStringLiteral("walks every byte");
        QTest::addRow("a leading .*") << QByteArray("$s = /.*password=/") << K::LeadingRepeat
                                      << QStringLiteral("starts with an unbounded repeat of almost any byte ([0-]), like .*");
        QTest::addRow("a leading [^x]*") << QByteArray("$s = /[^\\n]*secret_token/") << K::LeadingRepeat
                                         << QStringLiteral("unbounded repeat");
        QTest::addRow("a long jump") << QByteArray("$s = { 4D 5A 90 00 [0-5000] 50 45 00 00 }") << K::LargeJump
                                     << QStringLiteral("a jump of up to 5000 bytes of almost any byte ([0-5000])");
        QTest::addRow("xor") << QByteArray("$s = \"This program cannot\" xor") << K::ManyForms
                             << QStringLiteral("256 forms (xor keys 0-255)");
        QTest::addRow("xor wide ascii") << QByteArray("$s = \"This program cannot\" xor wide ascii") << K::ManyForms
                                        << QStringLiteral("512 forms (xor keys 0-255, ascii and wide)");
    }

    void oneWarningPerCause()
    {
        QFETCH(QByteArray, strings);
        QFETCH(RuleCostWarning::Kind, kind);
        QFETCH(QString, says);
        const RuleSet rules = load("rule cheap { strings: $c = \"Distinctive-Marker-0042\" condition: $c }\n"
                                   "rule costly { strings: $x = \"Another-Marker-7777\" " + strings
                                   + " condition: any of them }\n");
        QCOMPARE(rules.rules.size(), size_t(2));
        const PatternCatalog catalog = PatternCatalog::compile(rules);
        for (const PatternCatalog *c : { static_cast<const PatternCatalog *>(nullptr), &catalog }) {
            const std::vector<RuleCostWarning> w = RuleCost::analyze(rules, c);
            const auto it = std::find_if(w.begin(), w.end(), [&](const RuleCostWarning &x) { return x.kind == kind; });
            QVERIFY2(it != w.end(), qPrintable(describe(w)));
            QCOMPARE(it->rule, 1);
            QCOMPARE(rules.patterns[size_t(it->pattern)].id, QStringLiteral("$s"));
            QVERIFY2(it->text.startsWith(QLatin1String("$s: ")) && it->text.contains(says), qPrintable(it->text));
            // The distinctive strings, $c and $x, are never blamed.
            for (const RuleCostWarning &x : w)
                QVERIFY2(rules.patterns[size_t(x.pattern)].id == QLatin1String("$s"), qPrintable(describe(w)));
            QCOMPARE(RuleCost::analyzeRule(rules, 0, c).size(), size_t(0));
        }
    }

    void listRulesAreNamedByTheirPattern()
    {
        const RuleSet rules = load("a\nDistinctive-Marker-0042\n", ".txt");
        QCOMPARE(rules.rules.size(), size_t(2));
        const std::vector<RuleCostWarning> w = RuleCost::analyze(rules);
        QCOMPARE(w.size(), size_t(1));
        QCOMPARE(w.front().rule, 0);
        QVERIFY2(w.front().text.startsWith(QLatin1String("pattern: its atom is 1 byte")), qPrintable(w.front().text));
    }

    // A rule editor calls it on every keystroke: a rule file of a few thousand strings must take milliseconds.
    void isCheapOnAThousandRules()
    {
        QByteArray text;
        for (int i = 0; i < 1000; ++i)
            text += "rule r" + QByteArray::number(i) + " { strings: $a = \"marker-" + QByteArray::number(i * 7919)
                + "\" nocase wide ascii $b = { 4D 5A [0-64] 50 45 ?? " + QByteArray::number(10 + i % 80)
                + " } $c = /https?:\\/\\/[a-z]{3,12}\\.example/ condition: any of them }\n";
        const RuleSet rules = load(text);
        QCOMPARE(rules.rules.size(), size_t(1000));
        QElapsedTimer timer;
        timer.start();
        const std::vector<RuleCostWarning> w = RuleCost::analyze(rules);
        QVERIFY2(timer.elapsed() < 2000, qPrintable(QStringLiteral("%1 ms").arg(timer.elapsed())));
        QVERIFY2(w.empty(), qPrintable(describe(w)));
    }
};

QTEST_GUILESS_MAIN(TestRuleCost)
#include "tst_rulecost.moc"
