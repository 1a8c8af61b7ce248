// SPDX-License-Identifier: GPL-3.0-or-later
// YARA rule files end to end: hitscope-cli's `RULE PATH` and `-s` lines against yara's (Debian's yara is the
// oracle), on seeded random corpora and rule sets, on the CPU and the GPU engine; and the loader's
// rejections, one rule at a time.
#include <QDir>
#include <QProcess>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <map>
#include <set>

#include "rules/ruleloader.h"
#include "testutil.h"
#include "testutilyara.h"

using namespace TestUtil;
using namespace Hitscope;

namespace {

/// Words planted in the corpus and used by the rules.
const char *const kWords[] = { "alpha", "Bravo", "charlie7", "delta_x", "echo", "foxtrot", "golf", "hotel99",
                               "india", "juliet", "kilo", "lima-", "mike", "nov", "oscar" };
constexpr int kWordCount = int(sizeof(kWords) / sizeof(kWords[0]));

/// A file of random text and bytes with words planted as ASCII, wide, other case, xored, touching letters
/// or not, and hex sequences with variable gaps.
QByteArray makeFile(QRandomGenerator &rng)
{
    const int size = int(rng.bounded(12000));
    QByteArray data;
    while (data.size() < size) {
        switch (rng.bounded(9)) {
        case 0:
        case 1: {
            const int n = int(rng.bounded(1, 40));
            for (int i = 0; i < n; ++i)
                data += char(rng.bounded(2) ? rng.bounded(' ', '~' + 1) : rng.bounded(256));
            break;
        }
        case 2:
            data += QByteArray(kWords[rng.bounded(kWordCount)]);
            break;
        case 3:
            data += widen(kWords[rng.bounded(kWordCount)]);
            break;
        case 4:
            data += QByteArray(kWords[rng.bounded(kWordCount)]).toUpper();
            break;
        case 5: {
            QByteArray w(kWords[rng.bounded(kWordCount)]);
            const char key = char(rng.bounded(256));
            for (char &c : w)
                c ^= key;
            data += w;
            break;
        }
        case 6: {
            // Hex-string material: 4D 5A, a gap, then one of two tails.
            data += QByteArray::fromHex("4d5a");
            for (int i = int(rng.bounded(7)); i > 0; --i)
                data += char(rng.bounded(256));
            data += QByteArray::fromHex(rng.bounded(2) ? "9000" : "90ff01");
            break;
        }
        case 7:
            data += ' ';
            data += QByteArray(kWords[rng.bounded(kWordCount)]);
            data += QByteArray::number(rng.bounded(1000));
            data += rng.bounded(2) ? "@example.com " : "\n";
            break;
        default:
            data += QByteArray(kWords[rng.bounded(kWordCount)]) + kWords[rng.bounded(kWordCount)];
        }
    }
    return data;
}

QByteArray randomString(QRandomGenerator &rng)
{
    const QByteArray word(kWords[rng.bounded(kWordCount)]);
    const int kind = int(rng.bounded(10));
    if (kind < 5) {
        QByteArray s = "\"" + word + "\"";
        const bool xorMod = rng.bounded(5) == 0;
        if (rng.bounded(3) == 0)
            s += " wide";
        if (rng.bounded(3) == 0)
            s += " ascii";
        if (!xorMod && rng.bounded(3) == 0)
            s += " nocase";
        if (rng.bounded(4) == 0)
            s += " fullword";
        if (xorMod) {
            const int k = int(rng.bounded(3));
            s += k == 0 ? " xor" : k == 1 ? " xor(0x20)" : " xor(1-200)";
        }
        if (rng.bounded(8) == 0)
            s += " private";
        return s;
    }
    if (kind < 7) {
        static const char *const hex[] = {
            "{ 4D 5A }", "{ 4D 5A ?? }", "{ 4D 5A [0-6] 90 }", "{ 4D 5A [2-4] 90 (00 | FF 01) }",
            "{ 4D 5? [1-3] 9? }", "{ 4D 5A [0-6] ( 90 FF | 90 ) }", "{ 4D [1] ?A }", "{ 6? 6? 6? 6? }",
            "{ 4D 5A [300-] 90 }", "{ 4D 5A [0-250] 90 00 }",
        };
        return hex[rng.bounded(int(sizeof(hex) / sizeof(hex[0])))];
    }
    static const char *const re[] = {
        "/%1[0-9]+/", "/%1[0-9]*/", "/[a-z]+%1/", "/%1.{0,8}%1/", "/\\b%1\\b/", "/[a-z0-9]{2,8}@example\\.com/",
        "/%1[0-9]+?/", "/(%1|echo)[0-9]?/", "/%1/i", "/[A-Z]{3,}/", "/%1\\d{2}/ wide ascii", "/[a-z]+[0-9]+/",
        "/%1(\\n|[0-9])/s", "/%1.*?%1/",
    };
    QByteArray r = QByteArray(re[rng.bounded(int(sizeof(re) / sizeof(re[0])))]).replace("%1", word.left(4));
    if (rng.bounded(5) == 0)
        r += " fullword";
    return r;
}

QByteArray randomCondition(QRandomGenerator &rng, int strings)
{
    const auto id = [&] { return QByteArray("$s" + QByteArray::number(rng.bounded(strings))); };
    switch (rng.bounded(9)) {
    case 0:
        return "all of them";
    case 1:
        return id() + " and not " + id();
    case 2:
        return "#" + id().mid(1) + " > 1";
    case 3:
        return id() + " in (0..2000)";
    case 4:
        return "2 of them";
    case 5:
        return "any of them and filesize < 8000";
    case 6:
        return "for any i in (1..#" + id().mid(1) + ") : (@" + id().mid(1) + "[i] > 100)";
    default:
        return "any of them";
    }
}

QByteArray randomRules(QRandomGenerator &rng, int count)
{
    QByteArray text;
    for (int r = 0; r < count; ++r) {
        const int strings = int(rng.bounded(1, 4));
        text += "rule r" + QByteArray::number(r) + " {\n strings:\n";
        for (int s = 0; s < strings; ++s)
            text += "  $s" + QByteArray::number(s) + " = " + randomString(rng) + "\n";
        // YARA refuses rules with strings the condition does not use: `them` uses them all.
        text += " condition:\n  (" + randomCondition(rng, strings) + (rng.bounded(2) ? ") or all of them" : ") and any of them")
            + "\n}\n";
    }
    return text;
}

} // namespace

class TestYara : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void randomRulesEqualYara_data();
    void randomRulesEqualYara();
    void handWrittenRulesEqualYara();
    void manySpacedMatchesOfOneString();
    void countsDecidedByTheFirstMatches();
    void regexDialectEqualsYara();
    void tooManyMatchesCappedAsYara();
    void linksFollowedWithLAsYara();
    void demoRulesEqualYara();
    void badRulesAreRejectedAlone();
    void manyRejectionsInALargeFile();
    void jsonHasMatchRecords();

private:
    void compare(const QString &rules, const QString &dir, const QStringList &extra);
    QTemporaryDir m_tmp;
};

void TestYara::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    // For looking at a failing case's corpus and rules afterwards.
    if (qEnvironmentVariableIsSet("HITSCOPE_KEEP_TEST_FILES"))
        m_tmp.setAutoRemove(false);
    QVERIFY2(!QStandardPaths::findExecutable(QStringLiteral("yara")).isEmpty(),
             "yara (the oracle) is not installed: run packaging/setup.sh");
}

void TestYara::compare(const QString &rules, const QString &dir, const QStringList &extra)
{
    QByteArray yaraErr;
    const QByteArray yara = runYara({ QStringLiteral("-s"), QStringLiteral("-r"), rules, dir }, &yaraErr);
    QByteArray ours, err;
    QStringList args { QStringLiteral("scan"), QStringLiteral("-s"), QStringLiteral("-r"), rules };
    args += extra;
    args += dir;
    const int rc = runCli(args, &ours, &err);
    QVERIFY2(rc == 0 || rc == 2, err.constData());
    const YaraReport expected = parseYaraReport(yara);
    const YaraReport got = parseYaraReport(ours);
    QVERIFY2(!expected.empty(), qPrintable(QStringLiteral("yara matched nothing: the case tests nothing; yara said: ")
                                           + QString::fromUtf8(yaraErr)));
    QVERIFY2(expected == got,
             qPrintable(describeReportDifference(expected, got) + QStringLiteral("\nstderr: ") + QString::fromUtf8(err)));

    // Without -s only the rules are printed, and strings that conditions only count are counted, not listed:
    // the same `RULE PATH` lines.
    QList<QByteArray> yaraRules = runYara({ QStringLiteral("-r"), rules, dir }, &yaraErr).split('\n');
    args.removeOne(QStringLiteral("-s"));
    QByteArray oursRules;
    QVERIFY2(runCli(args, &oursRules, &err) != 1, err.constData());
    QList<QByteArray> gotRules = oursRules.split('\n');
    std::sort(yaraRules.begin(), yaraRules.end());
    std::sort(gotRules.begin(), gotRules.end());
    QCOMPARE(gotRules, yaraRules);
}

void TestYara::randomRulesEqualYara_data()
{
    QTest::addColumn<quint32>("seed");
    QTest::addColumn<QStringList>("extra");
    for (quint32 seed = 1; seed <= 12; ++seed)
        QTest::addRow("cpu seed %u", seed) << seed << QStringList { QStringLiteral("--engine"), QStringLiteral("cpu") };
    // Small segments and batches: matches across their boundaries, files in several chunks.
    for (quint32 seed = 13; seed <= 16; ++seed)
        QTest::addRow("cpu small batches seed %u", seed)
            << seed
            << QStringList { QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("--batch-bytes"),
                             QStringLiteral("4096"), QStringLiteral("--segment-bytes"), QStringLiteral("512") };
    for (quint32 seed = 17; seed <= 20; ++seed)
        QTest::addRow("gpu seed %u", seed) << seed << QStringList { QStringLiteral("--engine"), QStringLiteral("gpu") };
}

void TestYara::randomRulesEqualYara()
{
    QFETCH(quint32, seed);
    QFETCH(QStringList, extra);
    QRandomGenerator rng(seed);
    const QString dir = m_tmp.filePath(QStringLiteral("corpus%1").arg(seed));
    for (int f = 0; f < 30; ++f)
        QVERIFY(writeFile(dir + QStringLiteral("/f%1.bin").arg(f), makeFile(rng)));
    QVERIFY(writeFile(dir + QStringLiteral("/empty"), {}));
    const QString rules = m_tmp.filePath(QStringLiteral("rules%1.yar").arg(seed));
    QVERIFY(writeFile(rules, randomRules(rng, 40)));
    compare(rules, dir, extra);
}

void TestYara::handWrittenRulesEqualYara()
{
    const QString dir = m_tmp.filePath(QStringLiteral("hand"));
    QVERIFY(writeFile(dir + QStringLiteral("/a.txt"), "MZ\x90\x00 hello world, Hello WORLD helloworld xhello\n"
                                                      "user42@example.com aaaa 0123 abcabcabc MZ\n"));
    QVERIFY(writeFile(dir + QStringLiteral("/b.bin"), QByteArray("MZ") + QByteArray(70, 'A') + widen("hello")
                                                          + QByteArray::fromHex("00ff10203040")));
    QVERIFY(writeFile(dir + QStringLiteral("/sub/c.txt"), "nothing to see\n"));
    // Larger than the first bytes kept for conditions (4 KiB): reads past them open the file.
    QByteArray large(6000, 'x');
    large.replace(4094, 4, "\x01\x02\x03\x04");
    large.replace(5000, 4, "\x11\x22\x33\x44");
    large.replace(0, 2, "MZ");
    QVERIFY(writeFile(dir + QStringLiteral("/d.bin"), large));
    const QString rules = m_tmp.filePath(QStringLiteral("hand.yar"));
    QVERIFY(writeFile(rules, R"(
private rule is_mz { condition: uint16(0) == 0x5a4d }
rule mz_hello : tag1 { strings: $h = "hello" nocase wide ascii condition: is_mz and $h }
rule overlaps { strings: $a = "aa" $b = /abc(abc)*/ $c = /abc(abc)*?/ condition: any of them }
rule hex_long { strings: $x = { 4D 5A [0-80] 68 00 65 } $y = { 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 41 } condition: $x or $y }
rule words { strings: $w = "hello" fullword $e = /[a-z0-9]+@example\.com/ condition: $w and $e }
rule priv_str { strings: $p = "world" private $q = "WORLD" condition: $p and $q }
rule counts { strings: $a = "l" condition: #a > 3 and @a[2] < 10 }
rule no_strings { condition: filesize < 20 }
rule at_zero { strings: $m = "MZ" $h = { 4D 5A } condition: $m at 0 and $h }
rule reads_across_the_head { condition: uint32(4094) == 0x04030201 and uint32be(5000) == 0x11223344 }
rule reads_last_bytes { condition: uint8(filesize - 1) == 0x78 and uint16(filesize - 2) == 0x7878 and is_mz }
global rule not_tiny { condition: filesize > 16 }
)"));
    compare(rules, dir, { QStringLiteral("--engine"), QStringLiteral("cpu") });

    // -c: one `PATH: N` line per file, N the rules that matched, as yara -c prints (order aside).
    QByteArray yaraErr, ours;
    QList<QByteArray> expected = runYara({ QStringLiteral("-c"), QStringLiteral("-r"), rules, dir }, &yaraErr).split('\n');
    QVERIFY(runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-c"),
                     QStringLiteral("-r"), rules, dir },
                   &ours)
            != 1);
    QList<QByteArray> got = ours.split('\n');
    std::sort(expected.begin(), expected.end());
    std::sort(got.begin(), got.end());
    QVERIFY(expected.size() > 2);
    QCOMPARE(got, expected);

    // One file: yara prints the bare count.
    const QString one = QDir(dir).entryInfoList(QDir::Files, QDir::Name).constFirst().filePath();
    const QByteArray alone = runYara({ QStringLiteral("-c"), rules, one }, &yaraErr);
    QVERIFY(runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-c"),
                     QStringLiteral("-r"), rules, one },
                   &ours)
            != 1);
    QVERIFY(!alone.contains(':'));
    QCOMPARE(ours, alone);
}

void TestYara::manySpacedMatchesOfOneString()
{
    // More ends of one variable-length string in one file than the scanner resolves in one unit, some groups
    // further apart than YARA's longest match (where the scanner may cut them), others close (where it may
    // not), with overlapping matches in each group.
    const QString dir = m_tmp.filePath(QStringLiteral("spaced"));
    QByteArray data;
    QRandomGenerator rng(515);
    for (int i = 0; i < 2600; ++i) {
        data += "xabcabcab" + QByteArray::number(i) + "Z";
        data += QByteArray(rng.bounded(2) ? 4200 : 3, '.');
    }
    QVERIFY(writeFile(dir + QStringLiteral("/spaced.bin"), data));
    const QString rules = m_tmp.filePath(QStringLiteral("spaced.yar"));
    QVERIFY(writeFile(rules, "rule spaced { strings: $r = /ab(cab)*c?[0-9]+Z/ condition: #r > 2000 }\n"
                             "rule spaced_wide { strings: $w = /ca[b-c]+/ ascii wide condition: #w > 2000 }\n"));
    compare(rules, dir, { QStringLiteral("--engine"), QStringLiteral("cpu") });
    compare(rules, dir, { QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-j"), QStringLiteral("1") });
}

void TestYara::countsDecidedByTheFirstMatches()
{
    // Without -s, a string whose condition only compares its count with a constant is resolved until that count
    // is decided (`#u > 5`: six matches). Files with one match fewer than needed, exactly as many, one more and
    // thousands; matches close together (one unit of the resolver) and further apart than YARA's longest match
    // (units resolved on several threads, and in several chunks with small batches).
    const QString dir = m_tmp.filePath(QStringLiteral("decided"));
    auto body = [](int matches, int gap) {
        QByteArray data;
        for (int i = 0; i < matches; ++i)
            data += "see http://host" + QByteArray::number(i) + ".example.org/ " + QByteArray(gap, ' ');
        return data;
    };
    for (int n : { 1, 5, 6, 7, 3000 }) {
        QVERIFY(writeFile(dir + QStringLiteral("/close%1").arg(n), body(n, 2)));
        QVERIFY(writeFile(dir + QStringLiteral("/apart%1").arg(n), body(n, 4200)));
    }
    // Hundreds of ends fullword rejects before the matches: the ends are taken a slice at a time.
    QByteArray rejected;
    for (int i = 0; i < 600; ++i)
        rejected += "xhost" + QByteArray::number(i) + "y ";
    for (int n : { 5, 6, 7 }) {
        QByteArray data = rejected;
        for (int i = 0; i < n; ++i)
            data += " host" + QByteArray::number(i) + " ";
        QVERIFY(writeFile(dir + QStringLiteral("/rejected%1").arg(n), data + rejected));
    }
    const QString rules = m_tmp.filePath(QStringLiteral("decided.yar"));
    QVERIFY(writeFile(rules, "rule above { strings: $u = /https?:\\/\\/[a-z0-9.-]+\\.(org|com)\\// condition: #u > 5 }\n"
                             "rule exactly { strings: $u = /http:\\/\\/[a-z0-9]+\\.example/ condition: #u == 6 }\n"
                             "rule below { strings: $u = /host[0-9]+\\.ex/ condition: 7 > #u and $u }\n"
                             "rule nested { strings: $a = /host[0-9]/ $b = /example\\.[a-z]+/ "
                             "condition: for any of them : (# >= 7) }\n"
                             "rule worded { strings: $w = /host[0-9]+/ fullword condition: #w > 5 }\n"));
    compare(rules, dir, { QStringLiteral("--engine"), QStringLiteral("cpu") });
    compare(rules, dir, { QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-j"), QStringLiteral("1") });
    compare(rules, dir, { QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("--batch-bytes"),
                          QStringLiteral("8192"), QStringLiteral("--segment-bytes"), QStringLiteral("1024") });
}

void TestYara::regexDialectEqualsYara()
{
    // Corners where YARA's regexes differ from PCRE's or where \b, wide text and anchors meet the file's ends.
    const QString dir = m_tmp.filePath(QStringLiteral("dialect"));
    QVERIFY(writeFile(dir + QStringLiteral("/f1"), "abbbc ac abc xyz123 Hello\tWorld  foo.bar\nline2 end"));
    QVERIFY(writeFile(dir + QStringLiteral("/f2"), QByteArray("\x00\x01" "abc", 5)));
    QVERIFY(writeFile(dir + QStringLiteral("/f3"), "-x start\n--x aa_b A_B 12.34.56.78 999.1.1.1\r\n\t tab"));
    QVERIFY(writeFile(dir + QStringLiteral("/f4"), widen("hello world") + '!'));
    const QString rules = m_tmp.filePath(QStringLiteral("dialect.yar"));
    QVERIFY(writeFile(rules, R"(
rule r1 { strings: $a = /ab{,3}c/ condition: $a }
rule r2 { strings: $a = /[[:alpha:]]{5}/ $b = /[]a]+/ condition: any of them }
rule r3 { strings: $a = /\w+\s\w+/ condition: $a }
rule r4 { strings: $a = /[\d]{3}$/ condition: $a }
rule r5 { strings: $a = /^.{2}abc/s condition: $a }
rule r6 { strings: $a = /o\.b/ $b = /(foo|fo)(o\.)?/ condition: $a and $b }
rule r7 { strings: $a = /x{2,}?/ $b = "end" fullword condition: any of them }
rule r8 { strings: $a = { 61 62 63 } condition: $a at 2 or $a at 9 }
rule s1 { strings: $a = /\b-x/ $b = /\B-x/ condition: any of them }
rule s2 { strings: $a = /a\B_/ $b = /[^a-z\s]{2}/ condition: any of them }
rule s3 { strings: $a = /(\d{1,3}\.){3}\d{1,3}/ condition: $a }
rule s4 { strings: $a = /hello w[a-z]+/ wide $b = /o w/ wide ascii condition: any of them }
rule s5 { strings: $a = "hello" wide fullword $b = "world" wide condition: any of them }
rule s6 { strings: $a = /tab$/ $b = /\r\n\t/ condition: all of them }
rule s7 { strings: $a = { 2D [0-3] 78 } $b = { 2D ( 2D | 78 ) } condition: #a == 2 and #b >= 1 }
rule s8 { strings: $a = /[\x30-\x39]+\.[0-9]+/ $b = /x{0,2}start/ condition: any of them }
rule s9 { strings: $a = /.{3}/ condition: #a > 2 }
rule s10 { strings: $a = "A_B" nocase $b = "aa" fullword condition: $a and $b }
)"));
    compare(rules, dir, { QStringLiteral("--engine"), QStringLiteral("cpu") });
}

void TestYara::tooManyMatchesCappedAsYara()
{
    // YARA records at most 1,000,000 matches of a string per file: its count, offsets and -s lines stop there.
    const QString dir = m_tmp.filePath(QStringLiteral("many"));
    QVERIFY(writeFile(dir + QStringLiteral("/zeros"), QByteArray(1100000, '\0') + "tail"));
    // 150,000 ends of /a{1,8}b/, each the end of eight matches (YARA reports one per start): 1.2 million.
    QVERIFY(writeFile(dir + QStringLiteral("/shared"), QByteArray("aaaaaaab").repeated(150000)));
    const QString rules = m_tmp.filePath(QStringLiteral("many.yar"));
    // `zeros` reads offsets, so its matches are listed; `counted` only counts them (without -s they are counted,
    // not listed), `over` sees the capped count too.
    QVERIFY(writeFile(rules, "rule zeros { strings: $z = { 00 00 00 00 } $t = \"tail\" condition: #z == 1000000 and @z[1000000] == 999999 and $t }\n"
                             "rule counted { strings: $z = { 00 00 00 00 } condition: #z == 1000000 }\n"
                             "rule over { strings: $z = { 00 00 00 } condition: #z > 1000000 }\n"
                             "rule found { strings: $r = /\\x00{4,5}/ condition: $r }\n"
                             "rule shared { strings: $s = /a{1,8}b/ condition: $s }\n"));
    compare(rules, dir, { QStringLiteral("--engine"), QStringLiteral("cpu") });
    // Without -s, `found` needs one match of $r to be decided, but YARA still warns that $r's were capped: also
    // when the file is read in chunks, none of which holds a million matches. So for `shared`, whose million
    // matches end at 150,000 places.
    const QStringList chunked { QStringLiteral("--batch-bytes"), QStringLiteral("300K") };
    for (const QStringList &batch : { QStringList(), chunked }) {
        QByteArray out, err;
        const QStringList args = QStringList { QStringLiteral("scan"), QStringLiteral("--engine"),
                                               QStringLiteral("cpu") }
            + batch + QStringList { QStringLiteral("-r"), rules, dir };
        QCOMPARE(runCli(args, &out, &err), 0);
        QVERIFY2(err.contains("string $r of rule found has more than 1000000 matches"), err.constData());
        QVERIFY2(err.contains("string $s of rule shared has more than 1000000 matches"), err.constData());
    }
}

void TestYara::linksFollowedWithLAsYara()
{
    // yara follows links when it walks a folder; -L does the same here (files and folders alike).
    const QString dir = m_tmp.filePath(QStringLiteral("links"));
    QVERIFY(writeFile(dir + QStringLiteral("/sub/real.txt"), "alpha"));
    QVERIFY(QFile::link(QStringLiteral("sub/real.txt"), dir + QStringLiteral("/link.txt")));
    QVERIFY(QFile::link(QStringLiteral("sub"), dir + QStringLiteral("/linkdir")));
    const QString rules = m_tmp.filePath(QStringLiteral("links.yar"));
    QVERIFY(writeFile(rules, "rule a { strings: $a = \"alpha\" condition: $a }\n"));
    compare(rules, dir, { QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-L") });
}

void TestYara::demoRulesEqualYara()
{
    // The README promises the bundled demo's YARA rules print what yara prints.
    const QString demo = QDir::cleanPath(QStringLiteral(TESTS_DATA_DIR "/../../resources/demo"));
    compare(demo + QStringLiteral("/rules/demo.yar"), demo + QStringLiteral("/files"),
            { QStringLiteral("--engine"), QStringLiteral("cpu") });
}

void TestYara::badRulesAreRejectedAlone()
{
    const QString rules = m_tmp.filePath(QStringLiteral("bad.yar"));
    QVERIFY(writeFile(m_tmp.filePath(QStringLiteral("inc/common.yar")), "rule from_include { strings: $a = \"alpha\" condition: $a }\n"));
    QVERIFY(writeFile(rules, R"(import "pe"
include "inc/common.yar"
rule good1 { strings: $a = "alpha" condition: $a }
rule syntax_error { strings: $a = "x" condition: $a and and }
rule module_misuse { condition: pe.no_such_field == 1 }
rule b64 { strings: $a = "powershell" base64 condition: $a }
rule undefined_string { strings: $a = "x" condition: $b }
rule good2 { strings: $a = /alp[h]a/ condition: $a }
rule refers_to_rejected { condition: module_misuse }
rule mixed_greed { strings: $a = /a.*b.*?c/ condition: $a }
)"));
    const RuleSet set = RuleLoader::loadFiles({ rules });
    QStringList accepted;
    for (const Rule &r : set.rules)
        accepted << r.name;
    QCOMPARE(accepted, (QStringList { QStringLiteral("from_include"), QStringLiteral("good1"), QStringLiteral("b64"),
                                      QStringLiteral("good2") }));
    std::map<QString, Rejection> byRule;
    for (const Rejection &r : set.rejections)
        byRule[r.rule] = r;
    for (const char *name : { "syntax_error", "module_misuse", "undefined_string", "refers_to_rejected", "mixed_greed" }) {
        const auto it = byRule.find(QString::fromLatin1(name));
        QVERIFY2(it != byRule.end(), name);
        QCOMPARE(it->second.file, rules);
        QVERIFY2(it->second.line > 3, qPrintable(it->second.toString()));
        QVERIFY2(!it->second.reason.isEmpty(), name);
    }
    QVERIFY2(byRule[QStringLiteral("module_misuse")].reason.contains(QLatin1String("invalid field name \"no_such_field\"")),
             qPrintable(byRule[QStringLiteral("module_misuse")].reason));
    QCOMPARE(byRule[QStringLiteral("syntax_error")].line, 4);

    // The accepted rules still run and print as yara would for them.
    const QString dir = m_tmp.filePath(QStringLiteral("badcorpus"));
    QVERIFY(writeFile(dir + QStringLiteral("/x"), "xx alpha yy"));
    QByteArray out, err;
    QCOMPARE(runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-r"),
                      rules, dir },
                    &out, &err),
             2);
    const QByteArray path = dir.toUtf8() + "/x";
    QCOMPARE(out, "from_include " + path + "\ngood1 " + path + "\ngood2 " + path + "\n");
    QVERIFY2(err.contains("syntax_error") && err.contains("module_misuse"), err.constData());

    // A file that cannot be read is reported with its name.
    QCOMPARE(runCli({ QStringLiteral("scan"), QStringLiteral("-r"), m_tmp.filePath(QStringLiteral("missing.yar")), dir },
                    &out, &err),
             1);
    QVERIFY2(err.contains("missing.yar"), err.constData());
}

void TestYara::manyRejectionsInALargeFile()
{
    // A collection of 1,200 rules, a third of them refused (an external yara would need -d for, a reference to a
    // refused rule), with references to accepted rules far above, commented-out rules, and strings and
    // regexes holding what looks like comments and braces. Each refused rule is rejected alone, with its own
    // line; every other rule runs as yara runs the same file without the refused ones.
    QByteArray all, good;
    QStringList refused;
    int refusedLines = 0;
    int line = 1;
    const auto add = [&](const QByteArray &text, bool ok) {
        all += text;
        if (ok)
            good += text;
        line += int(text.count('\n'));
    };
    add("import \"pe\"\n\n", true);
    for (int r = 0; r < 1200; ++r) {
        const QByteArray name = "r" + QByteArray::number(r);
        const QByteArray word = "w" + QByteArray::number(r % 97) + "x";
        if (r % 3 == 1) {
            refused << QString::fromLatin1(name);
            ++refusedLines;
            add("rule " + name + " {\n strings:\n  $a = \"" + word + "\"\n condition:\n  $a and filename == \"a\"\n}\n", false);
        } else if (r % 3 == 2 && r % 9 == 5) {
            // Names a refused rule: refused too.
            refused << QString::fromLatin1(name);
            add("rule " + name + " { condition: r" + QByteArray::number(r - 1) + " }\n", false);
        } else if (r % 3 == 2) {
            // Names an accepted rule up to a hundred rules above (many pieces away).
            add("rule " + name + " {\n strings:\n  $a = \"/*" + word + "{\"\n  $b = /" + word + "[}]?\\/\\*/\n condition:\n  ($a or $b) and r"
                    + QByteArray::number(std::max(0, r - 2 - 3 * (r % 33))) + "\n}\n",
                true);
        } else {
            add("rule " + name + " {\n strings:\n  $a = \"" + word + "\"\n condition:\n  $a\n}\n", true);
        }
        if (r % 50 == 7)
            add("/*\nrule commented_" + name + " {\n condition:\n  true\n}\nrule commented2_" + name + " { condition: true }\n*/\n", true);
    }
    // r % 3 == 2 rules refer to r - 2 - 3k: accepted ones (r % 3 == 0) only.
    const QString rules = m_tmp.filePath(QStringLiteral("large.yar"));
    const QString goodRules = m_tmp.filePath(QStringLiteral("large-good.yar"));
    QVERIFY(writeFile(rules, all));
    QVERIFY(writeFile(goodRules, good));

    const RuleSet set = RuleLoader::loadFiles({ rules });
    QStringList rejected;
    for (const Rejection &r : set.rejections) {
        rejected << r.rule;
        QVERIFY2(all.split('\n').value(r.line - 1).startsWith(QByteArray("rule " + r.rule.toUtf8() + " ")),
                 qPrintable(r.toString()));
    }
    rejected.sort();
    refused.sort();
    QCOMPARE(rejected, refused);
    QCOMPARE(int(set.rules.size()), 1200 - int(refused.size()));
    QVERIFY(refusedLines > 300);

    const QString dir = m_tmp.filePath(QStringLiteral("largecorpus"));
    for (int f = 0; f < 20; ++f) {
        QByteArray data;
        for (int w = f; w < 97; w += 20)
            data += " w" + QByteArray::number(w) + "x " + (w % 2 ? "/*w" + QByteArray::number(w) + "x{" : QByteArray());
        QVERIFY(writeFile(dir + QStringLiteral("/f%1").arg(f), data));
    }
    compare(goodRules, dir, { QStringLiteral("--engine"), QStringLiteral("cpu") });
    QByteArray yaraErr, ours, err;
    QList<QByteArray> expected = runYara({ QStringLiteral("-r"), goodRules, dir }, &yaraErr).split('\n');
    QVERIFY2(expected.size() > 100, yaraErr.constData());
    QCOMPARE(runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"), QStringLiteral("-r"),
                      rules, dir },
                    &ours, &err),
             2);
    QList<QByteArray> got = ours.split('\n');
    std::sort(expected.begin(), expected.end());
    std::sort(got.begin(), got.end());
    QCOMPARE(got, expected);
}

void TestYara::jsonHasMatchRecords()
{
    const QString dir = m_tmp.filePath(QStringLiteral("json"));
    QVERIFY(writeFile(dir + QStringLiteral("/f"), QByteArray("ab\x01\x02 ab")));
    const QString rules = m_tmp.filePath(QStringLiteral("json.yar"));
    QVERIFY(writeFile(rules, "rule j : t1 t2 { strings: $a = \"ab\" $h = { 01 02 } condition: #a == 2 and $h }\n"));
    QByteArray out;
    QCOMPARE(runCli({ QStringLiteral("scan"), QStringLiteral("--json"), QStringLiteral("-r"), rules, dir }, &out), 0);
    const QByteArray expected = "{\"type\":\"match\",\"file\":\"" + dir.toUtf8()
        + "/f\",\"rule\":\"j\",\"namespace\":\"default\",\"tags\":[\"t1\",\"t2\"],\"strings\":["
          "{\"id\":\"$a\",\"offset\":0,\"length\":2,\"data\":\"ab\"},"
          "{\"id\":\"$a\",\"offset\":5,\"length\":2,\"data\":\"ab\"},"
          "{\"id\":\"$h\",\"offset\":2,\"length\":2,\"data\":\"\\u0001\\u0002\"}]}";
    QVERIFY2(out.contains(expected), out.constData());
}

QTEST_GUILESS_MAIN(TestYara)

#include "tst_yara.moc"
