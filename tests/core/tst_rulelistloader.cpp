// SPDX-License-Identifier: GPL-3.0-or-later
#include <QTemporaryDir>
#include <QTest>

#include "pattern/regexparser.h"
#include "rules/rulelistloader.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

/// A byte set as ranges of hex values: "4d", "00-ff", "0a,1a,...".
QString describeSet(const ByteSet &set)
{
    QStringList parts;
    for (int b = 0; b < 256; ++b) {
        if (!set.test(size_t(b)))
            continue;
        int last = b;
        while (last + 1 < 256 && set.test(size_t(last + 1)))
            ++last;
        const auto hex = [](int v) { return QStringLiteral("%1").arg(v, 2, 16, QLatin1Char('0')); };
        parts << (last == b ? hex(b) : hex(b) + QLatin1Char('-') + hex(last));
        b = last;
    }
    return parts.join(QLatin1Char(','));
}

/// The whole tree, so that two regexes can be compared without knowing how the parser lays nodes out.
QString describeNode(const Regex &r, int index)
{
    const Regex::Node &n = r.nodes[size_t(index)];
    QStringList children;
    for (int c : n.children)
        children << describeNode(r, c);
    const QString inner = children.join(QLatin1Char(' '));
    switch (n.type) {
    case Regex::Node::Type::Empty:
        return QStringLiteral("()");
    case Regex::Node::Type::Bytes:
        return QLatin1Char('[') + describeSet(n.bytes) + QLatin1Char(']');
    case Regex::Node::Type::Concat:
        return QLatin1String("(cat ") + inner + QLatin1Char(')');
    case Regex::Node::Type::Alternate:
        return QLatin1String("(alt ") + inner + QLatin1Char(')');
    case Regex::Node::Type::Repeat:
        return QStringLiteral("(rep %1 %2 ").arg(n.min).arg(n.max) + inner + QLatin1Char(')');
    case Regex::Node::Type::Assert:
        return QStringLiteral("(assert %1)").arg(int(n.assertion));
    }
    return {};
}

QString describe(const Regex &r)
{
    return r.isValid() ? describeNode(r, r.root) : QStringLiteral("invalid");
}

/// A literal or hex line gives a plain sequence of byte sets; one set per byte, separated by spaces.
QString describeSequence(const Regex &r)
{
    if (!r.isValid())
        return QStringLiteral("invalid");
    const Regex::Node &root = r.nodes[size_t(r.root)];
    std::vector<int> positions = root.type == Regex::Node::Type::Concat ? root.children : std::vector<int> { r.root };
    QStringList parts;
    for (int p : positions) {
        const Regex::Node &n = r.nodes[size_t(p)];
        parts << (n.type == Regex::Node::Type::Bytes ? describeSet(n.bytes) : QStringLiteral("not a byte"));
    }
    return parts.join(QLatin1Char(' '));
}

QStringList ruleNames(const RuleSet &set)
{
    QStringList names;
    for (const Rule &r : set.rules)
        names << r.name;
    return names;
}

QByteArrayList sources(const RuleSet &set)
{
    QByteArrayList out;
    for (const Pattern &p : set.patterns)
        out << p.source;
    return out;
}

QStringList rejections(const RuleSet &set)
{
    QStringList out;
    for (const Rejection &r : set.rejections)
        out << r.toString();
    return out;
}

} // namespace

class TestRuleListLoader : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void literalLines();
    void lineEndings_data();
    void lineEndings();
    void hexLines_data();
    void hexLines();
    void badHexLineRejectedAlone_data();
    void badHexLineRejectedAlone();
    void regexLines();
    void regexFlags_data();
    void regexFlags();
    void badRegexLineRejectedAlone_data();
    void badRegexLineRejectedAlone();
    void duplicateOfRejectedLine();
    void formatFromSuffix();
    void unreadableFile();
};

void TestRuleListLoader::literalLines()
{
    const QByteArray data = "evil.example.com\n"
                            "# a comment\n"
                            "\n"
                            "C:\\Windows\\Temp\\evil.exe\n"
                            "  spaces kept  \n"
                            "\\x41 is no escape\n"
                            "caf\xc3\xa9\n"
                            "tab\there\n"
                            "#\n"
                            "no final newline";
    const RuleSet set = RuleListLoader::loadFromData(QStringLiteral("/rules/iocs.v2.txt"), data);

    QCOMPARE(ruleNames(set),
             QStringList({ QStringLiteral("iocs.v2:1"), QStringLiteral("iocs.v2:4"), QStringLiteral("iocs.v2:5"),
                           QStringLiteral("iocs.v2:6"), QStringLiteral("iocs.v2:7"), QStringLiteral("iocs.v2:8"),
                           QStringLiteral("iocs.v2:10") }));
    QCOMPARE(sources(set),
             QByteArrayList({ "evil.example.com", "C:\\Windows\\Temp\\evil.exe", "  spaces kept  ",
                              "\\x41 is no escape", "caf\xc3\xa9", "tab\there", "no final newline" }));
    QVERIFY(set.rejections.empty());

    const QList<int> lines { 1, 4, 5, 6, 7, 8, 10 };
    QCOMPARE(set.patterns.size(), set.rules.size());
    for (size_t i = 0; i < set.rules.size(); ++i) {
        const Rule &rule = set.rules[i];
        QCOMPARE(rule.line, lines[qsizetype(i)]);
        QCOMPARE(rule.sourceFile, QStringLiteral("/rules/iocs.v2.txt"));
        QCOMPARE(rule.patterns, std::vector<int> { int(i) });
        const Pattern &p = set.patterns[i];
        QCOMPARE(p.id, QStringLiteral("$"));
        QCOMPARE(p.ruleIndex, int(i));
        QCOMPARE(describe(p.regex), describe(Regex::fromLiteral(p.source.constData(), int(p.source.size()))));
    }
    // Byte for byte: four bytes for the backslashes, no escape processing, no case folding.
    QCOMPARE(describeSequence(set.patterns[1].regex).count(QLatin1String("5c")), 3);
    QCOMPARE(describeSequence(set.patterns[0].regex).split(QLatin1Char(' ')).first(), QStringLiteral("65"));
}

void TestRuleListLoader::lineEndings_data()
{
    QTest::addColumn<QByteArray>("data");
    QTest::addColumn<QByteArrayList>("expected");

    QTest::addRow("LF") << QByteArray("a\nb\n") << QByteArrayList { "a", "b" };
    QTest::addRow("CRLF") << QByteArray("a\r\nb\r\n") << QByteArrayList { "a", "b" };
    QTest::addRow("CRLF, comment and empty line") << QByteArray("# x\r\n\r\na\r\n") << QByteArrayList { "a" };
    QTest::addRow("mixed, no final newline") << QByteArray("a\r\nb\nc") << QByteArrayList { "a", "b", "c" };
    QTest::addRow("a CR inside a line is a byte") << QByteArray("a\rb\r\n") << QByteArrayList { "a\rb" };
    QTest::addRow("only the last CR goes") << QByteArray("a\r\r\n") << QByteArrayList { "a\r" };
    QTest::addRow("UTF-8 byte order mark dropped") << QByteArray("\xEF\xBB\xBF"
                                                                 "a\r\nb")
                                                   << QByteArrayList { "a", "b" };
    QTest::addRow("empty file") << QByteArray() << QByteArrayList();
}

void TestRuleListLoader::lineEndings()
{
    QFETCH(QByteArray, data);
    QFETCH(QByteArrayList, expected);

    const RuleSet set = RuleListLoader::loadFromData(QStringLiteral("list.txt"), data);
    QCOMPARE(sources(set), expected);
    QVERIFY(set.rejections.empty());
}

void TestRuleListLoader::hexLines_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("expected");

    QTest::addRow("bytes and a wildcard") << QByteArray("hex: 4D 5A ?? 00") << QStringLiteral("4d 5a 00-ff 00");
    QTest::addRow("no spaces, lower case") << QByteArray("hex:4d5a??00") << QStringLiteral("4d 5a 00-ff 00");
    QTest::addRow("tabs and trailing spaces") << QByteArray("hex:\t4D\t 5A  ") << QStringLiteral("4d 5a");
    QTest::addRow("high nibble known") << QByteArray("hex: 4?") << QStringLiteral("40-4f");
    QTest::addRow("low nibble known") << QByteArray("hex: ?A")
                                      << QStringLiteral("0a,1a,2a,3a,4a,5a,6a,7a,8a,9a,aa,ba,ca,da,ea,fa");
    QTest::addRow("single byte ff") << QByteArray("hex: fF") << QStringLiteral("ff");
}

void TestRuleListLoader::hexLines()
{
    QFETCH(QByteArray, line);
    QFETCH(QString, expected);

    const RuleSet set = RuleListLoader::loadFromData(QStringLiteral("sigs.txt"), line + "\n");
    QVERIFY2(set.rejections.empty(), qPrintable(rejections(set).join(QLatin1Char('\n'))));
    QCOMPARE(set.rules.size(), size_t(1));
    QCOMPARE(set.rules[0].name, QStringLiteral("sigs:1"));
    QCOMPARE(set.patterns[0].source, line);
    QCOMPARE(describeSequence(set.patterns[0].regex), expected);
}

void TestRuleListLoader::badHexLineRejectedAlone_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("reason");

    QTest::addRow("odd digit count") << QByteArray(
        "hex: 4D 5") << QStringLiteral("incomplete byte at column 9 (write two hex digits or ?? per byte)");
    QTest::addRow("pair split by a space") << QByteArray("hex: 4 D") << QStringLiteral("incomplete byte at column 6");
    QTest::addRow("not a hex digit") << QByteArray("hex: 4G") << QStringLiteral("invalid byte \"4G\" at column 6");
    QTest::addRow("0x prefix") << QByteArray("hex: 0x4D") << QStringLiteral("invalid byte \"0x\" at column 6");
    QTest::addRow("YARA jump") << QByteArray("hex: 4D [2-4] 5A") << QStringLiteral("invalid byte \"[2\" at column 9");
    QTest::addRow("YARA alternative") << QByteArray("hex: (4D|5A)") << QStringLiteral("invalid byte \"(4\"");
    QTest::addRow("nothing after the prefix") << QByteArray("hex:") << QStringLiteral("hex: no bytes");
    QTest::addRow("only blanks") << QByteArray("hex: \t ") << QStringLiteral("hex: no bytes");
}

void TestRuleListLoader::badHexLineRejectedAlone()
{
    QFETCH(QByteArray, line);
    QFETCH(QString, reason);

    const RuleSet set =
        RuleListLoader::loadFromData(QStringLiteral("dir/sigs.txt"), "hex: 4D 5A\n" + line + "\r\nC:\\evil\n");
    QCOMPARE(ruleNames(set), QStringList({ QStringLiteral("sigs:1"), QStringLiteral("sigs:3") }));
    QCOMPARE(set.rejections.size(), size_t(1));
    const Rejection &r = set.rejections[0];
    QCOMPARE(r.file, QStringLiteral("dir/sigs.txt"));
    QCOMPARE(r.line, 2);
    QVERIFY2(r.reason.contains(reason), qPrintable(r.reason));
    QVERIFY(r.toString().startsWith(QLatin1String("dir/sigs.txt:2: ")));
}

void TestRuleListLoader::regexLines()
{
    // The first three rules are taken from the benchmark list: backslashes are regex escapes here.
    const QByteArray data =
        "# flags\tname\tregex\r\n"
        "i\twinpath_exe\t[A-Za-z]:\\\\(Windows|Users|ProgramData)\\\\[^\\x00\\r\\n]{1,64}\\.(exe|dll|bat|ps1)\r\n"
        "i\trunkey\tSoftware\\\\Microsoft\\\\Windows\\\\CurrentVersion\\\\Run(Once)?\r\n"
        "\r\n"
        "-\tipv4\t\\b(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}\\b\r\n"
        "-\twith tab\ta\tb\n"
        "s\tC2 beacon\tbeacon.+end";
    const RuleSet set = RuleListLoader::loadFromData(QStringLiteral("regexes.tsv"), data);
    QVERIFY2(set.rejections.empty(), qPrintable(rejections(set).join(QLatin1Char('\n'))));
    QCOMPARE(ruleNames(set),
             QStringList({ QStringLiteral("winpath_exe"), QStringLiteral("runkey"), QStringLiteral("ipv4"),
                           QStringLiteral("with tab"), QStringLiteral("C2 beacon") }));
    QCOMPARE(sources(set).at(1), QByteArray("Software\\\\Microsoft\\\\Windows\\\\CurrentVersion\\\\Run(Once)?"));
    QCOMPARE(sources(set).at(3), QByteArray("a\tb"));

    const QList<int> lines { 2, 3, 5, 6, 7 };
    const QList<RegexFlags> flags { { true, false }, { true, false }, {}, {}, { false, true } };
    for (size_t i = 0; i < set.rules.size(); ++i) {
        QCOMPARE(set.rules[i].line, lines[qsizetype(i)]);
        QCOMPARE(set.rules[i].sourceFile, QStringLiteral("regexes.tsv"));
        const Pattern &p = set.patterns[size_t(set.rules[i].patterns.at(0))];
        QCOMPARE(p.id, QStringLiteral("$"));
        QCOMPARE(p.ruleIndex, int(i));
        QCOMPARE(describe(p.regex), describe(RegexParser::parse(p.source, flags[qsizetype(i)]).regex));
    }
}

void TestRuleListLoader::regexFlags_data()
{
    QTest::addColumn<QByteArray>("flags");
    QTest::addColumn<bool>("caseless");
    QTest::addColumn<bool>("dotAll");

    QTest::addRow("none") << QByteArray("-") << false << false;
    QTest::addRow("caseless") << QByteArray("i") << true << false;
    QTest::addRow("dot-all") << QByteArray("s") << false << true;
    QTest::addRow("both") << QByteArray("is") << true << true;
    QTest::addRow("both, other order") << QByteArray("si") << true << true;
}

void TestRuleListLoader::regexFlags()
{
    QFETCH(QByteArray, flags);
    QFETCH(bool, caseless);
    QFETCH(bool, dotAll);

    const QByteArray regex("a.b");
    const RuleSet set = RuleListLoader::loadFromData(QStringLiteral("r.tsv"), flags + "\trule\t" + regex + '\n');
    QVERIFY2(set.rejections.empty(), qPrintable(rejections(set).join(QLatin1Char('\n'))));
    QCOMPARE(set.patterns.size(), size_t(1));
    const QString loaded = describe(set.patterns[0].regex);
    // Each flag changes the parse of "a.b", so matching exactly one combination proves both were passed.
    for (const bool i : { false, true }) {
        for (const bool s : { false, true }) {
            const bool same = loaded == describe(RegexParser::parse(regex, { i, s }).regex);
            QCOMPARE(same, i == caseless && s == dotAll);
        }
    }
}

void TestRuleListLoader::badRegexLineRejectedAlone_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("rule");
    QTest::addColumn<QString>("reason");

    const QString columns = QStringLiteral("expected flags<TAB>name<TAB>regex");
    QTest::addRow("one column") << QByteArray("just text") << QString() << columns;
    QTest::addRow("two columns") << QByteArray("-\tname") << QString() << columns;
    QTest::addRow("spaces instead of tabs") << QByteArray("- name abc") << QString() << columns;
    QTest::addRow("unknown flag") << QByteArray("x\tname\tabc") << QStringLiteral("name")
                                  << QStringLiteral("unknown flag \"x\" (flags are -, or i and s)");
    QTest::addRow("dash mixed with flags") << QByteArray("-i\tname\tabc") << QStringLiteral("name")
                                           << QStringLiteral("unknown flag \"-\" (flags are -, or i and s)");
    QTest::addRow("missing flags") << QByteArray("\tname\tabc") << QStringLiteral("name")
                                   << QStringLiteral("missing flags (write - for none)");
    QTest::addRow("empty name") << QByteArray("-\t\tabc") << QString() << QStringLiteral("empty rule name");
    QTest::addRow("duplicate name") << QByteArray("i\tfirst\tother") << QStringLiteral("first")
                                    << QStringLiteral("duplicate rule name (first on line 1)");
    QTest::addRow("empty regex") << QByteArray("-\tname\t") << QStringLiteral("name") << QStringLiteral("empty regex");
    for (const QByteArray &regex : { QByteArray("(abc"), QByteArray("a{2000}"), QByteArray("*a") }) {
        const QString error = RegexParser::parse(regex).error;
        QTest::addRow("parse error: %s", regex.constData())
            << QByteArray("-\tname\t" + regex) << QStringLiteral("name") << QLatin1String("invalid regex: ") + error;
    }
}

void TestRuleListLoader::badRegexLineRejectedAlone()
{
    QFETCH(QByteArray, line);
    QFETCH(QString, rule);
    QFETCH(QString, reason);

    const QByteArray data = "-\tfirst\tabc\n" + line + "\ni\tlast\tdef\n";
    const RuleSet set = RuleListLoader::loadFromData(QStringLiteral("/x/regexes.tsv"), data);
    QCOMPARE(ruleNames(set), QStringList({ QStringLiteral("first"), QStringLiteral("last") }));
    QCOMPARE(set.rules[1].line, 3);
    QCOMPARE(set.rejections.size(), size_t(1));
    const Rejection &r = set.rejections[0];
    QCOMPARE(r.file, QStringLiteral("/x/regexes.tsv"));
    QCOMPARE(r.line, 2);
    QCOMPARE(r.rule, rule);
    QVERIFY2(reason != QLatin1String("invalid regex: "), "the parser gave no message for a bad regex");
    QCOMPARE(r.reason, reason);
}

void TestRuleListLoader::duplicateOfRejectedLine()
{
    // A name is taken by its first line even when that line is rejected, so both errors show at once.
    const RuleSet set = RuleListLoader::loadFromData(QStringLiteral("r.tsv"), "-\tdup\t(\n-\tdup\tok\n");
    QVERIFY(set.rules.empty());
    QCOMPARE(set.rejections.size(), size_t(2));
    QVERIFY(set.rejections[0].reason.startsWith(QLatin1String("invalid regex: ")));
    QCOMPARE(set.rejections[1].reason, QStringLiteral("duplicate rule name (first on line 1)"));
}

void TestRuleListLoader::formatFromSuffix()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QByteArray line("-\tname\tabc\n");
    const QString tsv = dir.filePath(QStringLiteral("mixed.TSV"));
    const QString txt = dir.filePath(QStringLiteral("mixed.txt"));
    QVERIFY(TestUtil::writeFile(tsv, line));
    QVERIFY(TestUtil::writeFile(txt, line));

    const RuleSet asRegexes = RuleListLoader::load(tsv);
    QCOMPARE(ruleNames(asRegexes), QStringList { QStringLiteral("name") });
    QCOMPARE(asRegexes.rules[0].sourceFile, tsv);

    const RuleSet asLiterals = RuleListLoader::load(txt);
    QCOMPARE(ruleNames(asLiterals), QStringList { QStringLiteral("mixed:1") });
    QCOMPARE(sources(asLiterals), QByteArrayList { "-\tname\tabc" });

    const RuleSet forced = RuleListLoader::load(tsv, RuleListLoader::Format::Literals);
    QCOMPARE(ruleNames(forced), QStringList { QStringLiteral("mixed:1") });
    const RuleSet forcedRegex = RuleListLoader::load(txt, RuleListLoader::Format::Regexes);
    QCOMPARE(ruleNames(forcedRegex), QStringList { QStringLiteral("name") });
}

void TestRuleListLoader::unreadableFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString missing = dir.filePath(QStringLiteral("missing.txt"));
    const RuleSet set = RuleListLoader::load(missing);
    QVERIFY(set.rules.empty());
    QVERIFY(set.patterns.empty());
    QCOMPARE(set.rejections.size(), size_t(1));
    QCOMPARE(set.rejections[0].file, missing);
    QCOMPARE(set.rejections[0].line, 0);
    QCOMPARE(set.rejections[0].reason, QStringLiteral("cannot open: No such file or directory"));
    QCOMPARE(set.rejections[0].toString(), missing + QLatin1String(": cannot open: No such file or directory"));

    const RuleSet folder = RuleListLoader::load(dir.path());
    QVERIFY(folder.rules.empty());
    QCOMPARE(folder.rejections.size(), size_t(1));
    QCOMPARE(folder.rejections[0].line, 0);
    QVERIFY2(folder.rejections[0].reason.startsWith(QLatin1String("cannot ")), qPrintable(folder.rejections[0].reason));
}

QTEST_GUILESS_MAIN(TestRuleListLoader)
#include "tst_rulelistloader.moc"
