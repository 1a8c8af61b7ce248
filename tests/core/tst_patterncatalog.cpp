// SPDX-License-Identifier: GPL-3.0-or-later
#include <map>
#include <set>

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "automata/atomprefilter.h"
#include "automata/dfabuilder.h"
#include "automata/patterncatalog.h"
#include "automata/startfinder.h"
#include "pattern/regexparser.h"
#include "rules/rulelistloader.h"
#include "testutildfa.h"
#include "testutilregex.h"

using Hitscope::CompileOptions;
using Hitscope::DfaBuilder;
using Hitscope::DfaGroup;
using Hitscope::PatternCatalog;
using Hitscope::Regex;
using Hitscope::RegexParser;
using Hitscope::RuleSet;
using Hitscope::StartFinder;

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

/// (pattern, start, end) of every match.
using MatchSet = std::set<std::tuple<int, int64_t, int64_t>>;

/**
 * What a scan reports, the way the scanner gets it: raw ends from the groups' DFAs over
 * text[begin, scanEnd) (ends kept in [ownBegin, ownEnd)), then StartFinder on all ends of a pattern at once,
 * verifying the patterns that need it and dropping the ends it rejects.
 */
MatchSet resolvedMatches(const PatternCatalog &catalog, const StartFinder &finder, const QByteArray &text,
                         qsizetype segment = 0, int overlap = 0, int *dropped = nullptr)
{
    std::map<int, std::vector<int64_t>> ends;
    const qsizetype step = segment > 0 ? segment : std::max<qsizetype>(text.size(), 1);
    for (qsizetype own = 0; own < text.size(); own += step) {
        const qsizetype ownEnd = std::min(text.size(), own + step);
        const qsizetype begin = std::max<qsizetype>(0, own - overlap);
        const QByteArray window = segment > 0 ? text.left(std::min(text.size(), ownEnd + 1)) : text;
        for (const DfaGroup &g : catalog.groups) {
            if (g.unbounded() && own > 0)
                continue; // unbounded groups run over the whole text once
            for (const TestUtil::DfaHit &h : TestUtil::scanDfa(g.dfa, g.unbounded() ? text : window,
                                                               g.unbounded() ? 0 : begin))
                if (g.unbounded() || (h.end >= own && h.end < ownEnd))
                    ends[h.pattern].push_back(h.end);
        }
    }
    const StartFinder::ByteAt byteAt = [&text](int64_t at) { return uint8_t(text[qsizetype(at)]); };
    MatchSet out;
    std::vector<int64_t> starts;
    for (auto &[pattern, list] : ends) {
        std::sort(list.begin(), list.end());
        finder.leftmostStarts(pattern, list, text.size(), byteAt, starts, catalog.patterns[size_t(pattern)].verify);
        for (size_t i = 0; i < list.size(); ++i) {
            if (starts[i] >= 0)
                out.emplace(pattern, starts[i], list[i]);
            else if (dropped)
                ++*dropped;
        }
    }
    return out;
}

/// What the reference matcher finds for the patterns the catalog accepted.
MatchSet referenceMatches(const RuleSet &rules, const PatternCatalog &catalog, const QByteArray &text)
{
    MatchSet out;
    for (size_t p = 0; p < rules.patterns.size(); ++p)
        if (catalog.patterns[p].group >= 0)
            for (const TestUtil::RefMatch &m : TestUtil::referenceMatches(rules.patterns[p].regex, text))
                out.emplace(int(p), m.start, m.end);
    return out;
}

QByteArray describeDifference(const MatchSet &got, const MatchSet &want)
{
    QByteArray s;
    auto list = [&s](const char *what, const MatchSet &a, const MatchSet &b) {
        std::vector<std::tuple<int, int64_t, int64_t>> only;
        std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only));
        for (size_t i = 0; i < only.size() && i < 5; ++i)
            s += QByteArray(what) + " p" + QByteArray::number(std::get<0>(only[i])) + " ["
                + QByteArray::number(qint64(std::get<1>(only[i]))) + ","
                + QByteArray::number(qint64(std::get<2>(only[i]))) + "] ";
    };
    list("extra", got, want);
    list("missing", want, got);
    return s;
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
        // Bounded patterns join unbounded ones only in groups the CPU engine walks whole anyway.
        const bool covered = catalog.prefilter && catalog.prefilter->covers(int(gi));
        for (int p : g.patterns)
            if ((catalog.patterns[size_t(p)].maxLength < 0) != unbounded && covered)
                return "bounded and unbounded patterns share a group scanned around atoms";
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
    void relaxesExplodingPatterns_data();
    void relaxesExplodingPatterns();
    void boundedJoinsUnboundedOnlyWhereWalkedWhole();
    void splitsGroupsUnderTheBudget();
    void groupingHintRebuildsTheSameCatalog();
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
    // (a|b)*a(a|b){20} minimizes to a few states, but its subset construction tracks every 'a' among the last
    // 20 bytes: relaxed to (a|b)*a(a|b)+ it fits, and every end it finds is verified. "relaxed" tracks every "a-"
    // among the last 48 bytes; as a-[ab-]+ it compiles too. Only a pattern that explodes with every count
    // relaxed is rejected: a literal longer than the per-pattern budget.
    RuleSet rules;
    addRule(rules, QStringLiteral("fine"), 1, { "abc" });
    addRule(rules, QStringLiteral("boom"), 2, { "(a|b)*a(a|b){20}" });
    addRule(rules, QStringLiteral("also fine"), 3, { "b[ab]{3}c" });
    addRule(rules, QStringLiteral("relaxed"), 4, { "a-[ab-]{10,48}" });
    QElapsedTimer timer;
    timer.start();
    const PatternCatalog catalog = PatternCatalog::compile(rules);
    qInfo("compiled with two exploding patterns in %lld ms", qlonglong(timer.elapsed()));
    QVERIFY2(timer.elapsed() < 30000, "an exploding pattern must stop at the budget");
    QCOMPARE(checkStructure(rules, catalog), QByteArray());
    QVERIFY2(catalog.rejections.empty(),
             qPrintable(catalog.rejections.empty() ? QString() : catalog.rejections.front().reason));
    QVERIFY(catalog.patterns[1].group >= 0 && catalog.patterns[1].verify);
    QVERIFY(!catalog.patterns[0].verify && !catalog.patterns[2].verify);
    QVERIFY(catalog.patterns[3].group >= 0);
    QVERIFY(catalog.patterns[3].verify);
    QCOMPARE(catalog.patterns[3].maxLength, 50);

    // The relaxed DFAs end past the exact ones; verification keeps exactly the true matches.
    const StartFinder finder(rules);
    QRandomGenerator rng(20);
    for (int t = 0; t < 20; ++t) {
        const QByteArray text = TestUtil::randomText(rng, 20 + int(rng.bounded(100)), t % 2 ? "ab-" : "ab-bbbbb c");
        QCOMPARE(resolvedMatches(catalog, finder, text), referenceMatches(rules, catalog, text));
    }

    // A literal over the per-pattern budget cannot be relaxed: it is rejected, and the reason names the budget.
    RuleSet longLiteral;
    addRule(longLiteral, QStringLiteral("fine"), 1, { "abc" });
    addRule(longLiteral, QStringLiteral("long"), 2, { QByteArray(3000, 'q') }, true);
    CompileOptions options;
    options.maxStatesPerGroup = 1000;
    options.maxStatesPerPattern = 2000;
    const PatternCatalog small = PatternCatalog::compile(longLiteral, options);
    QCOMPARE(small.rejections.size(), size_t(1));
    QCOMPARE(small.rejections.front().rule, QStringLiteral("long"));
    QCOMPARE(small.rejections.front().reason, QStringLiteral("pattern $ explodes past 2000 DFA states"));
}

void TestPatternCatalog::relaxesExplodingPatterns_data()
{
    // Each pattern with what to plant: a true match around a variable part of `min`..`max` bytes from
    // `inside`, and near misses one byte outside that range.
    QTest::addColumn<QByteArray>("pattern");
    QTest::addColumn<bool>("caseless");
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<QByteArray>("inside");
    QTest::addColumn<int>("min");
    QTest::addColumn<int>("max");
    QTest::addColumn<QByteArray>("tail");
    QTest::addColumn<QByteArray>("filler");
    const QByteArray winPath = R"re([A-Za-z]:\\(Windows|Users|ProgramData)\\[^\x00\r\n]{1,64}\.(exe|dll|bat|ps1))re";
    QTest::addRow("windows path") << winPath << false << QByteArray(R"(C:\Windows\)") << QByteArray(R"(ab\. Cx:)")
                                  << 1 << 64 << QByteArray(".exe") << QByteArray("ab\\.:CUsers\r\n");
    QTest::addRow("windows path, caseless")
        << winPath << true << QByteArray(R"(d:\users\)") << QByteArray(R"(ab\. DLL)") << 1 << 64 << QByteArray(".DlL")
        << QByteArray("ab\\.:dUSERS\n");
    QTest::addRow("user agent") << QByteArray(R"re(User-Agent:\s*Mozilla/[45]\.0 \([^)]{5,120}\))re") << false
                                << QByteArray("User-Agent: Mozilla/5.0 (") << QByteArray("ab; (x") << 5 << 120
                                << QByteArray(")") << QByteArray("a(); ");
    QTest::addRow("curl pipe sh") << QByteArray(R"re((curl|wget)\s+[^|;\n]{1,200}\|\s*(ba)?sh)re") << false
                                  << QByteArray("curl ") << QByteArray("ab -curl") << 1 << 200
                                  << QByteArray("| bash") << QByteArray("a |;\nsh");
    QTest::addRow("slack token") << QByteArray("xox[baprs]-[0-9A-Za-z-]{10,48}") << false << QByteArray("xoxb-")
                                 << QByteArray("aZ9-xob") << 10 << 48 << QByteArray(" ") << QByteArray("xo- b");
    QTest::addRow("gcc ident") << QByteArray(R"re(GCC: \([^)\n]{1,60}\) [0-9]+\.[0-9]+)re") << false
                               << QByteArray("GCC: (") << QByteArray("Deb 12(") << 1 << 60
                               << QByteArray(") 12.2") << QByteArray("G) 1.\n");
}

void TestPatternCatalog::relaxesExplodingPatterns()
{
    // Patterns whose exact DFAs explode compile relaxed; the scanner's path (raw ends of the relaxed DFA,
    // then StartFinder with verify on the exact pattern) reports exactly the reference matches, for
    // matches and near misses planted in random text, scanned whole and in overlapping segments.
    QFETCH(QByteArray, pattern);
    QFETCH(bool, caseless);
    QFETCH(QByteArray, head);
    QFETCH(QByteArray, inside);
    QFETCH(int, min);
    QFETCH(int, max);
    QFETCH(QByteArray, tail);
    QFETCH(QByteArray, filler);
    RuleSet rules;
    addRule(rules, QStringLiteral("relaxed"), 1, { pattern }, false, caseless);
    addRule(rules, QStringLiteral("neighbour"), 2, { "x[ab]{2,4}y" });
    QVERIFY(DfaBuilder::build({ { &rules.patterns[0].regex, 0 } }, 50000).exceededBudget);
    QElapsedTimer timer;
    timer.start();
    const PatternCatalog catalog = PatternCatalog::compile(rules);
    const qint64 compileMs = timer.elapsed();
    QCOMPARE(checkStructure(rules, catalog), QByteArray());
    QVERIFY2(catalog.rejections.empty(),
             catalog.rejections.empty() ? "" : qPrintable(catalog.rejections.front().reason));
    const Hitscope::PatternInfo &info = catalog.patterns[0];
    QVERIFY(info.verify);
    QVERIFY(!catalog.patterns[1].verify);
    QCOMPARE(info.maxLength, rules.patterns[0].regex.maxLength());
    if (info.maxLength > 0) {
        // Bounded exactly, so it is scanned with the bounded patterns, in segments that overlap by its length.
        QCOMPARE(catalog.patterns[0].group, catalog.patterns[1].group);
        QCOMPARE(catalog.maxBoundedMatchLength(), info.maxLength);
    } else {
        QVERIFY(catalog.groups[size_t(info.group)].unbounded());
    }

    // With a cache folder, the slow builds that found the explosion are kept, and a later compile reads them: the
    // same relaxed catalog, without building them again.
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        CompileOptions cached;
        cached.groupingHintDir = dir.path();
        const PatternCatalog first = PatternCatalog::compile(rules, cached);
        QVERIFY(!QDir(dir.path()).entryList({ QStringLiteral("*.dfa") }, QDir::Files).isEmpty());
        const PatternCatalog second = PatternCatalog::compile(rules, cached);
        QCOMPARE(first.solosFromCache, 0);
        QVERIFY(second.solosFromCache > 0);
        for (const PatternCatalog *c : { &first, &second }) {
            QCOMPARE(c->fingerprint(), catalog.fingerprint());
            QVERIFY(c->patterns[0].verify);
            QCOMPARE(c->patterns[0].group, catalog.patterns[0].group);
        }
    }

    const PatternCatalog alone = PatternCatalog::compile([&] {
        RuleSet one;
        one.patterns.push_back(rules.patterns[0]);
        one.rules.push_back(rules.rules[0]);
        return one;
    }());
    const Regex reversed = rules.patterns[0].regex.reversed();
    const DfaBuilder::Result exactReversed = DfaBuilder::build({ { &reversed, 0 } }, 100000, true);
    qInfo("compiled in %lld ms: relaxed forward DFA %u states; exact reversed DFA %s states", qlonglong(compileMs),
          alone.groups.front().dfa.numStates,
          exactReversed.exceededBudget ? "over 100000" : qPrintable(QString::number(exactReversed.dfa.numStates)));

    const StartFinder finder(rules);
    QRandomGenerator rng(qHash(pattern) + caseless);
    int planted = 0;
    int found = 0;
    int dropped = 0;
    for (int t = 0; t < 6; ++t) {
        QByteArray text;
        while (text.size() < 1200) {
            text += TestUtil::randomText(rng, int(rng.bounded(12)), filler);
            const int kind = int(rng.bounded(6));
            int len = min + int(rng.bounded(max - min + 1));
            if (kind == 0)
                len = max + 1; // one byte too long
            else if (kind == 1 && min > 1)
                len = min - 1; // one byte too short
            else if (kind == 2)
                len = rng.bounded(2) ? min : max;
            text += head + TestUtil::randomText(rng, len, inside) + (kind == 3 ? tail.left(tail.size() - 1) : tail);
            text += rng.bounded(4) ? QByteArray("x") + "ab"[rng.bounded(2)] + "y" : QByteArray();
            ++planted;
        }
        const MatchSet want = referenceMatches(rules, catalog, text);
        for (const auto &m : want)
            found += std::get<0>(m) == 0;
        const MatchSet whole = resolvedMatches(catalog, finder, text, 0, 0, &dropped);
        QVERIFY2(whole == want, describeDifference(whole, want).constData());
        const int overlap = catalog.maxBoundedMatchLength() - 1;
        const MatchSet segmented = resolvedMatches(catalog, finder, text, 97, overlap);
        QVERIFY2(segmented == want, describeDifference(segmented, want).constData());
    }
    qInfo("%d planted, %d matches, %d ends of the relaxed DFA dropped", planted, found, dropped);
    QVERIFY(found > planted / 3);
    QVERIFY(dropped > 0);
}

void TestPatternCatalog::boundedJoinsUnboundedOnlyWhereWalkedWhole()
{
    RuleSet rules;
    addRule(rules, QStringLiteral("lit"), 1, { "abc" }, true);
    addRule(rules, QStringLiteral("star"), 2, { "a.*b" });
    addRule(rules, QStringLiteral("counted"), 3, { "x{2,40}" });
    addRule(rules, QStringLiteral("plus"), 4, { "\\d+\\.\\d+" });
    addRule(rules, QStringLiteral("word"), 5, { "\\bfoo\\b", "ba[rz]" });
    const PatternCatalog catalog = PatternCatalog::compile(rules);
    QCOMPARE(checkStructure(rules, catalog), QByteArray());
    QVERIFY(catalog.rejections.empty());
    QCOMPARE(catalog.patterns[1].maxLength, -1);
    QCOMPARE(catalog.patterns[3].maxLength, -1);
    QCOMPARE(catalog.patterns[2].minLength, 2);
    QCOMPARE(catalog.patterns[2].maxLength, 40);
    QVERIFY(catalog.patterns[0].fixedLength());
    QCOMPARE(catalog.groups[size_t(catalog.patterns[1].group)].maxMatchLength, -1);
    QVERIFY(catalog.groups[size_t(catalog.patterns[1].group)].unbounded());
    QVERIFY(catalog.patterns[0].group != catalog.patterns[1].group);
    // Those the CPU engine screens whole ("abc", "ba[rz]") or scans around their atoms (\bfoo\b) never share a
    // group with those it cannot (x{2,40}: too many lengths to screen, no strong atom). Those it walks whole
    // share one walk, bounded and unbounded alike: the group is unbounded, and only the covered group sets the
    // segments' overlap.
    QCOMPARE(catalog.maxBoundedMatchLength(), 3);
    QCOMPARE(catalog.patterns[0].group, catalog.patterns[5].group);
    QCOMPARE(catalog.patterns[0].group, catalog.patterns[4].group);
    QVERIFY(catalog.patterns[0].group != catalog.patterns[2].group);
    QCOMPARE(catalog.patterns[1].group, catalog.patterns[3].group);
    QCOMPARE(catalog.patterns[1].group, catalog.patterns[2].group);
    QVERIFY(catalog.groups[size_t(catalog.patterns[2].group)].unbounded());
    QCOMPARE(catalog.groups.size(), size_t(2));
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

    // Raw ends are exact for all but the relaxed patterns; after start finding and verification, all are.
    const StartFinder finder(rules);
    const int relaxed = int(std::count_if(catalog.patterns.begin(), catalog.patterns.end(),
                                          [](const Hitscope::PatternInfo &info) { return info.verify; }));
    qInfo("%d of them relaxed and verified", relaxed);
    for (int t = 0; t < 40; ++t) {
        const QByteArray text = TestUtil::randomText(rng, 5 + int(rng.bounded(40)), alphabet + "x");
        HitSet expected;
        for (size_t p = 0; p < rules.patterns.size(); ++p)
            if (catalog.patterns[p].group >= 0 && !catalog.patterns[p].verify)
                for (const TestUtil::RefMatch &m : TestUtil::referenceMatches(rules.patterns[p].regex, text))
                    expected.emplace(int(p), m.end);
        HitSet raw = scanAll(catalog, text);
        std::erase_if(raw, [&](const auto &h) { return catalog.patterns[size_t(h.first)].verify; });
        QCOMPARE(raw, expected);
        const MatchSet got = resolvedMatches(catalog, finder, text);
        const MatchSet want = referenceMatches(rules, catalog, text);
        QVERIFY2(got == want, describeDifference(got, want).constData());
    }
}

void TestPatternCatalog::groupingHintRebuildsTheSameCatalog()
{
    // Random regexes under a small budget: chunks fail, halve and merge. A compile with the hint of the last one
    // builds the same tables without failing builds; a hint that is unreadable, names other patterns or names a
    // group that no longer fits is ignored, and the tables are the same again. A rejected pattern and strong
    // literals (the atom prefilter) come out the same either way.
    QRandomGenerator rng(777);
    RuleSet rules;
    for (int i = 0; i < 150; ++i) {
        QByteArray source;
        for (;;) {
            source = TestUtil::randomRegexSource(rng, 2, "ab c");
            if (RegexParser::parse(source).error.isEmpty() && !RegexParser::parse(source).regex.matchesEmpty())
                break;
        }
        addRule(rules, QStringLiteral("r%1").arg(i), i + 1, { source });
    }
    addRule(rules, QStringLiteral("empty"), 200, { "a*" });
    addRule(rules, QStringLiteral("lits"), 201, { "hitscope-one", "strong-literal", "third_literal" }, true);
    addRule(rules, QStringLiteral("atoms"), 202, { "xyzzy[0-9]{2}qq", "plugh[a-f]{3}zz" });
    CompileOptions options;
    options.maxStatesPerGroup = 300;
    options.maxStatesPerPattern = 5000;
    const PatternCatalog plain = PatternCatalog::compile(rules, options);
    QVERIFY(plain.groups.size() > 5);
    QCOMPARE(plain.rejections.size(), size_t(1));
    QVERIFY(!plain.groupedFromHint);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    options.groupingHintDir = dir.path();
    auto sameCatalog = [&](const PatternCatalog &c) {
        if (c.fingerprint() != plain.fingerprint() || c.groups.size() != plain.groups.size()
            || c.rejections.size() != plain.rejections.size() || bool(c.prefilter) != bool(plain.prefilter))
            return false;
        for (size_t g = 0; g < c.groups.size(); ++g)
            if (c.groups[g].patterns != plain.groups[g].patterns || c.groups[g].maxMatchLength != plain.groups[g].maxMatchLength)
                return false;
        for (size_t p = 0; p < c.patterns.size(); ++p)
            if (c.patterns[p].group != plain.patterns[p].group || c.patterns[p].verify != plain.patterns[p].verify)
                return false;
        return !c.prefilter || (c.prefilter->groupReach == plain.prefilter->groupReach
                                && c.prefilter->groupLeft == plain.prefilter->groupLeft
                                && c.prefilter->screened == plain.prefilter->screened
                                && c.prefilter->atomGroup == plain.prefilter->atomGroup);
    };
    const PatternCatalog first = PatternCatalog::compile(rules, options);
    QVERIFY(!first.groupedFromHint);
    QVERIFY(sameCatalog(first));
    const QStringList hints = QDir(dir.path()).entryList({ QStringLiteral("*.groups") }, QDir::Files);
    QCOMPARE(hints.size(), 1);
    const QString hintPath = dir.filePath(hints.front());
    QFile hintFile(hintPath);
    QVERIFY(hintFile.open(QIODevice::ReadOnly));
    const QByteArrayList hintLines = hintFile.readAll().split('\n');
    hintFile.close();

    const PatternCatalog hinted = PatternCatalog::compile(rules, options);
    QVERIFY(hinted.groupedFromHint);
    QVERIFY(sameCatalog(hinted));
    QCOMPARE(checkStructure(rules, hinted), QByteArray());
    // The hinted compile kept its merged group DFAs: the next one reads them instead of building them, with
    // the same tables. Files that do not read back (damaged, or of another format) are built again.
    const QStringList dfas = QDir(dir.path()).entryList({ QStringLiteral("*.dfa") }, QDir::Files);
    QVERIFY(!dfas.isEmpty());
    const PatternCatalog cached = PatternCatalog::compile(rules, options);
    QVERIFY(cached.groupedFromHint);
    QVERIFY(cached.groupsFromCache > 0);
    QVERIFY(sameCatalog(cached));
    QCOMPARE(checkStructure(rules, cached), QByteArray());
    for (size_t g = 0; g < cached.groups.size(); ++g)
        QVERIFY(cached.groups[g].dfa.transitions == hinted.groups[g].dfa.transitions);
    for (const QString &name : dfas) {
        QFile f(dir.filePath(name));
        QVERIFY(f.open(QIODevice::ReadWrite));
        QByteArray bytes = f.readAll();
        bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x5a);
        QVERIFY(f.seek(0));
        QCOMPARE(f.write(bytes), bytes.size());
    }
    const PatternCatalog rebuilt = PatternCatalog::compile(rules, options);
    QVERIFY(rebuilt.groupedFromHint);
    QCOMPARE(rebuilt.groupsFromCache, 0);
    QVERIFY(sameCatalog(rebuilt));
    QCOMPARE(checkStructure(rules, rebuilt), QByteArray());

    auto writeHint = [&](const QByteArray &text) {
        QFile f(hintPath);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        QCOMPARE(f.write(text), text.size());
    };
    auto ignored = [&](const QByteArray &text) {
        writeHint(text);
        const PatternCatalog c = PatternCatalog::compile(rules, options);
        QVERIFY(!c.groupedFromHint);
        QVERIFY(sameCatalog(c));
    };
    // Unreadable; an id that does not exist; the right grouping with one id named twice (another missing);
    // every pattern in one group, over budget.
    ignored("not a hint\n1 2 3\n");
    ignored("hitscope grouping hint 2\n0 1 99999\n");
    QByteArrayList twice = hintLines;
    QByteArrayList ids = twice[1].split(' ');
    QVERIFY(ids.size() >= 2 || twice.size() > 3);
    if (ids.size() >= 2)
        ids[1] = ids[0];
    else
        ids[0] = twice[2].split(' ').front();
    twice[1] = ids.join(' ');
    ignored(twice.join('\n'));
    QByteArray all = "hitscope grouping hint 2\n";
    for (const DfaGroup &g : plain.groups)
        for (int p : g.patterns)
            all += QByteArray::number(p) + ' ';
    all.chop(1);
    ignored(all + '\n');
    // Each of those compiles wrote the hint again: the next one uses it.
    QVERIFY(PatternCatalog::compile(rules, options).groupedFromHint);

    // A hint that fits but groups otherwise (every pattern alone) is used: other tables, the same matches.
    QByteArray singles = "hitscope grouping hint 2\n";
    for (size_t p = 0; p < plain.patterns.size(); ++p)
        if (plain.patterns[p].group >= 0)
            singles += QByteArray::number(qulonglong(p)) + '\n';
    writeHint(singles);
    const PatternCatalog alone = PatternCatalog::compile(rules, options);
    QVERIFY(alone.groupedFromHint);
    QVERIFY(alone.groups.size() > plain.groups.size());
    QCOMPARE(checkStructure(rules, alone), QByteArray());
    QCOMPARE(alone.rejections.size(), plain.rejections.size());
    for (int t = 0; t < 30; ++t) {
        const QByteArray text = TestUtil::randomText(rng, 20 + int(rng.bounded(200)), "ab cxyzq0123plugh");
        QCOMPARE(scanAll(alone, text), scanAll(plain, text));
    }

    // Other patterns have a hint of their own.
    addRule(rules, QStringLiteral("extra"), 999, { "abcab" });
    const PatternCatalog other = PatternCatalog::compile(rules, options);
    QVERIFY(!other.groupedFromHint);
    QCOMPARE(QDir(dir.path()).entryList({ QStringLiteral("*.groups") }, QDir::Files).size(), 2);

    // The folder keeps the latest 64 hints.
    for (int i = 0; i < 80; ++i) {
        QFile old(dir.filePath(QStringLiteral("%1.groups").arg(i, 16, 16, QLatin1Char('0')).replace(0, 1, QLatin1Char('f'))));
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("hitscope grouping hint 2\n");
        old.flush();
        QVERIFY(old.setFileTime(QDateTime::currentDateTime().addDays(-1), QFileDevice::FileModificationTime));
    }
    addRule(rules, QStringLiteral("another"), 1000, { "bcabc" });
    QVERIFY(!PatternCatalog::compile(rules, options).groupedFromHint);
    QCOMPARE(QDir(dir.path()).entryList({ QStringLiteral("*.groups") }, QDir::Files).size(), 64);
    QVERIFY(PatternCatalog::compile(rules, options).groupedFromHint);
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
    QCOMPARE(one.fingerprint(), two.fingerprint());
    QVERIFY(one.fingerprint() != 0);

    RuleSet changed = rules;
    changed.patterns[2].regex = Regex::fromLiteral("hellp", 5);
    QVERIFY(PatternCatalog::compile(changed).fingerprint() != one.fingerprint());
    RuleSet renumbered = rules;
    std::swap(renumbered.patterns[0], renumbered.patterns[1]);
    QVERIFY(PatternCatalog::compile(renumbered).fingerprint() != one.fingerprint());
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
    for (size_t p = 0; p < rules.patterns.size(); ++p)
        if (catalog.patterns[p].verify)
            qInfo("relaxed, verified: %s", qPrintable(rules.rules[size_t(rules.patterns[p].ruleIndex)].name));
    for (const Hitscope::Rejection &r : catalog.rejections)
        qInfo("rejected: %s", qPrintable(r.toString()));
}

QTEST_GUILESS_MAIN(TestPatternCatalog)
#include "tst_patterncatalog.moc"
