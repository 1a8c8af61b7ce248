// SPDX-License-Identifier: GPL-3.0-or-later
#include <functional>

#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTest>

#include "pattern/regexparser.h"
#include "testutilregex.h"

using Hitscope::Regex;
using Hitscope::RegexFlags;
using Hitscope::RegexParser;
using Type = Hitscope::Regex::Node::Type;

namespace {

enum Flag { Caseless = 1, DotAll = 2 };

RegexFlags toFlags(int bits)
{
    RegexFlags flags;
    flags.caseless = bits & Caseless;
    flags.dotAll = bits & DotAll;
    return flags;
}

// A second, independent oracle: backtracking with continuations. Extra iterations of a repeat must consume
// input, which drops only iterations that change nothing.
class BacktrackMatcher
{
public:
    BacktrackMatcher(const Regex &re, const QByteArray &text)
        : m_re(re)
        , m_text(text)
    {
    }

    std::vector<TestUtil::RefMatch> matches()
    {
        std::vector<int64_t> leftmost(size_t(m_text.size()), -1);
        for (int start = 0; start < m_text.size(); ++start) {
            run(m_re.root, start, [&](int after) {
                if (after > start && leftmost[size_t(after - 1)] < 0)
                    leftmost[size_t(after - 1)] = start;
            });
        }
        std::vector<TestUtil::RefMatch> out;
        for (size_t end = 0; end < leftmost.size(); ++end) {
            if (leftmost[end] >= 0)
                out.push_back({ leftmost[end], int64_t(end) });
        }
        return out;
    }

private:
    using Cont = std::function<void(int)>;

    bool word(int pos) const { return pos >= 0 && pos < m_text.size() && Hitscope::isWordByte(uint8_t(m_text[pos])); }

    void run(int node, int pos, const Cont &k)
    {
        const Regex::Node &n = m_re.nodes[size_t(node)];
        switch (n.type) {
        case Type::Empty:
            k(pos);
            return;
        case Type::Bytes:
            if (pos < m_text.size() && n.bytes.test(uint8_t(m_text[pos])))
                k(pos + 1);
            return;
        case Type::Assert: {
            bool ok = false;
            switch (n.assertion) {
            case Hitscope::Assertion::FileStart:
                ok = pos == 0;
                break;
            case Hitscope::Assertion::FileEnd:
                ok = pos == m_text.size();
                break;
            case Hitscope::Assertion::WordBoundary:
                ok = word(pos - 1) != word(pos);
                break;
            case Hitscope::Assertion::NotWordBoundary:
                ok = word(pos - 1) == word(pos);
                break;
            case Hitscope::Assertion::WideWordBoundary:
            case Hitscope::Assertion::WideNotWordBoundary:
                ok = false; // the parser never makes them (YaraStringCompiler does, for wide strings)
                break;
            }
            if (ok)
                k(pos);
            return;
        }
        case Type::Concat:
            concat(n, 0, pos, k);
            return;
        case Type::Alternate:
            for (int c : n.children)
                run(c, pos, k);
            return;
        case Type::Repeat:
            repeat(n, 0, pos, k);
            return;
        }
    }

    void concat(const Regex::Node &n, size_t index, int pos, const Cont &k)
    {
        if (index == n.children.size()) {
            k(pos);
            return;
        }
        run(n.children[index], pos, [&](int next) { concat(n, index + 1, next, k); });
    }

    void repeat(const Regex::Node &n, int count, int pos, const Cont &k)
    {
        if (count >= n.min)
            k(pos);
        if (n.max >= 0 && count >= n.max)
            return;
        run(n.children.front(), pos, [&](int next) {
            if (count < n.min || next > pos)
                repeat(n, count + 1, next, k);
        });
    }

    const Regex &m_re;
    const QByteArray &m_text;
};

// Children come before their parent in the arena, so a well-formed AST can have no cycle.
bool wellFormed(const Regex &re)
{
    if (re.root < 0 || re.root >= int(re.nodes.size()))
        return false;
    for (size_t i = 0; i < re.nodes.size(); ++i) {
        const Regex::Node &n = re.nodes[i];
        for (int c : n.children) {
            if (c < 0 || size_t(c) >= i)
                return false;
        }
        if (n.type == Type::Repeat && (n.children.size() != 1 || n.min < 0 || (n.max >= 0 && n.max < n.min)))
            return false;
    }
    return true;
}

Regex parseOrFail(const QByteArray &pattern, RegexFlags flags = {})
{
    RegexParser::Result r = RegexParser::parse(pattern, flags);
    if (!r.error.isEmpty())
        qWarning("pattern %s: %s", pattern.constData(), qPrintable(r.error));
    return r.regex;
}

} // namespace

class TestRegexParser : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void realWorldPatterns_data();
    void realWorldPatterns();
    void errors_data();
    void errors();
    void semantics_data();
    void semantics();
    void countedRepeatsStayRepeatNodes();
    void caselessFoldsEveryLetterOnce();
    void referenceAgreesWithBacktracking();
    void randomSourcesParse();
    void garbageNeverCrashes();
};

void TestRegexParser::realWorldPatterns_data()
{
    QTest::addColumn<QByteArray>("pattern");
    QTest::addColumn<int>("flags");
    QTest::addColumn<QByteArray>("text");

    const auto row = [](const char *name, const char *pattern, int flags, const QByteArray &text) {
        QTest::addRow("%s", name) << QByteArray(pattern) << flags << text;
    };
    // From the analysts' list; each sample text is one whole match.
    row("ipv4 with word boundaries and alternation",
        R"(\b(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}\b)", 0, "10.0.0.255");
    row("url with negated class and escaped quote chars", R"(https?://[a-zA-Z0-9.-]+\.[a-z]{2,6}(/[^\s"'<>]*)?)", 0,
        "https://example.com/path");
    row("email with dash last in class", R"([A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,10})", 0,
        "joe.doe@mail.example.org");
    row("caseless windows path with \\x00 in a negated class",
        R"([A-Za-z]:\\(Windows|Users|ProgramData)\\[^\x00\r\n]{1,64}\.(exe|dll|bat|ps1))", Caseless,
        R"(C:\WINDOWS\system32\cmd.EXE)");
    row("caseless powershell with nested optional groups",
        R"(powershell(\.exe)?\s+(-nop\s+)?(-w(indowstyle)?\s+hidden\s+)?-e(nc(odedcommand)?)?\s+[A-Za-z0-9+/=]{20,})",
        Caseless, "PowerShell.exe -NoP -w hidden -enc SQBFAFgAIAAoAE4AZQB3AC0A");
    row("base64 blob with {80,} and {0,2}", "[A-Za-z0-9+/]{80,}={0,2}", 0, QByteArray(80, 'A') + "==");
    row("guid with escaped braces",
        R"(\{[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\})", 0,
        "{3F2504E0-4F89-11D3-9A0C-0305E82C3301}");
    row("btc address with split ranges", R"(\b[13][a-km-zA-HJ-NP-Z1-9]{25,34}\b)", 0,
        "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2");
    row("user agent with escaped parentheses", R"(User-Agent:\s*Mozilla/[45]\.0 \([^)]{5,120}\))", 0,
        "User-Agent: Mozilla/5.0 (Windows NT 10.0)");
    row("cron line with escaped stars", R"(\*/[0-9]+ \* \* \* \*)", 0, "*/5 * * * *");
    row("hex-escaped shellcode with escaped backslash", R"((\\x[0-9a-fA-F]{2}){16,})", 0,
        QByteArray(R"(\x41)").repeated(16));
    row("elf header as \\x escapes", R"(\x7fELF\x02\x01\x01)", 0, QByteArray::fromHex("7f454c46020101"));
    row("caseless password assignment with quotes", R"((password|passwd|pwd)\s*[:=]\s*["'][^"'\n]{4,64}["'])", Caseless,
        R"(PASSWORD = "hunter22")");
    row("iso datetime", "(19|20)[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]", 0, "2024-03-15T12:34");
    row("non-capturing groups", R"((?:rundll32|regsvr32|mshta)(?:\.exe)?\s+)", Caseless, "MSHTA.exe ");
}

void TestRegexParser::realWorldPatterns()
{
    QFETCH(QByteArray, pattern);
    QFETCH(int, flags);
    QFETCH(QByteArray, text);

    const RegexParser::Result r = RegexParser::parse(pattern, toFlags(flags));
    QCOMPARE(r.error, QString());
    QVERIFY(wellFormed(r.regex));
    const auto matches = TestUtil::referenceMatches(r.regex, text);
    QVERIFY(!matches.empty());
    QCOMPARE(matches.back().start, int64_t(0));
    QCOMPARE(matches.back().end, int64_t(text.size() - 1));
}

void TestRegexParser::errors_data()
{
    QTest::addColumn<QByteArray>("pattern");
    QTest::addColumn<QString>("reason");

    const auto row = [](const char *name, const QByteArray &pattern, const char *reason) {
        QTest::addRow("%s", name) << pattern << QString::fromLatin1(reason);
    };
    row("unclosed group names the open parenthesis", "a(b(c)", "unbalanced parenthesis at offset 1");
    row("stray closing parenthesis", "ab)", "unbalanced parenthesis at offset 2");
    row("closing before opening", ")(", "unbalanced parenthesis at offset 0");
    row("quantifier at start", "*a", "nothing to repeat at offset 0");
    row("quantifier after alternation", "a|+b", "nothing to repeat at offset 2");
    row("quantifier after open group", "(?:?a)", "nothing to repeat at offset 3");
    row("counted quantifier at start", "{2}", "nothing to repeat at offset 0");
    row("double quantifier", "a**", "nothing to repeat at offset 2");
    row("counted after counted", "a{2}{3}", "nothing to repeat at offset 4");
    row("lazy then another quantifier", "a+??", "nothing to repeat at offset 3");
    row("possessive plus", "ab++", "possessive quantifiers are not supported at offset 3");
    row("possessive counted", "a{2,3}+", "possessive quantifiers are not supported at offset 6");
    row("bound above 1000", "xa{1001}", "repeat bound above 1000 at offset 2");
    row("upper bound above 1000", "a{0,5000}", "repeat bound above 1000 at offset 1");
    row("huge bound does not overflow", "a{99999999999999999999}", "repeat bound above 1000 at offset 1");
    row("min above max", "a{3,2}", "repeat bounds out of order (3 > 2) at offset 1");
    row("reversed range", "x[z-a]", "reversed range z-a in character class at offset 2");
    row("range to a class escape", "[a-\\d]", "invalid range in character class at offset 1");
    row("unterminated class", "ab[cd", "unterminated character class at offset 2");
    row("leading ] does not close", "[]", "unterminated character class at offset 0");
    row("leading ] after ^ does not close", "[^]", "unterminated character class at offset 0");
    row("unknown escape", "ab\\q", "unknown escape \\q at offset 2");
    row("unknown escape in class", "[\\z]", "unknown escape \\z at offset 1");
    row("\\B in class", "[\\B]", "not allowed in a character class at offset 1");
    row("backreference", "(a)\\1", "backreferences and octal escapes are not supported");
    row("short hex escape", "\\x4", "invalid \\x escape (two hex digits expected) at offset 0");
    row("non-hex digits", "a\\xZZ", "invalid \\x escape (two hex digits expected) at offset 1");
    row("braced hex above a byte", "\\x{100}", "invalid \\x{...} escape");
    row("trailing backslash", "ab\\", "trailing backslash at offset 2");
    row("lookahead", "a(?=b)", "unsupported group syntax");
    row("inline flags", "(?i)a", "unsupported group syntax");
    row("named group", "(?<n>a)", "unsupported group syntax");
    row("unknown posix class", "[[:foo:]]", "unknown POSIX class [:foo:] at offset 1");
    row("groups nested too deeply", QByteArray(300, '(') + QByteArray(300, ')'),
        "groups nested deeper than 250 at offset 250");
}

void TestRegexParser::errors()
{
    QFETCH(QByteArray, pattern);
    QFETCH(QString, reason);

    const RegexParser::Result r = RegexParser::parse(pattern);
    QVERIFY2(r.error.contains(reason), qPrintable(r.error));
    QVERIFY(!r.regex.isValid());
}

void TestRegexParser::semantics_data()
{
    QTest::addColumn<QByteArray>("pattern");
    QTest::addColumn<int>("flags");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("expected"); // (leftmost start, end offset of the last byte)

    const auto row = [](const char *name, const QByteArray &re, int flags, const QByteArray &text, const char *want) {
        QTest::addRow("%s", name) << re << flags << text << QByteArray(want);
    };
    row("literal, every occurrence", "abc", 0, "xabcabc", "(1,3) (4,6)");
    row("plus reports every end", "a+", 0, "baaab", "(1,1) (1,2) (1,3)");
    row("alternation keeps the leftmost start", "ab|b", 0, "abb", "(0,1) (2,2)");
    row("empty alternative", "(a|)b", 0, "ab b", "(0,1) (3,3)");
    row("non-capturing group repeated", "(?:ab|cd)+", 0, "abcdx", "(0,1) (0,3)");
    row("star then literal", "(a|b)*c", 0, "abcc", "(0,2) (3,3)");
    row("only empty matches report nothing", "x*", 0, "ab", "");
    row("class range", "[a-c]x", 0, "axdxcx", "(0,1) (4,5)");
    row("negated range", "[^a-c]", 0, "abz", "(2,2)");
    row("] first is literal", "[]a]", 0, "]b a", "(0,0) (3,3)");
    row("- last is literal", "[a-]", 0, "-b", "(0,0)");
    row("escaped ^ in class", "[\\^a]", 0, "^b", "(0,0)");
    row("class escapes inside a class", "[\\d\\s]+", 0, "1 x", "(0,0) (0,1)");
    row("posix class", "[[:digit:]]x", 0, "1xax", "(0,1)");
    row("caseless literal", "abc", Caseless, "xAbC", "(1,3)");
    row("caseless range", "[a-c]+", Caseless, "AbCd", "(0,0) (0,1) (0,2)");
    row("caseless negated class excludes both cases", "[^a]", Caseless, "aAb", "(2,2)");
    row("caseless hex escape", "\\x41", Caseless, "a", "(0,0)");
    row("caseless optional", "colou?r", Caseless, "COLOR colour", "(0,4) (6,11)");
    row("word boundaries around a word", "\\bab\\b", 0, "ab abc ab", "(0,1) (7,8)");
    row("word boundary before non-word", "a\\b", 0, "a b ab", "(0,0)");
    row("not word boundary", "\\Ba", 0, "aba", "(2,2)");
    row("caseless word boundary", "\\bfoo", Caseless, "FOO xfoo", "(0,2)");
    row("^ is file start only", "^ab", 0, "abab", "(0,1)");
    row("^ is not line start", "^b", 0, "a\nb", "");
    row("$ is file end only", "ab$", 0, "ab\nab", "(3,4)");
    row("$ inside an alternation", "a$|b", 0, "ab a", "(1,1) (3,3)");
    row("exact count", "a{2}", 0, "aaaa", "(0,1) (1,2) (2,3)");
    row("bounded count", "a{2,3}", 0, "aaaa", "(0,1) (0,2) (1,3)");
    row("unbounded count", "a{2,}", 0, "aaaa", "(0,1) (0,2) (0,3)");
    row("counted group", "(ab){2}", 0, "ababab", "(0,3) (2,5)");
    row("{,m} is {0,m}", "x{,2}y", 0, "xxxy y", "(1,3) (5,5)");
    row("lazy is the same language", "a{2,3}?", 0, "aaaa", "(0,1) (0,2) (1,3)");
    row("dot skips newline", "a.c", 0, "abc a\nc", "(0,2)");
    row("dot with dotAll", "a.c", DotAll, "abc a\nc", "(0,2) (4,6)");
    row("control escapes", "\\x41\\t\\n\\r\\f\\v\\a", 0, "-A\t\n\r\f\v\a", "(1,7)");
    row("NUL escapes", "\\0|\\x00", 0, QByteArray("a\0b\0", 4), "(1,1) (3,3)");
    row("octal after \\0", "\\012", 0, "1\n", "(1,1)");
    row("escaped punctuation", "\\.\\/\\(\\{\\-\\\\\\]", 0, "./({-\\]", "(0,6)");
    row("digit and word classes", "\\d+", 0, "a12b3", "(1,1) (1,2) (4,4)");
    row("space and non-word", "\\w\\s\\W", 0, "a b!c\t.", "(4,6)");
    row("negated shorthands", "\\S\\D", 0, "a1bc", "(1,2) (2,3)");
    row("\\v is in \\s", "a\\sb", 0, "a\vb a\034b", "(0,2)");
    row("{ without a count is literal", "a{", 0, "a{a", "(0,1)");
    row("{x} is literal", "{x}", 0, "{x}", "(0,2)");
    row("{, without a bound is literal", "a{,}", 0, "a{,}", "(0,3)");
}

void TestRegexParser::semantics()
{
    QFETCH(QByteArray, pattern);
    QFETCH(int, flags);
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, expected);

    const RegexParser::Result r = RegexParser::parse(pattern, toFlags(flags));
    QCOMPARE(r.error, QString());
    QCOMPARE(TestUtil::formatMatches(TestUtil::referenceMatches(r.regex, text)), expected);
}

void TestRegexParser::countedRepeatsStayRepeatNodes()
{
    // The NFA expands counted repeats; expanding here would hide the bounds from its size checks.
    const Regex bounded = parseOrFail("x(ab){3,1000}");
    QVERIFY(bounded.isValid());
    const auto &root = bounded.nodes[size_t(bounded.root)];
    QCOMPARE(root.type, Type::Concat);
    QCOMPARE(root.children.size(), size_t(2));
    const auto &rep = bounded.nodes[size_t(root.children[1])];
    QCOMPARE(rep.type, Type::Repeat);
    QCOMPARE(rep.min, 3);
    QCOMPARE(rep.max, 1000);
    QCOMPARE(bounded.nodes[size_t(rep.children.front())].type, Type::Concat);
    QVERIFY(bounded.nodes.size() < 10);
    QCOMPARE(bounded.minLength(), 7);
    QCOMPARE(bounded.maxLength(), 2001);

    const Regex unbounded = parseOrFail("a{5,}");
    QCOMPARE(unbounded.nodes[size_t(unbounded.root)].type, Type::Repeat);
    QCOMPARE(unbounded.nodes[size_t(unbounded.root)].min, 5);
    QCOMPARE(unbounded.nodes[size_t(unbounded.root)].max, -1);
    QCOMPARE(unbounded.maxLength(), -1);

    const Regex star = parseOrFail("a*?");
    QCOMPARE(star.nodes[size_t(star.root)].min, 0);
    QCOMPARE(star.nodes[size_t(star.root)].max, -1);
}

void TestRegexParser::caselessFoldsEveryLetterOnce()
{
    // Folding must touch ASCII letters only: not '@' / '[' next to 'A' / 'Z', nor bytes above 0x7f.
    const Regex re = parseOrFail("[@-Z\\xC0-\\xDE]", toFlags(Caseless));
    QVERIFY(re.isValid());
    const auto &set = re.nodes[size_t(re.root)].bytes;
    for (int b = 0; b < 256; ++b) {
        const bool expected = (b >= '@' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= 0xC0 && b <= 0xDE);
        QVERIFY2(set.test(size_t(b)) == expected, qPrintable(QString::number(b)));
    }
    const Regex negated = parseOrFail("[^\\W_]", toFlags(Caseless));
    QCOMPARE(negated.nodes[size_t(negated.root)].bytes.count(), size_t(62));
}

void TestRegexParser::referenceAgreesWithBacktracking()
{
    // Other tests trust referenceMatches as the oracle, so check it against a differently built one.
    QRandomGenerator rng(20240611);
    const QByteArray alphabet("ab_ -");
    for (int i = 0; i < 3000; ++i) {
        const Regex re = TestUtil::randomRegex(rng, 1 + int(rng.bounded(4)), alphabet);
        const QByteArray text = TestUtil::randomText(rng, int(rng.bounded(14)), alphabet);
        const QByteArray got = TestUtil::formatMatches(TestUtil::referenceMatches(re, text));
        const QByteArray want = TestUtil::formatMatches(BacktrackMatcher(re, text).matches());
        QVERIFY2(got == want,
                 QByteArray(QByteArray::number(i) + " text \"" + text + "\": " + got + " vs " + want).constData());
    }

    const QByteArray sourceAlphabet("ab1 .\n");
    for (int i = 0; i < 2000; ++i) {
        const QByteArray source = TestUtil::randomRegexSource(rng, 2, sourceAlphabet);
        const Regex re = parseOrFail(source, toFlags(int(rng.bounded(4))));
        QVERIFY2(re.isValid(), source.constData());
        const QByteArray text = TestUtil::randomText(rng, int(rng.bounded(14)), sourceAlphabet);
        QCOMPARE(TestUtil::formatMatches(TestUtil::referenceMatches(re, text)),
                 TestUtil::formatMatches(BacktrackMatcher(re, text).matches()));
    }
}

void TestRegexParser::randomSourcesParse()
{
    QRandomGenerator rng(7);
    const QByteArray alphabet("aZ9_ .{}-\\^$|\n\xff");
    int nonEmptyResults = 0;
    for (int i = 0; i < 4000; ++i) {
        const QByteArray source = TestUtil::randomRegexSource(rng, 3, alphabet);
        const RegexParser::Result r = RegexParser::parse(source, toFlags(int(rng.bounded(4))));
        QVERIFY2(r.error.isEmpty(), QByteArray(source + ": " + r.error.toUtf8()).constData());
        QVERIFY2(wellFormed(r.regex), source.constData());
        const auto matches = TestUtil::referenceMatches(r.regex, TestUtil::randomText(rng, 64, alphabet));
        for (size_t m = 0; m < matches.size(); ++m) {
            QVERIFY(matches[m].start <= matches[m].end);
            QVERIFY(m == 0 || matches[m - 1].end < matches[m].end);
        }
        nonEmptyResults += matches.empty() ? 0 : 1;
    }
    // Guards against a generator that only ever produces unmatchable patterns.
    QVERIFY(nonEmptyResults > 1000);
}

void TestRegexParser::garbageNeverCrashes()
{
    QRandomGenerator rng(99);
    const QByteArray meta("()[]{}|?*+^$.\\-,:^0123456789abdswxBDSW");
    static const QRegularExpression offsetPattern(QStringLiteral(" at offset (\\d+)$"));
    int errors = 0;
    for (int i = 0; i < 50000; ++i) {
        QByteArray pattern;
        const int len = int(rng.bounded(24));
        for (int j = 0; j < len; ++j)
            pattern += (i % 2) ? char(rng.bounded(256)) : meta[int(rng.bounded(int(meta.size())))];
        const RegexParser::Result r = RegexParser::parse(pattern, toFlags(int(rng.bounded(4))));
        if (r.error.isEmpty()) {
            QVERIFY2(wellFormed(r.regex), pattern.toHex().constData());
            continue;
        }
        ++errors;
        QVERIFY(!r.regex.isValid());
        const QRegularExpressionMatch m = offsetPattern.match(r.error);
        QVERIFY2(m.hasMatch(), qPrintable(r.error));
        QVERIFY(m.captured(1).toInt() < len);
    }
    QVERIFY(errors > 1000);
}

QTEST_GUILESS_MAIN(TestRegexParser)

#include "tst_regexparser.moc"
