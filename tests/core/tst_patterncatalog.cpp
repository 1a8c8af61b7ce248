// SPDX-License-Identifier: GPL-3.0-or-later
#include <set>

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QTest>

#include "automata/patterncatalog.h"
#include "automata/regexparser.h"
#include "rules/rulelistloader.h"
#include "testutildfa.h"
#include "testutilregex.h"

using Hitscope::CompileOptions;
using Hitscope::DfaGroup;
using Hitscope::PatternCatalog;
using Hitscope::Regex;
using Hitscope::RegexParser;
using Hitscope::RuleSet;

namespace {

using HitSet = std::set<std::pair<int, int64_t>>;

/// Adds a rule named `name` (defined at `line` of "rules.tsv") with one pattern per source.
void addRule(RuleSet &set, const QString &name, int line, const std::vector<QByteArray> &sources,
             bool literal = false, bool caseless = false)
{
    Hitscope::Rule rule;
    rule.name = name;
    rule.sourceFile = QStringLiteral("rules.tsv");
    rule.line = line;
    for (size_t i = 0; i < sources.size(); ++i) {
        Hitscope::Pattern p;
        p.id = sources.size() == 1 ? QStringLiteral("$") : QStringLiteral("$s%1").arg(i);
        p.source = sources[i];
        if (literal) {
            p.regex = Regex::fromLiteral(sources[i].constData(), int(sources[i].size()), caseless);
        } else {
            Hitscope::RegexFlags flags;
            flags.caseless = caseless;
            RegexParser::Result r = RegexParser::parse(sources[i], flags);
            if (!r.error.isEmpty())
                qFatal("bad test pattern %s: %s", sources[i].constData(), qPrintable(r.error));
            p.regex = std::move(r.regex);
        }
        p.ruleIndex = int(set.rules.size());
        rule.patterns.push_back(int(set.patterns.size()));
        set.patterns.push_back(std::move(p));
    }
    set.rules.push_back(std::move(rule));
}

/// Every hit of every group over `text`.
HitSet scanAll(const PatternCatalog &catalog, const QByteArray &text)
{
    HitSet out;
    for (const DfaGroup &g : catalog.groups)
        for (const TestUtil::DfaHit &h : TestUtil::scanDfa(g.dfa, text))
            out.emplace(h.pattern, h.end);
    return out;
}

/// The structural promises of compile(): each accepted pattern in exactly one group that lists it, groups
/// never mix bounded and unbounded patterns, lengths as the regexes say. Empty when they hold.
QByteArray checkStructure(const RuleSet &rules, const PatternCatalog &catalog)
{
    if (catalog.patterns.size() != rules.patterns.size())
        return "pattern info count";
    std::vector<int> seen(rules.patterns.size(), -1);
    for (size_t gi = 0; gi < catalog.groups.size(); ++gi) {
        const DfaGroup &g = catalog.groups[gi];
        if (g.patterns.empty())
            return "empty group";
        if (!TestUtil::checkDfaTables(g.dfa).isEmpty())
            return "group " + QByteArray::number(int(gi)) + ": " + TestUtil::checkDfaTables(g.dfa);
        int longest = 0;
        bool unbounded = false;
        for (int p : g.patterns) {
            if (seen[size_t(p)] >= 0)
                return "pattern in two groups";
            seen[size_t(p)] = int(gi);
            if (catalog.patterns[size_t(p)].group != int(gi))
                return "PatternInfo::group disagrees with the group's list";
            const int len = catalog.patterns[size_t(p)].maxLength;
            unbounded = unbounded || len < 0;
            longest = std::max(longest, len);
        }
        for (int p : g.patterns)
            if ((catalog.patterns[size_t(p)].maxLength < 0) != unbounded)
                return "bounded and unbounded patterns share a group";
        if (g.maxMatchLength != (unbounded ? -1 : longest))
            return "maxMatchLength";
        for (uint32_t e : g.dfa.acceptEntries)
            if (std::count(g.patterns.begin(), g.patterns.end(), int(Hitscope::Dfa::entryPattern(e))) == 0)
                return "accept entry for a pattern outside the group";
    }
    for (size_t p = 0; p < rules.patterns.size(); ++p) {
        const Hitscope::PatternInfo &info = catalog.patterns[p];
        if (seen[p] < 0 && info.group != -1)
            return "PatternInfo::group set for a pattern in no group";
        const Regex &re = rules.patterns[p].regex;
        if (info.minLength != re.minLength() || info.maxLength != re.maxLength())
            return "PatternInfo lengths";
    }
    int longestBounded = 0;
    for (const DfaGroup &g : catalog.groups)
        longestBounded = std::max(longestBounded, g.maxMatchLength);
    if (catalog.maxBoundedMatchLength() != longestBounded)
        return "maxBoundedMatchLength";
    size_t bytes = 0;
    for (const DfaGroup &g : catalog.groups)
        bytes += g.dfa.tableBytes();
    if (catalog.tableBytes() != bytes)
        return "tableBytes";
    return {};
}

QByteArray randomLiteral(QRandomGenerator &rng, int minLen, int maxLen)
{
    QByteArray s;
    const int len = minLen + int(rng.bounded(maxLen - minLen + 1));
    for (int i = 0; i < len; ++i)
        s += char(0x20 + rng.bounded(0x7f - 0x20));
    return s;
}

} // namespace

class TestPatternCatalog : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void rejectsEmptyMatches_data();
    void rejectsEmptyMatches();
    void rejectsExplodingPattern();
    void boundedAndUnboundedNeverShare();
    void splitsGroupsUnderTheBudget();
    void literalGroupsFindEveryOccurrence();
    void fingerprint();
    void tenThousandLiterals();
    void benchRegexes();
};

void TestPatternCatalog::rejectsEmptyMatches_data()
{
    QTest::addColumn<QByteArray>("pattern");
    QTest::addRow("star") << QByteArray("a*");
    QTest::addRow("optional") << QByteArray("(abc)?");
    QTest::addRow("empty branch") << QByteArray("abc|");
    QTest::addRow("assertion only") << QByteArray("\\b");
    QTest::addRow("anchors only") << QByteArray("^$");
}

void TestPatternCatalog::rejectsEmptyMatches()
{
    QFETCH(QByteArray, pattern);
    RuleSet rules;
    addRule(rules, QStringLiteral("good"), 3, { "abc" });
    addRule(rules, QStringLiteral("empty"), 7, { "xyz", pattern });
    addRule(rules, QStringLiteral("all rejected"), 9, { pattern });
    const PatternCatalog catalog = PatternCatalog::compile(rules);
    QCOMPARE(checkStructure(rules, catalog), QByteArray());

    QCOMPARE(catalog.rejections.size(), size_t(2));
    const Hitscope::Rejection &r = catalog.rejections.front();
    QCOMPARE(r.file, QStringLiteral("rules.tsv"));
    QCOMPARE(r.line, 7);
    QCOMPARE(r.rule, QStringLiteral("empty"));
    QVERIFY2(r.reason.contains(QLatin1String("$s1")) && r.reason.contains(QLatin1String("empty string")),
             qPrintable(r.reason));
    QCOMPARE(catalog.rejections.back().rule, QStringLiteral("all rejected"));
    QCOMPARE(catalog.patterns[2].group, -1);
    QCOMPARE(catalog.patterns[3].group, -1);
    // The rule's other pattern and the other rule still run.
    QVERIFY(catalog.patterns[0].group >= 0 && catalog.patterns[1].group >= 0);
    QCOMPARE(scanAll(catalog, "abc xyz"), (HitSet { { 0, 2 }, { 1, 6 } }));
}

void TestPatternCatalog::rejectsExplodingPattern()
{
    RuleSet rules;
    addRule(rules, QStringLiteral("fine"), 1, { "abc" });
    addRule(rules, QStringLiteral("boom"), 2, { "(a|b)*a(a|b){20}" });
    addRule(rules, QStringLiteral("also fine"), 3, { "b[ab]{3}c" });
    QElapsedTimer timer;
    timer.start();
    const PatternCatalog catalog = PatternCatalog::compile(rules);
    qInfo("compiled with one exploding pattern in %lld ms", qlonglong(timer.elapsed()));
    QVERIFY2(timer.elapsed() < 30000, "an exploding pattern must stop at the budget");
    QCOMPARE(checkStructure(rules, catalog), QByteArray());
    QCOMPARE(catalog.rejections.size(), size_t(1));
    QCOMPARE(catalog.rejections.front().rule, QStringLiteral("boom"));
    QCOMPARE(catalog.rejections.front().line, 2);
    QCOMPARE(catalog.rejections.front().reason, QStringLiteral("pattern $ explodes past 50000 DFA states"));
    QCOMPARE(catalog.patterns[1].group, -1);
    QCOMPARE(scanAll(catalog, "abc babac"), (HitSet { { 0, 2 }, { 2, 8 } }));

    // A smaller per-pattern budget names the smaller number.
    CompileOptions options;
    options.maxStatesPerGroup = 1000;
    options.maxStatesPerPattern = 2000;
    const PatternCatalog small = PatternCatalog::compile(rules, options);
    QCOMPARE(small.rejections.front().reason, QStringLiteral("pattern $ explodes past 2000 DFA states"));
}

void TestPatternCatalog::boundedAndUnboundedNeverShare()
{
    RuleSet rules;
    addRule(rules, QStringLiteral("lit"), 1, { "abc" }, true);
    addRule(rules, QStringLiteral("star"), 2, { "a.*b" });
    addRule(rules, QStringLiteral("counted"), 3, { "x{2,5}" });
    addRule(rules, QStringLiteral("plus"), 4, { "\\d+\\.\\d+" });
    addRule(rules, QStringLiteral("word"), 5, { "\\bfoo\\b", "ba[rz]" });
    const PatternCatalog catalog = PatternCatalog::compile(rules);
    QCOMPARE(checkStructure(rules, catalog), QByteArray());
    QVERIFY(catalog.rejections.empty());
    QCOMPARE(catalog.patterns[1].maxLength, -1);
    QCOMPARE(catalog.patterns[3].maxLength, -1);
    QCOMPARE(catalog.patterns[2].minLength, 2);
    QCOMPARE(catalog.patterns[2].maxLength, 5);
    QVERIFY(catalog.patterns[0].fixedLength());
    QCOMPARE(catalog.groups[size_t(catalog.patterns[1].group)].maxMatchLength, -1);
    QVERIFY(catalog.groups[size_t(catalog.patterns[1].group)].unbounded());
    QVERIFY(catalog.patterns[0].group != catalog.patterns[1].group);
    QCOMPARE(catalog.maxBoundedMatchLength(), 5);
    // Bounded regexes merge, and so do unbounded ones: two regex groups here, plus one for the literal.
    QCOMPARE(catalog.patterns[2].group, catalog.patterns[4].group);
    QCOMPARE(catalog.patterns[1].group, catalog.patterns[3].group);
    QCOMPARE(catalog.groups.size(), size_t(3));
    QVERIFY(catalog.tableBytes() > 0);
    QVERIFY(catalog.compileMs > 0);
    QCOMPARE(scanAll(catalog, "abc a1.5b xx foo baz"),
             (HitSet { { 0, 2 }, { 1, 1 }, { 1, 8 }, { 1, 17 }, { 2, 11 }, { 3, 7 }, { 4, 15 }, { 5, 19 } }));
}

void TestPatternCatalog::splitsGroupsUnderTheBudget()
{
    QRandomGenerator rng(4242);
    RuleSet rules;
    const QByteArray alphabet = "ab c";
    for (int i = 0; i < 300; ++i) {
        QByteArray source;
        for (;;) {
            source = TestUtil::randomRegexSource(rng, 2, alphabet);
            if (RegexParser::parse(source).error.isEmpty())
                break;
        }
        addRule(rules, QStringLiteral("r%1").arg(i), i + 1, { source });
    }
    CompileOptions options;
    options.maxStatesPerGroup = 300;
    options.maxStatesPerPattern = 5000;
    const PatternCatalog catalog = PatternCatalog::compile(rules, options);
    QCOMPARE(checkStructure(rules, catalog), QByteArray());
    int multi = 0;
    for (const DfaGroup &g : catalog.groups) {
        if (g.patterns.size() > 1) {
            ++multi;
            QVERIFY2(g.dfa.numStates <= 300, qPrintable(QString::number(g.dfa.numStates)));
        }
    }
    qInfo("300 random regexes: %zu groups (%d merged), %zu rejected", catalog.groups.size(), multi,
          catalog.rejections.size());
    QVERIFY(multi >= 5);
    for (size_t p = 0; p < rules.patterns.size(); ++p) {
        const bool rejected = catalog.patterns[p].group < 0;
        if (rules.patterns[p].regex.matchesEmpty())
            QVERIFY(rejected);
    }

    for (int t = 0; t < 40; ++t) {
        const QByteArray text = TestUtil::randomText(rng, 5 + int(rng.bounded(40)), alphabet + "x");
        HitSet expected;
        for (size_t p = 0; p < rules.patterns.size(); ++p)
            if (catalog.patterns[p].group >= 0)
                for (const TestUtil::RefMatch &m : TestUtil::referenceMatches(rules.patterns[p].regex, text))
                    expected.emplace(int(p), m.end);
        QCOMPARE(scanAll(catalog, text), expected);
    }
}

void TestPatternCatalog::literalGroupsFindEveryOccurrence()
{
    // Short literals over a small alphabet, some caseless: they overlap a lot and split into many groups.
    QRandomGenerator rng(77);
    RuleSet rules;
    std::vector<std::pair<QByteArray, bool>> literals;
    for (int i = 0; i < 2000; ++i) {
        const QByteArray lit = TestUtil::randomText(rng, 2 + int(rng.bounded(10)), "abcAB");
        const bool caseless = rng.bounded(4) == 0;
        literals.emplace_back(lit, caseless);
        addRule(rules, QStringLiteral("lits:%1").arg(i + 1), i + 1, { lit }, true, caseless);
    }
    CompileOptions options;
    options.maxStatesPerGroup = 2000;
    const PatternCatalog catalog = PatternCatalog::compile(rules, options);
    QCOMPARE(checkStructure(rules, catalog), QByteArray());
    QVERIFY(catalog.rejections.empty());
    QVERIFY(catalog.groups.size() > 3);
    for (const DfaGroup &g : catalog.groups)
        QVERIFY(g.patterns.size() == 1 || g.dfa.numStates <= 2000);

    const QByteArray text = TestUtil::randomText(rng, 3000, "abcAB ");
    const QByteArray folded = text.toLower();
    HitSet expected;
    for (size_t p = 0; p < literals.size(); ++p) {
        const QByteArray &hay = literals[p].second ? folded : text;
        const QByteArray needle = literals[p].second ? literals[p].first.toLower() : literals[p].first;
        for (qsizetype at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + 1))
            expected.emplace(int(p), at + needle.size() - 1);
    }
    QCOMPARE(scanAll(catalog, text), expected);
}

void TestPatternCatalog::fingerprint()
{
    RuleSet rules;
    addRule(rules, QStringLiteral("a"), 1, { "abc", "x[yz]+" });
    addRule(rules, QStringLiteral("b"), 2, { "hello" }, true);
    const PatternCatalog one = PatternCatalog::compile(rules);
    const PatternCatalog two = PatternCatalog::compile(rules);
    QCOMPARE(one.fingerprint, two.fingerprint);
    QVERIFY(one.fingerprint != 0);

    RuleSet changed = rules;
    changed.patterns[2].regex = Regex::fromLiteral("hellp", 5);
    QVERIFY(PatternCatalog::compile(changed).fingerprint != one.fingerprint);
    RuleSet renumbered = rules;
    std::swap(renumbered.patterns[0], renumbered.patterns[1]);
    QVERIFY(PatternCatalog::compile(renumbered).fingerprint != one.fingerprint);
}

void TestPatternCatalog::tenThousandLiterals()
{
    QRandomGenerator rng(10000);
    RuleSet rules;
    std::vector<QByteArray> literals;
    std::set<QByteArray> seen;
    size_t totalBytes = 0;
    while (literals.size() < 10000) {
        const QByteArray lit = randomLiteral(rng, 10, 40);
        if (!seen.insert(lit).second)
            continue;
        addRule(rules, QStringLiteral("lits_10000:%1").arg(literals.size() + 1), int(literals.size()) + 1, { lit },
                true);
        literals.push_back(lit);
        totalBytes += size_t(lit.size());
    }
    QElapsedTimer timer;
    timer.start();
    const PatternCatalog catalog = PatternCatalog::compile(rules);
    const qint64 ms = timer.elapsed();
    uint64_t states = 0;
    for (const DfaGroup &g : catalog.groups)
        states += g.dfa.numStates;
    qInfo("10,000 literals (%zu bytes): %lld ms (compileMs %.1f), %zu groups, %llu states, %.1f MiB of tables",
          totalBytes, qlonglong(ms), catalog.compileMs, catalog.groups.size(), qulonglong(states),
          double(catalog.tableBytes()) / (1 << 20));
    QCOMPARE(checkStructure(rules, catalog), QByteArray());
    QVERIFY(catalog.rejections.empty());

    // A text made of a sample of the literals and random filler: every occurrence of every literal found.
    QByteArray text;
    for (int i = 0; i < 300; ++i)
        text += literals[size_t(rng.bounded(int(literals.size())))] + randomLiteral(rng, 0, 20);
    HitSet expected;
    for (size_t p = 0; p < literals.size(); ++p)
        for (qsizetype at = text.indexOf(literals[p]); at >= 0; at = text.indexOf(literals[p], at + 1))
            expected.emplace(int(p), at + literals[p].size() - 1);
    QVERIFY(expected.size() >= 300);
    QCOMPARE(scanAll(catalog, text), expected);
}

void TestPatternCatalog::benchRegexes()
{
    // Reports on a regex list outside the repository (the benchmark's regexes.tsv), when asked to.
    const QString path = qEnvironmentVariable("HITSCOPE_CATALOG_REPORT");
    if (path.isEmpty())
        QSKIP("set HITSCOPE_CATALOG_REPORT to a regex list (.tsv) to print how it compiles");
    const RuleSet rules = Hitscope::RuleListLoader::load(path);
    for (const Hitscope::Rejection &r : rules.rejections)
        qInfo("load rejection: %s", qPrintable(r.toString()));
    const PatternCatalog catalog = PatternCatalog::compile(rules);
    QCOMPARE(checkStructure(rules, catalog), QByteArray());
    qInfo("%zu rules, %zu patterns: %zu groups, %.1f ms, %.1f KiB of tables, longest bounded match %d",
          rules.rules.size(), rules.patterns.size(), catalog.groups.size(), catalog.compileMs,
          double(catalog.tableBytes()) / 1024, catalog.maxBoundedMatchLength());
    for (size_t i = 0; i < catalog.groups.size(); ++i) {
        const DfaGroup &g = catalog.groups[i];
        QStringList names;
        for (int p : g.patterns)
            names << rules.rules[size_t(rules.patterns[size_t(p)].ruleIndex)].name;
        qInfo("group %zu: %u states x %u classes, max match %d: %s", i, g.dfa.numStates, g.dfa.numClasses,
              g.maxMatchLength, qPrintable(names.join(QLatin1Char(' '))));
    }
    for (const Hitscope::Rejection &r : catalog.rejections)
        qInfo("rejected: %s", qPrintable(r.toString()));
}

QTEST_GUILESS_MAIN(TestPatternCatalog)
#include "tst_patterncatalog.moc"
