// SPDX-License-Identifier: GPL-3.0-or-later
#include <map>
#include <set>
#include <thread>

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include "automata/dfabuilder.h"
#include "automata/dfacache.h"
#include "automata/startfinder.h"
#include "pattern/nfa.h"
#include "pattern/regexparser.h"
#include "testutil.h"
#include "testutildfa.h"
#include "testutilregex.h"

using Hitscope::Assertion;
using Hitscope::ByteSet;
using Hitscope::Dfa;
using Hitscope::DfaBuilder;
using Hitscope::DfaCache;
using Hitscope::Regex;
using Hitscope::RegexParser;
using Type = Hitscope::Regex::Node::Type;

namespace {

using HitSet = std::set<std::pair<int, int64_t>>;

Regex parse(const QByteArray &source, bool caseless = false)
{
    Hitscope::RegexFlags flags;
    flags.caseless = caseless;
    RegexParser::Result r = RegexParser::parse(source, flags);
    if (!r.error.isEmpty())
        qFatal("bad test pattern %s: %s", source.constData(), qPrintable(r.error));
    return r.regex;
}


QByteArray describe(const Regex &re)
{
    return re.isValid() ? TestUtil::describeRegex(re, re.root) : QByteArray("<invalid>");
}

/// Hits of a DFA over the whole text; fails the test on a duplicate report.
HitSet dfaHits(const Dfa &dfa, const QByteArray &text, qsizetype begin = 0)
{
    HitSet out;
    for (const TestUtil::DfaHit &h : TestUtil::scanDfa(dfa, text, begin))
        if (!out.emplace(h.pattern, h.end).second)
            qWarning("duplicate report of pattern %d at %lld", h.pattern, qlonglong(h.end));
    return out;
}

size_t dfaReportCount(const Dfa &dfa, const QByteArray &text, qsizetype begin = 0)
{
    return TestUtil::scanDfa(dfa, text, begin).size();
}

/// `re` restricted to matches starting at `begin` (anchored) or at `begin` or later, through the reference:
/// ^ .{begin} re (anchored) or ^ .{begin,} re, whose matches all start at 0.
Regex startingFrom(const Regex &re, int begin, bool anchored)
{
    Regex r = re;
    ByteSet any;
    any.set();
    const int prefix = r.addRepeat(r.addBytes(any), begin, anchored ? begin : -1);
    r.root = r.addConcat({ r.addAssert(Assertion::FileStart), prefix, re.root });
    return r;
}

/// Moore's refinement over the whole table: the number of states of the minimal equivalent DFA.
int minimalStateCount(const Dfa &dfa)
{
    const uint32_t n = dfa.numStates;
    const uint32_t c = dfa.numClasses;
    std::vector<int> block(n);
    {
        std::map<std::vector<uint32_t>, int> ids;
        for (uint32_t s = 0; s < n; ++s) {
            std::vector<uint32_t> key(dfa.acceptEntries.begin() + dfa.acceptIndex[s],
                                      dfa.acceptEntries.begin() + dfa.acceptIndex[s + 1]);
            block[s] = ids.emplace(key, int(ids.size())).first->second;
        }
    }
    int count = 0;
    for (;;) {
        std::map<std::vector<int>, int> ids;
        std::vector<int> next(n);
        for (uint32_t s = 0; s < n; ++s) {
            std::vector<int> key { block[s] };
            for (uint32_t k = 0; k < c; ++k)
                key.push_back(block[(dfa.transitions[size_t(s) * c + k] & Dfa::kStateMask) / c]);
            next[s] = ids.emplace(key, int(ids.size())).first->second;
        }
        block = std::move(next);
        if (int(ids.size()) == count)
            return count;
        count = int(ids.size());
    }
}

using Group = TestUtil::PatternGroup;

const QByteArrayList kAlphabets { "ab", "ab ", "a_ 1", "abc", "aA -" };

/// HITSCOPE_DFA_STRESS=k runs k times as many random cases (new seeds), for soak runs by hand.
int stress()
{
    return std::max(1, qEnvironmentVariableIntValue("HITSCOPE_DFA_STRESS"));
}

} // namespace

class TestDfaBuilder : public QObject
{
    Q_OBJECT

private:
    /// Compares every scan mode of one group against the reference on `texts`; returns false on a mismatch.
    bool checkGroup(const Group &g, const QByteArrayList &texts, int maxStates, int *skipped, QRandomGenerator &rng);

private Q_SLOTS:
    void handWritten_data();
    void handWritten();
    void byteClasses();
    void deadStates();
    void budgetStopsEarly();
    void hugeRepeatIsRefused();
    void cacheGivesTheBuiltDfaAndIgnoresBadFiles();
    void prefixSharingKeepsLiteralsSmall();
    void differentialSingle_data();
    void differentialSingle();
    void differentialParsed();
    void differentialGroups();
    void minimizationIsMinimal();
    void startFinder_data();
    void startFinder();
    void startFinderNfaFallback();
    void startFinderThreads();
};

void TestDfaBuilder::handWritten_data()
{
    QTest::addColumn<QByteArrayList>("patterns");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("expected"); // "pattern:end ..." sorted

    QTest::addRow("overlapping literals") << QByteArrayList { "abc", "bc", "c" } << QByteArray("abcabc")
                                          << QByteArray("0:2 0:5 1:2 1:5 2:2 2:5");
    QTest::addRow("self-overlap") << QByteArrayList { "aa" } << QByteArray("aaaa") << QByteArray("0:1 0:2 0:3");
    QTest::addRow("literal is a prefix of another")
        << QByteArrayList { "ab", "abcd" } << QByteArray("abcdab") << QByteArray("0:1 0:5 1:3");
    QTest::addRow("fullword") << QByteArrayList { "\\bab\\b" } << QByteArray("ab ab_ab ab") << QByteArray("0:1 0:10");
    QTest::addRow("trailing \\b decided by the next byte (Prev)")
        << QByteArrayList { "a\\b" } << QByteArray("a aa a") << QByteArray("0:0 0:3 0:5");
    QTest::addRow("\\B") << QByteArrayList { "a\\Bb", "b\\B" } << QByteArray("ab a b abb")
                         << QByteArray("0:1 0:8 1:8");
    QTest::addRow("^ only at offset 0") << QByteArrayList { "^ab" } << QByteArray("abab") << QByteArray("0:1");
    QTest::addRow("$ only at the end") << QByteArrayList { "ab$" } << QByteArray("abab") << QByteArray("0:3");
    QTest::addRow("^ and $") << QByteArrayList { "^a+$" } << QByteArray("aaa") << QByteArray("0:2");
    QTest::addRow("empty matches are not hits") << QByteArrayList { "a*", "\\b" } << QByteArray("baa")
                                                << QByteArray("0:1 0:2");
    QTest::addRow("unbounded") << QByteArrayList { "a.*b" } << QByteArray("xaxbxb") << QByteArray("0:3 0:5");
    QTest::addRow("counted") << QByteArrayList { "a{2,3}" } << QByteArray("aaaa") << QByteArray("0:1 0:2 0:3");
    QTest::addRow("two patterns end at the same byte")
        << QByteArrayList { "\\bcat", "at\\b" } << QByteArray("cat cats") << QByteArray("0:2 0:6 1:2");
}

void TestDfaBuilder::handWritten()
{
    QFETCH(QByteArrayList, patterns);
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, expected);
    Group g;
    for (int i = 0; i < patterns.size(); ++i) {
        g.regexes.push_back(parse(patterns[i]));
        g.ids.push_back(i);
    }
    for (bool minimized : { true, false }) {
        const DfaBuilder::Result r = minimized ? DfaBuilder::build(g.inputs(), 1000)
                                               : Hitscope::buildUnminimizedDfa(g.inputs(), 1000);
        QVERIFY(!r.exceededBudget);
        QCOMPARE(TestUtil::checkDfaTables(r.dfa), QByteArray());
        QByteArrayList got;
        for (const auto &[p, end] : dfaHits(r.dfa, text))
            got << QByteArray::number(p) + ':' + QByteArray::number(end);
        QCOMPARE(got.join(' '), expected);
        QCOMPARE(dfaReportCount(r.dfa, text), size_t(got.size()));
    }
}

void TestDfaBuilder::byteClasses()
{
    const Regex ab = Regex::fromLiteral("ab", 2);
    DfaBuilder::Result r = DfaBuilder::build({ { &ab, 0 } }, 100);
    QCOMPARE(r.dfa.numClasses, 3u);
    QCOMPARE(r.dfa.byteClass['a'] == r.dfa.byteClass['b'], false);
    QCOMPARE(r.dfa.byteClass['c'], r.dfa.byteClass[0]);

    const Regex caseless = Regex::fromLiteral("ab", 2, true);
    r = DfaBuilder::build({ { &caseless, 0 } }, 100);
    QCOMPARE(r.dfa.numClasses, 3u);
    QCOMPARE(r.dfa.byteClass['A'], r.dfa.byteClass['a']);
    QCOMPARE(dfaHits(r.dfa, "xAbaB"), (HitSet { { 0, 2 }, { 0, 4 } }));

    // \b splits the remaining bytes into word and non-word.
    const Regex word = parse("\\bab");
    r = DfaBuilder::build({ { &word, 0 } }, 100);
    QCOMPARE(r.dfa.numClasses, 4u);
    QVERIFY(r.dfa.byteClass['c'] != r.dfa.byteClass[' ']);
    QCOMPARE(r.dfa.byteClass['c'], r.dfa.byteClass['_']);
    QCOMPARE(r.dfa.byteClass[' '], r.dfa.byteClass[0xff]);

    // 256 distinct bytes: 256 classes, and the table still works.
    std::vector<Regex> all;
    std::vector<DfaBuilder::Input> inputs;
    all.reserve(256);
    for (int b = 0; b < 256; ++b) {
        const char c = char(b);
        all.push_back(Regex::fromLiteral(&c, 1));
    }
    for (int b = 0; b < 256; ++b)
        inputs.push_back({ &all[size_t(b)], b });
    r = DfaBuilder::build(inputs, 1000);
    QCOMPARE(r.dfa.numClasses, 256u);
    QCOMPARE(TestUtil::checkDfaTables(r.dfa), QByteArray());
    QCOMPARE(dfaHits(r.dfa, QByteArray("\x00\xff", 2)), (HitSet { { 0, 0 }, { 255, 1 } }));
}

void TestDfaBuilder::deadStates()
{
    const Regex abc = Regex::fromLiteral("abc", 3);
    const DfaBuilder::Result unanchored = DfaBuilder::build({ { &abc, 0 } }, 100);
    QCOMPARE(unanchored.dfa.dead, Dfa::kNoDeadState);

    const DfaBuilder::Result anchored = DfaBuilder::build({ { &abc, 0 } }, 100, true);
    QVERIFY(anchored.dfa.dead != Dfa::kNoDeadState);
    QCOMPARE(TestUtil::checkDfaTables(anchored.dfa), QByteArray());
    // abc, anchored: start, a, ab, abc, dead (the three start contexts are one state).
    QCOMPARE(anchored.dfa.numStates, 5u);
    const uint32_t afterX = anchored.dfa.transitions[anchored.dfa.start[0] + anchored.dfa.byteClass['x']];
    QCOMPARE(afterX, anchored.dfa.dead);

    // Every pattern starts with ^: after the first byte nothing can match, and a scan may stop.
    const Regex startOnly = parse("^ab|^c");
    const DfaBuilder::Result headed = DfaBuilder::build({ { &startOnly, 0 } }, 100);
    QVERIFY(headed.dfa.dead != Dfa::kNoDeadState);
    const Dfa &d = headed.dfa;
    uint32_t s = d.start[Dfa::AtFileStart];
    s = d.transitions[s + d.byteClass['a']] & Dfa::kStateMask;
    QVERIFY(s != d.dead);
    s = d.transitions[s + d.byteClass['a']] & Dfa::kStateMask;
    QCOMPARE(s, d.dead);
    // A segment that starts mid-file can never see ^: its start state is already dead.
    QCOMPARE(d.start[Dfa::AfterWord], d.dead);
}

void TestDfaBuilder::budgetStopsEarly()
{
    // The classic explosion: the DFA must remember which of the last 21 bytes were 'a' (2^21 states).
    const Regex explode = parse("(a|b)*a(a|b){20}");
    QElapsedTimer timer;
    timer.start();
    const DfaBuilder::Result r = DfaBuilder::build({ { &explode, 0 } }, 5000);
    QVERIFY(r.exceededBudget);
    QCOMPARE(r.dfa.numStates, 0u);
    QVERIFY(r.statesBeforeMinimization > 5000);
    QVERIFY2(timer.elapsed() < 5000, "the budget must stop the construction early");

    // The same pattern with a smaller window fits: 2^6 live states.
    const Regex small = parse("(a|b)*a(a|b){5}");
    const DfaBuilder::Result ok = DfaBuilder::build({ { &small, 0 } }, 5000);
    QVERIFY(!ok.exceededBudget);
    QCOMPARE(TestUtil::checkDfaTables(ok.dfa), QByteArray());
    QVERIFY(ok.dfa.numStates >= 64);
}

void TestDfaBuilder::cacheGivesTheBuiltDfaAndIgnoresBadFiles()
{
    QTemporaryDir tmp;
    const DfaCache cache(tmp.path());
    const Regex a = parse("ab[0-9]+c"), b = parse("x(yz|zy)*"), explode = parse("(a|b)*a(a|b){20}");
    const std::vector<DfaBuilder::Input> inputs { { &a, 3 }, { &b, 7 } };
    const DfaBuilder::Result fresh = DfaBuilder::build(inputs, 5000);
    auto same = [](const Dfa &x, const Dfa &y) {
        return x.numStates == y.numStates && x.numClasses == y.numClasses && x.byteClass == y.byteClass
            && x.transitions == y.transitions && x.start == y.start && x.acceptIndex == y.acceptIndex
            && x.acceptEntries == y.acceptEntries && x.dead == y.dead;
    };
    QVERIFY(same(cache.build(inputs, 5000).dfa, fresh.dfa));
    const QStringList files = QDir(tmp.path()).entryList({ QStringLiteral("*.dfa") }, QDir::Files);
    QCOMPARE(files.size(), 1);
    const QString path = tmp.filePath(files.front());

    // Read back (the file is touched when it is used) and equal.
    auto age = [&] {
        QFile f(path);
        QVERIFY(f.open(QIODevice::Append));
        QVERIFY(f.setFileTime(QDateTime::currentDateTime().addDays(-3), QFileDevice::FileModificationTime));
    };
    age();
    QVERIFY(same(cache.build(inputs, 5000).dfa, fresh.dfa));
    QVERIFY(QFileInfo(path).lastModified() > QDateTime::currentDateTime().addDays(-1));

    // Other ids, another budget: other files.
    QVERIFY(same(cache.build({ { &a, 3 }, { &b, 8 } }, 5000).dfa,
                 DfaBuilder::build({ { &a, 3 }, { &b, 8 } }, 5000).dfa));
    QVERIFY(cache.build({ { &explode, 0 } }, 5000).exceededBudget);
    QVERIFY(cache.build({ { &explode, 0 } }, 5000).exceededBudget); // the refusal is kept too
    QCOMPARE(QDir(tmp.path()).entryList({ QStringLiteral("*.dfa") }, QDir::Files).size(), 3);

    // Truncated, a flipped byte, another DFA's file under this name: each is built anew, and right.
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray good = f.readAll();
    f.close();
    QByteArray flipped = good;
    flipped[flipped.size() / 2] = char(flipped[flipped.size() / 2] ^ 0x10);
    QByteArray other;
    for (const QString &name : QDir(tmp.path()).entryList({ QStringLiteral("*.dfa") }, QDir::Files)) {
        QFile o(tmp.filePath(name));
        if (tmp.filePath(name) != path && o.open(QIODevice::ReadOnly) && o.size() > other.size())
            other = o.readAll();
    }
    QVERIFY(!other.isEmpty());
    for (const QByteArray &bad : { good.left(good.size() / 2), flipped, other }) {
        QVERIFY(TestUtil::writeFile(path, bad));
        QVERIFY(same(cache.build(inputs, 5000).dfa, fresh.dfa));
    }
    // Rewritten whole by the build that found it bad.
    QFile again(path);
    QVERIFY(again.open(QIODevice::ReadOnly));
    QCOMPARE(again.readAll(), good);

    // A build faster than asked to be kept is not written; it is the same DFA.
    const Regex quick = parse("q[0-9]z");
    const auto before = QDir(tmp.path()).entryList({ QStringLiteral("*.dfa") }, QDir::Files);
    const std::vector<DfaBuilder::Input> quickInputs { { &quick, 1 } };
    QVERIFY(same(cache.build(quickInputs, 5000, nullptr, 1e9).dfa, DfaBuilder::build(quickInputs, 5000).dfa));
    QCOMPARE(QDir(tmp.path()).entryList({ QStringLiteral("*.dfa") }, QDir::Files), before);
    bool fromCache = true;
    cache.build(quickInputs, 5000, &fromCache, 0);
    QVERIFY(!fromCache);
    QCOMPARE(QDir(tmp.path()).entryList({ QStringLiteral("*.dfa") }, QDir::Files).size(), before.size() + 1);
    cache.build(quickInputs, 5000, &fromCache, 1e9);
    QVERIFY(fromCache); // kept ones are read whatever the threshold

    // No folder: nothing kept, the DFA still built.
    QVERIFY(same(DfaCache(QString()).build(inputs, 5000).dfa, fresh.dfa));
}

void TestDfaBuilder::hugeRepeatIsRefused()
{
    // ((a{1000}){1000}){10}: ten million NFA states; refused before anything is allocated.
    Regex r;
    ByteSet a;
    a.set('a');
    r.root = r.addRepeat(r.addRepeat(r.addRepeat(r.addBytes(a), 1000, 1000), 1000, 1000), 10, 10);
    QVERIFY(Hitscope::Nfa::estimateStates(r) > Hitscope::Nfa::kDefaultMaxStates);
    QElapsedTimer timer;
    timer.start();
    const DfaBuilder::Result result = DfaBuilder::build({ { &r, 0 } }, 1000);
    QVERIFY(result.exceededBudget);
    QVERIFY(timer.elapsed() < 2000);
    std::string error;
    Hitscope::Nfa nfa;
    QVERIFY(!nfa.build({ &r }, Hitscope::Nfa::kDefaultMaxStates, &error));
    QVERIFY2(error.find("too large") != std::string::npos, error.c_str());
}

void TestDfaBuilder::prefixSharingKeepsLiteralsSmall()
{
    // 2,000 literals with a long common head: the DFA is an Aho-Corasick automaton, one state per trie
    // node, and kernels stay small because the heads are shared.
    QRandomGenerator rng(7);
    std::vector<Regex> regexes;
    std::map<QByteArray, int> idOf;
    while (regexes.size() < 2000) {
        const QByteArray lit = "http://" + TestUtil::randomText(rng, 8 + int(rng.bounded(8)), "abcdefghij./");
        if (idOf.emplace(lit, int(regexes.size())).second)
            regexes.push_back(Regex::fromLiteral(lit.constData(), int(lit.size())));
    }
    std::vector<DfaBuilder::Input> inputs;
    for (size_t i = 0; i < regexes.size(); ++i)
        inputs.push_back({ &regexes[i], int(i) });
    QElapsedTimer timer;
    timer.start();
    const DfaBuilder::Result r = DfaBuilder::build(inputs, 1000000);
    qInfo("2000 shared-head literals: %u states, %u classes, %lld ms", r.dfa.numStates, r.dfa.numClasses,
          qlonglong(timer.elapsed()));
    QVERIFY(!r.exceededBudget);
    // An Aho-Corasick automaton: at most one state per trie node (the root included).
    std::set<QByteArray> prefixes;
    for (const auto &[lit, id] : idOf)
        for (int k = 1; k <= lit.size(); ++k)
            prefixes.insert(lit.left(k));
    QVERIFY(size_t(r.statesBeforeMinimization) <= prefixes.size() + 1);
    QCOMPARE(TestUtil::checkDfaTables(r.dfa), QByteArray());

    QByteArray text;
    int n = 0;
    for (const auto &[lit, id] : idOf)
        if (++n % 50 == 0)
            text += lit + ' ';
    HitSet expected;
    for (const auto &[lit, id] : idOf)
        for (qsizetype at = text.indexOf(lit); at >= 0; at = text.indexOf(lit, at + 1))
            expected.emplace(id, at + lit.size() - 1);
    QVERIFY(expected.size() >= 40);
    QCOMPARE(dfaHits(r.dfa, text), expected);
}

bool TestDfaBuilder::checkGroup(const Group &g, const QByteArrayList &texts, int maxStates, int *skipped,
                                QRandomGenerator &rng)
{
    const auto inputs = g.inputs();
    const DfaBuilder::Result minimized = DfaBuilder::build(inputs, maxStates);
    if (minimized.exceededBudget) {
        ++*skipped;
        return true;
    }
    const DfaBuilder::Result plain = Hitscope::buildUnminimizedDfa(inputs, maxStates);
    const DfaBuilder::Result anchored = DfaBuilder::build(inputs, maxStates, true);
    const DfaBuilder::Result anchoredPlain = Hitscope::buildUnminimizedDfa(inputs, maxStates, true);
    if (plain.exceededBudget || anchored.exceededBudget || anchoredPlain.exceededBudget) {
        ++*skipped;
        return true;
    }
    for (const Dfa *d : { &minimized.dfa, &plain.dfa, &anchored.dfa, &anchoredPlain.dfa }) {
        const QByteArray problem = TestUtil::checkDfaTables(*d);
        if (!problem.isEmpty()) {
            qWarning("%s\n%s", problem.constData(), g.describe().constData());
            return false;
        }
    }
    if (minimized.dfa.numStates > plain.dfa.numStates || int(plain.dfa.numStates) != plain.statesBeforeMinimization) {
        qWarning("state counts: minimized %u, unminimized %u", minimized.dfa.numStates, plain.dfa.numStates);
        return false;
    }

    for (const QByteArray &text : texts) {
        // Whole text, unanchored and anchored at 0.
        HitSet expected, expectedAnchored;
        for (size_t i = 0; i < g.regexes.size(); ++i) {
            for (const TestUtil::RefMatch &m : TestUtil::referenceMatches(g.regexes[i], text)) {
                expected.emplace(g.ids[i], m.end);
                if (m.start == 0)
                    expectedAnchored.emplace(g.ids[i], m.end);
            }
        }
        const struct
        {
            const char *name;
            const Dfa &dfa;
            const HitSet &expected;
        } cases[] = { { "minimized", minimized.dfa, expected },
                      { "unminimized", plain.dfa, expected },
                      { "anchored", anchored.dfa, expectedAnchored },
                      { "anchored unminimized", anchoredPlain.dfa, expectedAnchored } };
        for (const auto &c : cases) {
            const HitSet got = dfaHits(c.dfa, text);
            if (got != c.expected || dfaReportCount(c.dfa, text) != got.size()) {
                QByteArray gotS, expS;
                for (const auto &[p, e] : got)
                    gotS += QByteArray::number(p) + ':' + QByteArray::number(e) + ' ';
                for (const auto &[p, e] : c.expected)
                    expS += QByteArray::number(p) + ':' + QByteArray::number(e) + ' ';
                qWarning("%s scan of \"%s\" differs\n%s got      %s\n expected %s", c.name, text.constData(),
                         g.describe().constData(), gotS.constData(), expS.constData());
                return false;
            }
        }

        // A scan that begins mid-text with the start state of the byte before it.
        if (text.size() < 2)
            continue;
        const int begin = 1 + int(rng.bounded(int(text.size()) - 1));
        HitSet fromBegin, anchoredAtBegin;
        for (size_t i = 0; i < g.regexes.size(); ++i) {
            for (const TestUtil::RefMatch &m :
                 TestUtil::referenceMatches(startingFrom(g.regexes[i], begin, true), text))
                if (m.start == 0 && m.end >= begin)
                    anchoredAtBegin.emplace(g.ids[i], m.end);
            if (g.regexes[i].matchesEmpty())
                continue; // the wrapped pattern could not tell an empty tail from a real match
            for (const TestUtil::RefMatch &m :
                 TestUtil::referenceMatches(startingFrom(g.regexes[i], begin, false), text))
                if (m.start == 0)
                    fromBegin.emplace(g.ids[i], m.end);
        }
        HitSet gotFrom;
        for (const auto &h : dfaHits(minimized.dfa, text, begin))
            if (!g.regexes[size_t(std::find(g.ids.begin(), g.ids.end(), h.first) - g.ids.begin())].matchesEmpty())
                gotFrom.insert(h);
        const HitSet gotAnchored = dfaHits(anchored.dfa, text, begin);
        if (gotFrom != fromBegin || gotAnchored != anchoredAtBegin) {
            qWarning("scan from offset %d of \"%s\" differs (%s)\n%s", begin, text.constData(),
                     gotFrom != fromBegin ? "unanchored" : "anchored", g.describe().constData());
            return false;
        }
    }
    return true;
}

void TestDfaBuilder::differentialSingle_data()
{
    QTest::addColumn<int>("seed");
    QTest::addColumn<int>("count");
    QTest::addColumn<int>("depth");
    for (int seed = 1; seed <= 6 * stress(); ++seed)
        QTest::addRow("seed %d", seed) << seed << 500 << 2 + seed % 3;
}

void TestDfaBuilder::differentialSingle()
{
    QFETCH(int, seed);
    QFETCH(int, count);
    QFETCH(int, depth);
    QRandomGenerator rng { quint32(seed) };
    int skipped = 0;
    for (int i = 0; i < count; ++i) {
        const QByteArray alphabet = kAlphabets[int(rng.bounded(int(kAlphabets.size())))];
        Group g;
        g.regexes.push_back(TestUtil::randomRegex(rng, depth, alphabet));
        g.ids.push_back(int(rng.bounded(1000)));
        QByteArrayList texts;
        for (int t = 0; t < 8; ++t)
            texts << TestUtil::randomText(rng, int(rng.bounded(24)), alphabet + (t % 2 ? "x" : ""));
        QVERIFY2(checkGroup(g, texts, 20000, &skipped, rng), qPrintable(QStringLiteral("regex %1").arg(i)));
    }
    QVERIFY2(skipped < count / 50, qPrintable(QStringLiteral("%1 regexes over the budget").arg(skipped)));
}

void TestDfaBuilder::differentialParsed()
{
    // The parser's random sources: real syntax (classes, \d \w \s, lazy repeats, anchors).
    QRandomGenerator rng(99);
    int skipped = 0;
    for (int i = 0; i < 1000; ++i) {
        const QByteArray alphabet = kAlphabets[int(rng.bounded(int(kAlphabets.size())))];
        const QByteArray source = TestUtil::randomRegexSource(rng, 2, alphabet);
        const RegexParser::Result parsed = RegexParser::parse(source);
        if (!parsed.error.isEmpty())
            continue;
        Group g;
        g.regexes.push_back(parsed.regex);
        g.ids.push_back(0);
        QByteArrayList texts;
        for (int t = 0; t < 6; ++t)
            texts << TestUtil::randomText(rng, int(rng.bounded(24)), alphabet + "x9");
        QVERIFY2(checkGroup(g, texts, 20000, &skipped, rng), source.constData());
    }
    QVERIFY(skipped < 20);
}

void TestDfaBuilder::differentialGroups()
{
    QRandomGenerator rng(2024);
    int skipped = 0;
    const int groups = 150 * stress();
    for (int i = 0; i < groups; ++i) {
        const QByteArray alphabet = kAlphabets[int(rng.bounded(int(kAlphabets.size())))];
        Group g;
        const int size = 2 + int(rng.bounded(i % 3 == 0 ? 49 : 8));
        for (int k = 0; k < size; ++k) {
            // Mostly short regexes, as merged groups of real rules are; a few literal-like ones.
            if (rng.bounded(4) == 0) {
                const QByteArray lit = TestUtil::randomText(rng, 1 + int(rng.bounded(4)), alphabet);
                g.regexes.push_back(Regex::fromLiteral(lit.constData(), int(lit.size())));
            } else {
                g.regexes.push_back(TestUtil::randomRegex(rng, 2, alphabet));
            }
            g.ids.push_back(k * 3 + 1);
        }
        QByteArrayList texts;
        for (int t = 0; t < 5; ++t)
            texts << TestUtil::randomText(rng, int(rng.bounded(30)), alphabet);
        QVERIFY2(checkGroup(g, texts, 50000, &skipped, rng), qPrintable(QStringLiteral("group %1").arg(i)));
    }
    QVERIFY2(skipped < groups / 5, qPrintable(QStringLiteral("%1 groups over the budget").arg(skipped)));
}

void TestDfaBuilder::minimizationIsMinimal()
{
    QRandomGenerator rng(31337);
    int checked = 0;
    for (int i = 0; i < 1000; ++i) {
        const QByteArray alphabet = kAlphabets[int(rng.bounded(int(kAlphabets.size())))];
        Group g;
        const int size = 1 + int(rng.bounded(8));
        for (int k = 0; k < size; ++k) {
            g.regexes.push_back(TestUtil::randomRegex(rng, 3, alphabet));
            g.ids.push_back(k);
        }
        const bool anchored = i % 2;
        const DfaBuilder::Result plain = Hitscope::buildUnminimizedDfa(g.inputs(), 3000, anchored);
        if (plain.exceededBudget)
            continue;
        const DfaBuilder::Result minimized = DfaBuilder::build(g.inputs(), 3000, anchored);
        QVERIFY(!minimized.exceededBudget);
        const int minimal = minimalStateCount(plain.dfa);
        QVERIFY2(int(minimized.dfa.numStates) == minimal,
                 qPrintable(QStringLiteral("%1 states, minimal %2\n").arg(minimized.dfa.numStates).arg(minimal)
                            + QString::fromLatin1(g.describe())));
        QCOMPARE(minimalStateCount(minimized.dfa), minimal);
        ++checked;
    }
    QVERIFY(checked > 800);
}

void TestDfaBuilder::startFinder_data()
{
    QTest::addColumn<int>("seed");
    for (int seed = 1; seed <= 4 * stress(); ++seed)
        QTest::addRow("seed %d", seed) << seed;
}

void TestDfaBuilder::startFinder()
{
    QFETCH(int, seed);
    QRandomGenerator rng { quint32(seed) * 7919u };
    Hitscope::RuleSet rules;
    std::vector<QByteArray> alphabets;
    for (int i = 0; i < 300; ++i) {
        const QByteArray alphabet = kAlphabets[int(rng.bounded(int(kAlphabets.size())))];
        Hitscope::Pattern p;
        p.id = QStringLiteral("$p%1").arg(i);
        p.regex = i % 5 == 0 ? parse(TestUtil::randomText(rng, 1 + int(rng.bounded(5)), "abc"))
                             : TestUtil::randomRegex(rng, 3, alphabet);
        p.ruleIndex = 0;
        rules.patterns.push_back(std::move(p));
        alphabets.push_back(alphabet);
    }
    {
        Hitscope::Rule r;
        r.name = QStringLiteral("r");
        r.sourceFile = QStringLiteral("f");
        r.line = 1;
        r.patterns = std::vector<int>{};
        rules.rules.push_back(r);
    }
    const Hitscope::StartFinder finder(rules);
    int hits = 0;
    for (int i = 0; i < 300; ++i) {
        const Regex &re = rules.patterns[size_t(i)].regex;
        for (int t = 0; t < 6; ++t) {
            const QByteArray text = TestUtil::randomText(rng, int(rng.bounded(30)), alphabets[size_t(i)] + "x");
            const auto byteAt = [&text](int64_t at) { return uint8_t(text[qsizetype(at)]); };
            for (const TestUtil::RefMatch &m : TestUtil::referenceMatches(re, text)) {
                const int64_t start = finder.leftmostStart(i, m.end, text.size(), byteAt);
                QVERIFY2(start == m.start,
                         qPrintable(QStringLiteral("%1 in \"%2\" ending at %3: start %4, expected %5")
                                        .arg(QString::fromLatin1(describe(re)), QString::fromLatin1(text))
                                        .arg(m.end)
                                        .arg(start)
                                        .arg(m.start)));
                ++hits;
            }
        }
    }
    QVERIFY(hits > 1000);
}

void TestDfaBuilder::startFinderNfaFallback()
{
    // Reversed and anchored, (a|b){20}a(a|b)* becomes (a|b)*a(a|b){20}: too many states for a DFA, so the
    // finder simulates the NFA. The forward pattern itself is small.
    Hitscope::RuleSet rules;
    Hitscope::Pattern p;
    p.id = QStringLiteral("$x");
    p.regex = parse("(a|b){20}a(a|b)*");
    p.ruleIndex = 0;
    rules.patterns.push_back(p);
    p.regex = parse("\\b(a|b){10}a(a|b)*$");
    rules.patterns.push_back(p);
    {
        Hitscope::Rule r;
        r.name = QStringLiteral("r");
        r.sourceFile = QStringLiteral("f");
        r.line = 1;
        r.patterns = std::vector<int>{ 0, 1 };
        rules.rules.push_back(r);
    }
    const Regex reversed = rules.patterns[0].regex.reversed();
    QElapsedTimer timer;
    timer.start();
    QVERIFY(DfaBuilder::build({ { &reversed, 0 } }, 100000, true).exceededBudget);
    qInfo("reversed DFA over 100000 states after %lld ms", qlonglong(timer.elapsed()));
    const Hitscope::StartFinder finder(rules);
    QRandomGenerator rng(5);
    int hits = 0;
    for (int t = 0; t < 20; ++t) {
        const QByteArray text = TestUtil::randomText(rng, 40 + int(rng.bounded(30)), t % 2 ? "ab" : "abbb b");
        const auto byteAt = [&text](int64_t at) { return uint8_t(text[qsizetype(at)]); };
        for (int i = 0; i < 2; ++i) {
            for (const TestUtil::RefMatch &m : TestUtil::referenceMatches(rules.patterns[size_t(i)].regex, text)) {
                QCOMPARE(finder.leftmostStart(i, m.end, text.size(), byteAt), m.start);
                ++hits;
            }
        }
    }
    QVERIFY(hits > 100);
}

void TestDfaBuilder::startFinderThreads()
{
    Hitscope::RuleSet rules;
    QRandomGenerator rng(11);
    for (int i = 0; i < 64; ++i) {
        Hitscope::Pattern p;
        p.regex = TestUtil::randomRegex(rng, 3, "ab ");
        p.ruleIndex = 0;
        rules.patterns.push_back(std::move(p));
    }
    {
        Hitscope::Rule r;
        r.name = QStringLiteral("r");
        r.sourceFile = QStringLiteral("f");
        r.line = 1;
        r.patterns = std::vector<int>{};
        rules.rules.push_back(r);
    }
    const QByteArray text = TestUtil::randomText(rng, 200, "ab ");
    const auto byteAt = [&text](int64_t at) { return uint8_t(text[qsizetype(at)]); };
    std::vector<std::vector<TestUtil::RefMatch>> expected;
    for (const Hitscope::Pattern &p : rules.patterns)
        expected.push_back(TestUtil::referenceMatches(p.regex, text));

    // Fresh finder, four threads asking for the same patterns at once: each reversed DFA is built once.
    const Hitscope::StartFinder finder(rules);
    std::atomic<int> wrong { 0 };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (size_t k = 0; k < expected.size(); ++k) {
                const size_t i = (k + size_t(t) * 16) % expected.size();
                for (const TestUtil::RefMatch &m : expected[i])
                    if (finder.leftmostStart(int(i), m.end, text.size(), byteAt) != m.start)
                        ++wrong;
            }
        });
    }
    for (std::thread &th : threads)
        th.join();
    QCOMPARE(wrong.load(), 0);
}

QTEST_GUILESS_MAIN(TestDfaBuilder)
#include "tst_dfabuilder.moc"
