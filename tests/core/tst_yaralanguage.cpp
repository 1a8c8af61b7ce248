// SPDX-License-Identifier: GPL-3.0-or-later
// The YARA 4.2 language construct by construct, against the yara binary (the oracle): every rule below is one
// yara accepts, and hitscope-cli must accept it and print yara's RULE PATH and -s lines on both engines; every
// rule of refusedAsYara is one yara refuses, and Hitscope must refuse it alone, with a reason, while the rest of
// its file runs.
#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include "rules/ruleloader.h"
#include "testutil.h"
#include "testutilyara.h"

using namespace Hitscope;
using namespace TestUtil;

namespace {

struct Construct
{
    const char *name;
    QByteArray rule; ///< one rule, named `name` by the table
    QByteArray data;
};

const QByteArray kStandard("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");

/// `text` base64-encoded with `alphabet` instead of the standard one.
QByteArray base64With(const QByteArray &text, const QByteArray &alphabet)
{
    QByteArray b = text.toBase64(QByteArray::OmitTrailingEquals);
    for (char &c : b)
        c = alphabet[kStandard.indexOf(c)];
    return b;
}

QByteArray xored(const QByteArray &text, int key)
{
    QByteArray out(text.size(), '\0');
    for (qsizetype i = 0; i < text.size(); ++i)
        out[i] = char(uint8_t(text[i]) ^ key);
    return out;
}

/// The -d definitions every run gets (both tools), with one external of each type.
const QStringList &defines()
{
    static const QStringList d{ QStringLiteral("-d"), QStringLiteral("ext_int=42"),   QStringLiteral("-d"),
                                QStringLiteral("ext_neg=-7"), QStringLiteral("-d"), QStringLiteral("ext_float=2.5"),
                                QStringLiteral("-d"), QStringLiteral("ext_true=true"), QStringLiteral("-d"),
                                QStringLiteral("ext_false=false"), QStringLiteral("-d"),
                                QStringLiteral("ext_str=Hello World.exe") };
    return d;
}

std::vector<Construct> constructs()
{
    const QByteArray reversed = [] {
        QByteArray r = kStandard;
        std::reverse(r.begin(), r.end());
        return r;
    }();
    const QByteArray mz = QByteArray("MZ") + QByteArray(400, '\0') + "tail";
    return {
        // text strings and their modifiers
        { "text_nocase", R"(strings: $a = "HeLLo" nocase condition: #a == 2)", "hello HELLO help" },
        { "text_wide_ascii", R"(strings: $a = "abc" wide ascii condition: $a)", "abc " + widen("abc") },
        { "text_fullword", R"(strings: $a = "cat" fullword condition: $a)", "concat cat cats (cat)" },
        { "text_private", R"(strings: $a = "one" private $b = "two" condition: $a and $b)", "one two" },
        { "text_escapes", R"(strings: $a = "\t\r\n\"\\\x41" condition: $a)", "x\t\r\n\"\\Ay" },
        { "xor_all", R"(strings: $a = "secret" xor condition: $a)",
          xored("..secret..", 0x5a) },
        { "xor_range_wide", R"(strings: $a = "key" xor(1-3) wide condition: $a)",
          "zz" + xored(widen("key"), 2) },
        { "b64_text", R"(strings: $a = "This program cannot" base64 condition: $a)",
          "x" + QByteArray("AThis program cannot be run").toBase64() + "y" },
        { "b64wide_text", R"(strings: $a = "powershell -enc" base64wide condition: $a)",
          widen(QByteArray("xxpowershell -enc").toBase64()) },
        { "base64_wide_ascii", R"(strings: $a = "cmd.exe" base64 wide ascii condition: #a >= 2)",
          QByteArray("cmd.exe /c").toBase64() + " " + widen("cmd.exe /c").toBase64() },
        { "base64_alphabet",
          QByteArray(R"(strings: $a = "hidden text" base64(")") + reversed + R"(") condition: $a)",
          base64With("the hidden text", reversed) },
        // hex strings
        { "hex_jumps", R"(strings: $a = { 4D 5A [2-4] 90 ?0 (01 | 02 03) } condition: $a)",
          QByteArray::fromHex("004d5a00000090a002037f") },
        { "hex_long_jump", R"(strings: $a = { 4D 5A [300-] 74 61 69 6C } condition: $a)", mz },
        { "hex_nibbles", R"(strings: $a = { 4? ?5 [1] 4C } condition: $a)", "ABEHLO" },
        // regexes
        { "regex_flags", R"(strings: $a = /a.c/is condition: #a == 2)", "A\nC abc" },
        { "regex_classes", R"(strings: $a = /[0-9a-f]{4,}\s\w+/ condition: $a)", "id: beef01 word" },
        { "regex_wide_boundary", R"(strings: $a = /\babc\b/ wide condition: $a)", widen("xabc abc.") },
        { "regex_empty_matches", R"(strings: $a = /(a+|b)*/ condition: #a == 4)", "xab ab" },
        { "regex_long_repeat", R"(strings: $a = /MZ.{300,}t/s condition: !a[1] > 300)", mz },
        // conditions
        { "float_arithmetic", R"(condition: 1.5 * 2 == 3 and 7 \ 2.0 == 3.5 and -1.5 < 0 and filesize * 1.0 > 2.5)",
          "four" },
        { "string_operators",
          R"(condition: "Hello" contains "ell" and "Hello" icontains "ELL" and "abc" startswith "ab" and
             "ABC" istartswith "ab" and "abc" endswith "bc" and "ABC" iendswith "bc" and "AbC" iequals "aBc" and
             "abc" != "abd" and "abc" < "abd" and "b" > "abc")",
          "x" },
        { "matches_operator", R"(condition: "Hello World.exe" matches /\.EXE$/i and not ("abc" matches /^b/))", "x" },
        { "externals",
          R"(condition: ext_int == 42 and ext_neg < 0 and ext_float > 2.0 and ext_true and not ext_false and
             ext_str endswith ".exe" and ext_str matches /world/i and ext_int + ext_true == 43)",
          "x" },
        { "defined_operator", R"(strings: $a = "z" condition: defined @a[1] or not defined (1 \ (filesize - filesize)))",
          "y" },
        { "none_of", R"(strings: $a = "a1" $b = "b2" condition: none of them)", "c3" },
        { "percent_of", R"(strings: $a = "p1" $b = "p2" $c = "p3" $d = "p4" condition: 50% of them and not 80% of them)",
          "p1 p3" },
        { "of_in_range", R"(strings: $a = "r1" $b = "r2" condition: all of them in (0..10) and #a in (0..3) == 1)",
          "r1 r2 r1 r2" },
        { "offsets_lengths", R"(strings: $a = /x+/ condition: @a[4] == 5 and !a[1] == 3 and !a[2] == 2 and @a == 0)", "xxx  xx" },
        { "integer_functions", R"(condition: uint16be(0) == 0x4142 and int8(2) == -1 and uint32(0) & 0xff == 0x41)",
          QByteArray::fromHex("4142ff00") },
        { "numbers", R"(condition: 0o17 == 15 and 0x10 == 16 and 1KB == 1024 and 1MB \ 1KB == 1024 and -(-3) == 3)",
          "x" },
        { "for_loops",
          R"(strings: $a = "q" condition: for all i in (1..#a) : (@a[i] % 2 == 0) and for any j in (1, 3, 5) : (j == 3)
             and for 1 of ($a) : ($ at 2) and for all of them : (# == 2))",
          "q q" },
        { "rule_references", R"(condition: text_nocase and 1 of (text_*) and not xor_all)", "hello HELLO" },
        { "rule_wildcard_itself", R"(condition: not 1 of (rule_wildcard_*))", "x" },
    };
}

struct Refused
{
    const char *name;
    QByteArray rule;   ///< the whole rule
    const char *reason; ///< part of Hitscope's reason
};

std::vector<Refused> refusals()
{
    return {
        { "duplicated_modifier", R"(rule r { strings: $a = "ab" xor xor condition: $a })", "duplicated modifier" },
        { "duplicated_tag", R"(rule r : t1 t1 { condition: true })", "duplicated tag" },
        { "duplicated_string", R"(rule r { strings: $a = "a" $a = "b" condition: $a })", "duplicated string identifier" },
        { "zero_jump", R"(rule r { strings: $a = { 01 [0] 02 } condition: $a })", "invalid jump length" },
        { "zero_repeat", R"(rule r { strings: $a = /x{0}/ condition: $a })", "bad repeat interval" },
        { "empty_first_alternative", R"(rule r { strings: $a = /(|abc)ef/ condition: $a })", "syntax error" },
        { "xor_nocase", R"(rule r { strings: $a = "ab" xor nocase condition: $a })", "xor nocase" },
        { "base64_fullword", R"(rule r { strings: $a = "abcd" base64 fullword condition: $a })", "base64 fullword" },
        { "short_alphabet", R"(rule r { strings: $a = "abcd" base64("abc") condition: $a })", "must be 64" },
        { "xor_range", R"(rule r { strings: $a = "ab" xor(3-1) condition: $a })", "xor lower bound exceeds" },
        { "empty_string", R"(rule r { strings: $a = "" condition: $a })", "empty string" },
        { "unreferenced_string", R"(rule r { strings: $a = "a" $b = "b" condition: $a })", "unreferenced string" },
        { "undefined_string", R"(rule r { strings: $a = "a" condition: $b })", "undefined string identifier" },
        { "undefined_identifier", R"(rule r { condition: filename == "x" })", "-d filename=VALUE" },
        { "module_not_imported", R"(rule r { condition: pe.is_dll() })", "undefined identifier \"pe\"" },
        { "unknown_module", "import \"nosuchmodule\"\nrule r { condition: nosuchmodule.x }", "undefined identifier" },
        { "division_by_zero", R"(rule r { condition: 1 \ 0 == 1 })", "division by zero" },
        { "integer_overflow", R"(rule r { condition: 9223372036854775807 + 1 > 0 })", "integer overflow" },
        { "literal_overflow", R"(rule r { condition: 99999999999999999999 > 0 })", "integer overflow" },
        { "type_mismatch", R"(rule r { condition: "a" == 1 })", "type mismatch" },
        { "wrong_type", R"(rule r { condition: 1.5 | 1 == 1 })", "wrong type" },
        { "string_arithmetic", R"(rule r { condition: "a" + "b" == "ab" })", "strings don't support" },
        { "percentage", R"(rule r { strings: $a = "a" condition: 0% of them })", "percentage must be" },
        { "anonymous_outside_loop", R"(rule r { strings: $ = "a" condition: $ })", "anonymous string" },
        { "nested_for_of", R"(rule r { strings: $a = "a" condition: for any of them : (for any of them : ($)) })",
          "nested" },
        { "loop_depth",
          R"(rule r { condition: for any a in (1..2) : (for any b in (1..2) : (for any c in (1..2) :
             (for any d in (1..2) : (for any e in (1..2) : (true))))) })",
          "loop nesting limit" },
        { "duplicated_rule", "rule r { condition: true }\nrule r { condition: false }", "duplicated identifier" },
        { "syntax_error", R"(rule r { condition: true and })", "syntax error" },
        { "unterminated_string", "rule r { strings: $a = \"abc\n condition: $a }", "unterminated string" },
        { "illegal_escape", R"(rule r { strings: $a = "a\q" condition: $a })", "illegal escape" },
        { "mixed_greediness", R"(rule r { strings: $a = /a.*b.*?c/ condition: $a })", "greedy and ungreedy" },
        { "bad_hex", R"(rule r { strings: $a = { 4D 5 } condition: $a })", "hex string" },
    };
}

} // namespace

class TestYaraLanguage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void constructsEqualYara_data();
    void constructsEqualYara();
    void refusedAsYara_data();
    void refusedAsYara();
    void commentsOnlyFile();
    void yaraFileOfAnotherSuffix();
    void commentedRulesAfterAnError();
    void positionalRuleFile();
    void nestedRepeatsBounded();
    void warningsAsYara();

private:
    QTemporaryDir m_tmp;
    QString m_rules; ///< every construct as one rule file
    QString m_corpus; ///< one data file per construct
};

void TestYaraLanguage::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    QByteArray rules;
    m_corpus = m_tmp.filePath(QStringLiteral("corpus"));
    for (const Construct &c : constructs()) {
        rules += "rule " + QByteArray(c.name) + " {\n" + c.rule + "\n}\n";
        QVERIFY(writeFile(m_corpus + QLatin1Char('/') + QLatin1String(c.name), c.data));
    }
    m_rules = m_tmp.filePath(QStringLiteral("constructs.yar"));
    QVERIFY(writeFile(m_rules, rules));
}

void TestYaraLanguage::constructsEqualYara_data()
{
    QTest::addColumn<QString>("engine");
    QTest::newRow("cpu") << QStringLiteral("cpu");
    QTest::newRow("gpu") << QStringLiteral("gpu");
}

void TestYaraLanguage::constructsEqualYara()
{
    QFETCH(QString, engine);
    QByteArray yaraErr;
    const QByteArray yara = runYara(defines() + QStringList{ QStringLiteral("-s"), m_rules, m_corpus }, &yaraErr);
    QVERIFY2(!yaraErr.contains("error"), yaraErr.constData());
    const YaraReport expected = parseYaraReport(yara);
    // Every construct matches its own file in yara: a construct that matches nothing would test nothing.
    for (const Construct &c : constructs()) {
        const QByteArray path = m_corpus.toUtf8() + "/" + c.name;
        QVERIFY2(expected.count({ QByteArray(c.name), path }), c.name);
    }
    QByteArray ours, err;
    const int rc = runCli(QStringList{ QStringLiteral("scan"), QStringLiteral("--engine"), engine, QStringLiteral("-s") }
                              + defines() + QStringList{ QStringLiteral("-r"), m_rules, m_corpus },
                          &ours, &err);
    QVERIFY2(!err.contains("rule rejected"), err.constData());
    QVERIFY2(rc == 0, err.constData());
    const YaraReport got = parseYaraReport(ours);
    QVERIFY2(expected == got, qPrintable(describeReportDifference(expected, got)));
}

void TestYaraLanguage::refusedAsYara_data()
{
    QTest::addColumn<QByteArray>("rule");
    QTest::addColumn<QString>("reason");
    for (const Refused &r : refusals())
        QTest::newRow(r.name) << r.rule << QString::fromLatin1(r.reason);
}

void TestYaraLanguage::refusedAsYara()
{
    QFETCH(QByteArray, rule);
    QFETCH(QString, reason);
    const QString alone = m_tmp.filePath(QStringLiteral("refused/%1.yar").arg(QLatin1String(QTest::currentDataTag())));
    QVERIFY(writeFile(alone, rule + "\n"));
    QByteArray yaraErr;
    runYara({ alone, m_corpus }, &yaraErr);
    QVERIFY2(yaraErr.contains("error"), "yara accepts it: the case tests nothing");

    // Between two good rules: Hitscope refuses the bad one alone.
    const QString yar = m_tmp.filePath(QStringLiteral("refused/%1-mixed.yar").arg(QLatin1String(QTest::currentDataTag())));
    QVERIFY(writeFile(yar, "rule before { condition: true }\n" + rule + "\nrule after { condition: true }\n"));
    const RuleSet set = RuleLoader::loadFiles({ yar });
    QStringList accepted;
    for (const Rule &r : set.rules)
        accepted << r.name;
    QVERIFY2(accepted.contains(QStringLiteral("before")) && accepted.contains(QStringLiteral("after")),
             qPrintable(accepted.join(QLatin1Char(' '))));
    QVERIFY2(!set.rejections.empty(), "nothing refused");
    bool found = false;
    for (const Rejection &r : set.rejections) {
        QCOMPARE(r.file, yar);
        QVERIFY2(r.line >= 2, qPrintable(r.toString()));
        found = found || r.reason.contains(reason);
    }
    QVERIFY2(found, qPrintable(set.rejections.front().toString()));
}

void TestYaraLanguage::commentsOnlyFile()
{
    const QString rules = m_tmp.filePath(QStringLiteral("comments.yar"));
    QVERIFY(writeFile(rules, "// nothing here yet\n/* rule a { condition: true } */\n"));
    QByteArray yaraErr;
    runYara({ rules, m_corpus }, &yaraErr);
    QVERIFY(yaraErr.isEmpty());
    QByteArray out, err;
    QCOMPARE(runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-r"),
                      rules, m_corpus },
                    &out, &err),
             0);
    QVERIFY(out.isEmpty());
}

void TestYaraLanguage::yaraFileOfAnotherSuffix()
{
    // InQuest's collection names its YARA files .rule: they are YARA, not a list of literals.
    const QString rules = m_tmp.filePath(QStringLiteral("suffix.rule"));
    QVERIFY(writeFile(rules, "rule by_content { strings: $a = \"HELLO\" nocase condition: $a }\n"));
    QByteArray out, err;
    QCOMPARE(runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-r"),
                      rules, m_corpus + QStringLiteral("/text_nocase") },
                    &out, &err),
             0);
    QCOMPARE(out, "by_content " + m_corpus.toUtf8() + "/text_nocase\n");
    QVERIFY2(err.contains("read as YARA rules"), err.constData());
}

void TestYaraLanguage::commentedRulesAfterAnError()
{
    // A bad rule is skipped to the next rule keyword the lexer sees: rules inside comments stay comments.
    const QString rules = m_tmp.filePath(QStringLiteral("commented.yar"));
    QVERIFY(writeFile(rules, "rule bad { condition: and }\n/*\nrule hidden { condition: true }\n*/\n"
                             "// rule hidden2 { condition: true }\nrule good { condition: true }\n"));
    const RuleSet set = RuleLoader::loadFiles({ rules });
    QCOMPARE(set.rules.size(), size_t(1));
    QCOMPARE(set.rules[0].name, QStringLiteral("good"));
    QCOMPARE(set.rejections.size(), size_t(1));
    QCOMPARE(set.rejections[0].rule, QStringLiteral("bad"));
    QCOMPARE(set.rejections[0].line, 1);
}

void TestYaraLanguage::positionalRuleFile()
{
    // yara's own form: the rule file first, then what to scan.
    QByteArray out, err;
    QCOMPARE(runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-d"),
                      QStringLiteral("ext_int=42"), m_rules, m_corpus + QStringLiteral("/none_of") },
                    &out, &err),
             2); // the rules that need the other externals are rejected, and say so
    QVERIFY2(out.contains(QByteArray("none_of " + m_corpus.toUtf8() + "/none_of\n")), out.constData());
    QVERIFY2(err.contains("define it with -d ext_"), err.constData());
}

void TestYaraLanguage::nestedRepeatsBounded()
{
    // Found by the fuzzer: nested counted repeats multiply when the matcher writes them out (10^9 states here).
    // yara takes them; Hitscope refuses them alone, with the reason, instead of exhausting memory.
    const QString rules = m_tmp.filePath(QStringLiteral("nested.yar"));
    QVERIFY(writeFile(rules, "rule s { strings: $a = /((a{1000}){1000}){1000}/ condition: $a }\n"
                             "rule c { condition: \"x\" matches /((a{1000}){1000}){1000}/ }\n"
                             "rule ok { strings: $a = /(a{10}){10}/ condition: $a }\n"));
    const RuleSet set = RuleLoader::loadFiles({ rules });
    QCOMPARE(set.rules.size(), size_t(1));
    QCOMPARE(set.rules[0].name, QStringLiteral("ok"));
    QCOMPARE(set.rejections.size(), size_t(2));
    for (const Rejection &r : set.rejections)
        QVERIFY2(r.reason.contains(QLatin1String("too large")), qPrintable(r.toString()));
}

void TestYaraLanguage::warningsAsYara()
{
    // What yara warns of is said, and the rule runs.
    const QString rules = m_tmp.filePath(QStringLiteral("warned.yar"));
    QVERIFY(writeFile(rules, "rule warned { strings: $a = /no.*ne/ condition: $a and \"lit\" }\n"));
    QByteArray yaraErr;
    const QByteArray yara = runYara({ rules, m_corpus + QStringLiteral("/none_of") }, &yaraErr);
    QVERIFY2(yaraErr.contains("consider using") && yaraErr.contains("literal string"), yaraErr.constData());
    QByteArray out, err;
    QCOMPARE(runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-r"),
                      rules, m_corpus + QStringLiteral("/none_of") },
                    &out, &err),
             0);
    QCOMPARE(out, yara);
    QVERIFY2(err.contains(QByteArray("warning: " + rules.toUtf8() + ":1: rule warned: $a contains .*")), err.constData());
    QVERIFY2(err.contains("using literal string \"lit\" in a boolean operation"), err.constData());
    // -w: no warnings, as yara's -w.
    QCOMPARE(runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-w"),
                      QStringLiteral("-r"), rules, m_corpus + QStringLiteral("/none_of") },
                    &out, &err),
             0);
    QVERIFY2(err.isEmpty(), err.constData());
}

QTEST_GUILESS_MAIN(TestYaraLanguage)
#include "tst_yaralanguage.moc"
