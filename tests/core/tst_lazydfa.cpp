// SPDX-License-Identifier: GPL-3.0-or-later
// LazyDfa: a walk over a cache's states reports exactly what the eager DfaBuilder DFA of the same patterns
// reports (the reference matcher where that one is over its budget), with global ids, from every start context,
// across cache resets, and when one cache serves many texts.
#include <algorithm>
#include <memory>

#include <QRandomGenerator>
#include <QTest>

#include "automata/dfabuilder.h"
#include "automata/lazydfa.h"
#include "testutildfa.h"
#include "testutilregex.h"

using namespace Hitscope;
using TestUtil::DfaHit;
using Type = Hitscope::Regex::Node::Type;

namespace {

using Hits = std::vector<DfaHit>;


using Group = TestUtil::PatternGroup;

QByteArray format(const Hits &hits)
{
    QByteArray s;
    for (const DfaHit &h : hits)
        s += QByteArray::number(h.pattern) + ':' + QByteArray::number(h.end) + ' ';
    return s.trimmed();
}

Hits sorted(Hits hits)
{
    std::sort(hits.begin(), hits.end());
    return hits;
}

/**
 * testutildfa's scanDfa, step for step, over a cache: the start state from the byte before `begin`, Now entries
 * at pos and Prev entries at pos - 1 when the state entered reports, Eof entries of the last state at the end.
 * Also checks what the engine's walk relies on (entries sorted by kind, reports() exactly when Now or Prev
 * entries exist); the first violation lands in *problem.
 */
Hits lazyScan(LazyDfa::Cache &cache, const QByteArray &text, qsizetype begin, QByteArray *problem)
{
    auto check = [&](uint32_t s, qsizetype pos) {
        if (!problem->isEmpty())
            return;
        bool nowOrPrev = false;
        int lastKind = -1;
        for (const uint32_t *e = cache.entriesBegin(s); e != cache.entriesEnd(s); ++e) {
            const int kind = int(Dfa::entryKind(*e));
            if (kind < lastKind || kind > int(Dfa::Eof))
                *problem = "entries not sorted by kind at " + QByteArray::number(pos);
            lastKind = kind;
            nowOrPrev = nowOrPrev || kind != Dfa::Eof;
        }
        if (nowOrPrev != cache.reports(s))
            *problem = "reports() disagrees with the entries at " + QByteArray::number(pos);
    };
    Hits hits;
    uint32_t s = cache.start(TestUtil::startContext(text, begin));
    check(s, begin - 1);
    for (qsizetype pos = begin; pos < text.size(); ++pos) {
        s = cache.next(s, uint8_t(text[pos]));
        check(s, pos);
        if (!cache.reports(s))
            continue;
        for (const uint32_t *e = cache.entriesBegin(s); e != cache.entriesEnd(s); ++e) {
            if (Dfa::entryKind(*e) == Dfa::Now)
                hits.push_back({ int(Dfa::entryPattern(*e)), pos });
            else if (Dfa::entryKind(*e) == Dfa::Prev)
                hits.push_back({ int(Dfa::entryPattern(*e)), pos - 1 });
        }
    }
    if (text.size() > begin)
        for (const uint32_t *e = cache.entriesBegin(s); e != cache.entriesEnd(s); ++e)
            if (Dfa::entryKind(*e) == Dfa::Eof)
                hits.push_back({ int(Dfa::entryPattern(*e)), text.size() - 1 });
    return hits;
}

/// Hits of every pattern of `g` over the whole text, by the brute-force matcher over the AST.
Hits referenceHits(const Group &g, const QByteArray &text)
{
    Hits hits;
    for (size_t i = 0; i < g.regexes.size(); ++i)
        for (const TestUtil::RefMatch &m : TestUtil::referenceMatches(g.regexes[i], text))
            hits.push_back({ g.ids[i], m.end });
    return sorted(hits);
}

/// The eager DFA of a group, or none when it needs more states than the budget.
struct Oracle
{
    Oracle(const Group &g, int budget)
        : group(g)
        , eager(DfaBuilder::build(g.inputs(), budget))
    {
    }
    bool exact() const { return !eager.exceededBudget; }
    /// What the oracle says for a scan from `begin`, sorted; false where it cannot tell (no DFA, and a text too
    /// long for the reference, or a scan from mid-text where assertions see the bytes before it).
    bool hits(const QByteArray &text, qsizetype begin, Hits *out) const
    {
        if (exact()) {
            *out = sorted(TestUtil::scanDfa(eager.dfa, text, begin));
            return true;
        }
        if (text.size() - begin > 300 || (begin != 0 && hasAssertions()))
            return false;
        // Without assertions the bytes before `begin` change nothing but where matches may start.
        *out = referenceHits(group, text.mid(begin));
        for (DfaHit &h : *out)
            h.end += begin;
        return true;
    }
    bool hasAssertions() const
    {
        for (const Regex &re : group.regexes)
            for (const Regex::Node &n : re.nodes)
                if (n.type == Type::Assert)
                    return true;
        return false;
    }

    const Group &group;
    const DfaBuilder::Result eager;
};

/// Compares a walk over `cache` with the oracle; returns an empty string when they agree.
QByteArray compare(const Oracle &oracle, LazyDfa::Cache &cache, const QByteArray &text, qsizetype begin,
                   size_t *hitCount = nullptr)
{
    Hits want;
    QByteArray problem;
    const Hits got = sorted(lazyScan(cache, text, begin, &problem));
    if (!problem.isEmpty())
        return problem + "\n" + oracle.group.describe();
    if (!oracle.hits(text, begin, &want))
        return {};
    if (hitCount)
        *hitCount += want.size();
    if (got == want)
        return {};
    const QByteArray shown = text.size() > 200 ? text.left(200) + "..." : text;
    return "scan of \"" + shown + "\" (" + QByteArray::number(text.size()) + " bytes) from "
        + QByteArray::number(begin) + (oracle.exact() ? " against the eager DFA" : " against the reference") + "\n"
        + oracle.group.describe() + " got      " + format(got) + "\n expected " + format(want);
}

Group parsed(const QByteArrayList &patterns, const QList<int> &ids, bool caseless)
{
    Group g;
    for (qsizetype i = 0; i < patterns.size(); ++i) {
        g.regexes.push_back(TestUtil::parseRegex(patterns[i].constData(), caseless));
        g.ids.push_back(ids.isEmpty() ? int(i) : ids[i]);
    }
    return g;
}

const QByteArrayList kAlphabets { "ab", "ab ", "a_ 1", "abc", "aA -" };

/// A group of 1..maxSize random patterns over one alphabet; distinct global ids, far from the local indices.
Group randomGroup(QRandomGenerator &rng, const QByteArray &alphabet, int maxSize)
{
    Group g;
    const int size = 1 + int(rng.bounded(maxSize));
    while (int(g.regexes.size()) < size) {
        const int id = int(rng.bounded(5000));
        if (std::find(g.ids.begin(), g.ids.end(), id) != g.ids.end())
            continue;
        g.regexes.push_back(TestUtil::randomRegex(rng, 2 + int(rng.bounded(2)), alphabet));
        g.ids.push_back(id);
    }
    return g;
}

QByteArray randomAbText(quint32 seed, int size)
{
    QRandomGenerator rng(seed);
    return TestUtil::randomText(rng, size, "ab");
}

} // namespace

class TestLazyDfa : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void handPicked_data()
    {
        QTest::addColumn<QByteArrayList>("patterns");
        QTest::addColumn<QList<int>>("ids"); // empty: 0, 1, ...
        QTest::addColumn<bool>("caseless");
        QTest::addColumn<QByteArray>("text");

        QTest::newRow("overlapping literals") << QByteArrayList { "abc", "bc", "c" } << QList<int> {} << false
                                              << QByteArray("abcabcxbcc");
        QTest::newRow("global ids") << QByteArrayList { "ab", "b", "xab" } << QList<int> { 7, 100, 3 } << false
                                    << QByteArray("xabab b xab");
        QTest::newRow("nocase") << QByteArrayList { "abc", "Bc" } << QList<int> { 12, 4 } << true
                                << QByteArray("ABC aBc abC xbC abd");
        QTest::newRow("\\b at the start") << QByteArrayList { "\\bcat" } << QList<int> {} << false
                                          << QByteArray("cat scat cat_ -cat");
        // Decided by the byte after the match (Prev), or at the end of the text (Eof).
        QTest::newRow("\\b at the end") << QByteArrayList { "cat\\b" } << QList<int> {} << false
                                        << QByteArray("cat cats cat_ cat-cat");
        QTest::newRow("\\b both sides") << QByteArrayList { "\\bab\\b", "b\\b", "a\\Bb" }
                                        << QList<int> { 9, 2, 30 } << false << QByteArray("ab ab_ab ab");
        QTest::newRow("^") << QByteArrayList { "^ab", "ab" } << QList<int> {} << false << QByteArray("ababab");
        QTest::newRow("$") << QByteArrayList { "ab$", "b$", "b" } << QList<int> {} << false << QByteArray("abab");
        QTest::newRow("^ and $") << QByteArrayList { "^a+$", "^a", "a$" } << QList<int> {} << false
                                 << QByteArray("aaaa");
        QTest::newRow("alternation") << QByteArrayList { "ab|cd|e(f|g)h", "(ab|b)c" } << QList<int> { 1, 0 }
                                     << false << QByteArray("abcdefhegh bc abc");
        // Every 'a' starts a new count that the others overlap: 2^40 states eagerly, over any budget.
        QTest::newRow("counted repeat")
            << QByteArrayList { "a[^x]{2,40}b", "q{3}b" } << QList<int> { 8, 1 } << false
            << QByteArray("ab aab aaab axqb a" + QByteArray(38, 'q') + "b a" + QByteArray(39, 'q') + "b a"
                          + QByteArray(40, 'q') + "bxab aqaqaqaqaqbqa" + QByteArray(50, 'a') + "b");
        QTest::newRow("counted repeat, small") << QByteArrayList { "a[^x]{2,4}b" } << QList<int> { 5 } << false
                                               << QByteArray("ab aab aaab axqb aqqqqb aaaaaab aqqqqqb");
        QTest::newRow("mixed assertions and ids")
            << QByteArrayList { "\\bab", "ab\\b", "^a", "b$", "a.*b" } << QList<int> { 7, 100, 3, 55, 1000 } << false
            << QByteArray("ab abab_ab a-b ab");
        // 2^15 states eagerly; a walk makes one per byte at most.
        QTest::newRow("explosion") << QByteArrayList { "(a|b)*a(a|b){14}" } << QList<int> { 42 } << false
                                   << randomAbText(3, 3000);
        QTest::newRow("explosion with others")
            << QByteArrayList { "(a|b)*a(a|b){14}", "abba", "\\bb+\\b" } << QList<int> { 42, 7, 3 } << false
            << randomAbText(4, 1500) + " bbb " + randomAbText(5, 1500);
    }

    void handPicked()
    {
        QFETCH(QByteArrayList, patterns);
        QFETCH(QList<int>, ids);
        QFETCH(bool, caseless);
        QFETCH(QByteArray, text);
        const Group g = parsed(patterns, ids, caseless);
        const Oracle oracle(g, 200000);
        // Over the budget (a counted repeat that overlaps itself): the reference decides, on a short text.
        QVERIFY(oracle.exact() || (text.size() <= 300 && !oracle.hasAssertions()));
        const LazyDfa lazy(g.inputs());
        QVERIFY(lazy.isValid());
        QCOMPARE(lazy.patterns(), size_t(patterns.size()));
        LazyDfa::Cache cache(lazy);

        size_t hits = 0;
        QByteArray problem = compare(oracle, cache, text, 0, &hits);
        QVERIFY2(problem.isEmpty(), problem.constData());
        QVERIFY(hits > 0);
        // The eager DFA shares the subset construction: the brute-force matcher checks both, where it can.
        if (oracle.exact() && text.size() <= 300) {
            const Hits reference = referenceHits(g, text);
            const Hits eager = sorted(TestUtil::scanDfa(oracle.eager.dfa, text));
            QVERIFY2(eager == reference,
                     QByteArray("eager " + format(eager) + "\nreference " + format(reference)).constData());
        }
        // Every start context: scans from each offset of short texts, a few of long ones.
        std::vector<qsizetype> begins;
        if (text.size() <= 100)
            for (qsizetype b = 1; b <= text.size(); ++b)
                begins.push_back(b);
        else
            begins = { 1, 2, text.size() / 2, text.size() - 20, text.size() - 1 };
        for (qsizetype b : begins) {
            problem = compare(oracle, cache, text, b);
            QVERIFY2(problem.isEmpty(), problem.constData());
        }
    }

    void randomized_data()
    {
        QTest::addColumn<quint32>("seed");
        for (quint32 seed = 1; seed <= 4; ++seed)
            QTest::addRow("seed %u", seed) << seed;
    }

    void randomized()
    {
        // Several random patterns per automaton over small alphabets, so that they match often and overlap.
        QFETCH(quint32, seed);
        QRandomGenerator rng(seed * 7717u);
        size_t hits = 0, cases = 0;
        int overBudget = 0;
        for (int i = 0; i < 150; ++i) {
            const QByteArray alphabet = kAlphabets[int(rng.bounded(int(kAlphabets.size())))];
            const Group g = randomGroup(rng, alphabet, 6);
            const Oracle oracle(g, 20000);
            overBudget += oracle.exact() ? 0 : 1;
            const LazyDfa lazy(g.inputs());
            QVERIFY(lazy.isValid());
            LazyDfa::Cache cache(lazy);
            for (int t = 0; t < 6; ++t) {
                const QByteArray text =
                    TestUtil::randomText(rng, int(rng.bounded(120)), alphabet + (t % 2 ? "x" : ""));
                const qsizetype begin = t < 3 || text.isEmpty() ? 0 : qsizetype(rng.bounded(int(text.size())));
                const QByteArray problem = compare(oracle, cache, text, begin, &hits);
                QVERIFY2(problem.isEmpty(),
                         qPrintable(QStringLiteral("group %1: ").arg(i) + QString::fromLatin1(problem)));
                ++cases;
            }
        }
        qInfo("%zu scans, %zu hits, %d groups over the eager budget", cases, hits, overBudget);
        QVERIFY2(overBudget < 15, qPrintable(QStringLiteral("%1 groups over the budget").arg(overBudget)));
        QVERIFY(hits > 1000);
        QVERIFY(cases >= 900);
    }

    void tinyCache_data()
    {
        QTest::addColumn<quint32>("seed");
        for (quint32 seed = 1; seed <= 3; ++seed)
            QTest::addRow("seed %u", seed) << seed;
    }

    void tinyCache()
    {
        // A cache at its smallest cap forgets its states many times in a long text; the walk goes on from the
        // state it was in, so the hits must not change.
        QFETCH(quint32, seed);
        QRandomGenerator rng(seed * 104729u);
        size_t resets = 0, hits = 0;
        int compared = 0;
        for (int i = 0; i < 20; ++i) {
            const QByteArray alphabet = kAlphabets[int(rng.bounded(int(kAlphabets.size())))];
            Group g = randomGroup(rng, alphabet, 8);
            if (i % 4 == 0) { // a pattern whose states alone overflow any small cap
                g.regexes.push_back(TestUtil::parseRegex("(a|b)*a(a|b){9}"));
                g.ids.push_back(9999);
            }
            const Oracle oracle(g, 100000);
            if (!oracle.exact())
                continue;
            const LazyDfa lazy(g.inputs());
            LazyDfa::Cache cache(lazy, 1);
            for (int t = 0; t < 3; ++t) {
                const QByteArray text = TestUtil::randomText(rng, 1000 + int(rng.bounded(3000)), alphabet);
                const qsizetype begin = t == 2 ? qsizetype(rng.bounded(int(text.size()))) : 0;
                const QByteArray problem = compare(oracle, cache, text, begin, &hits);
                QVERIFY2(problem.isEmpty(),
                         qPrintable(QStringLiteral("group %1: ").arg(i) + QString::fromLatin1(problem)));
                ++compared;
            }
            resets += cache.resets();
        }
        qInfo("%d scans, %zu hits, %zu resets", compared, hits, resets);
        QVERIFY(compared >= 40);
        QVERIFY2(resets > 10, qPrintable(QStringLiteral("%1 resets").arg(resets)));
        QVERIFY(hits > 1000);
    }

    void tinyCacheExplosion()
    {
        // One long text through the exploding pattern: the tiny cache resets over and over, stays small, and
        // reports what the 2^15-state eager DFA reports.
        const Group g = parsed({ "(a|b)*a(a|b){14}", "bab" }, { 100, 7 }, false);
        const Oracle oracle(g, 200000);
        QVERIFY(oracle.exact());
        const LazyDfa lazy(g.inputs());
        LazyDfa::Cache tiny(lazy, 1);
        const QByteArray text = randomAbText(11, 20000);
        size_t hits = 0;
        const QByteArray problem = compare(oracle, tiny, text, 0, &hits);
        QVERIFY2(problem.isEmpty(), problem.constData());
        QVERIFY(hits > 10000);
        QVERIFY(tiny.resets() > 100);
        QVERIFY2(tiny.bytes() < 64 * 1024, qPrintable(QStringLiteral("%1 bytes").arg(tiny.bytes())));
        // A default cache holds every state this text makes: no reset.
        LazyDfa::Cache roomy(lazy);
        QCOMPARE(compare(oracle, roomy, text, 0), QByteArray());
        QCOMPARE(roomy.resets(), size_t(0));
    }

    void reusedCache_data()
    {
        QTest::addColumn<bool>("tiny");
        QTest::newRow("default cap") << false;
        QTest::newRow("smallest cap") << true;
    }

    void reusedCache()
    {
        // The engine keeps a cache from window to window and batch to batch: states made for one text (or
        // forgotten in a reset) must not leak into the next one's hits.
        QFETCH(bool, tiny);
        QRandomGenerator rng(tiny ? 606u : 505u);
        const QByteArray alphabet = "ab _";
        Group g;
        for (int k = 0; k < 6; ++k) {
            g.regexes.push_back(TestUtil::randomRegex(rng, 3, alphabet));
            g.ids.push_back(3 * k + 11);
        }
        for (const char *extra : { "\\bab", "b\\b", "^a", "a$", "(a|b)*a(a|b){8}" }) {
            g.regexes.push_back(TestUtil::parseRegex(extra));
            g.ids.push_back(int(g.ids.size()) * 5);
        }
        const Oracle oracle(g, 200000);
        QVERIFY(oracle.exact());
        const LazyDfa lazy(g.inputs());
        LazyDfa::Cache shared(lazy, tiny ? 1 : LazyDfa::Cache::kDefaultCacheBytes);
        size_t hits = 0;
        for (int t = 0; t < 300; ++t) {
            const QByteArray text = TestUtil::randomText(rng, int(rng.bounded(t % 10 == 0 ? 2000 : 100)), alphabet);
            const qsizetype begin = t % 3 == 0 && !text.isEmpty() ? qsizetype(rng.bounded(int(text.size()))) : 0;
            LazyDfa::Cache fresh(lazy, tiny ? 1 : LazyDfa::Cache::kDefaultCacheBytes);
            QByteArray problem;
            const Hits fromShared = lazyScan(shared, text, begin, &problem);
            const Hits fromFresh = lazyScan(fresh, text, begin, &problem);
            QVERIFY2(problem.isEmpty(), problem.constData());
            QVERIFY2(sorted(fromShared) == sorted(fromFresh),
                     qPrintable(QStringLiteral("text %1: shared %2\nfresh %3")
                                    .arg(t)
                                    .arg(QString::fromLatin1(format(sorted(fromShared))),
                                         QString::fromLatin1(format(sorted(fromFresh))))));
            problem = compare(oracle, shared, text, begin, &hits);
            QVERIFY2(problem.isEmpty(), problem.constData());
        }
        QVERIFY(hits > 1000);
        if (tiny)
            QVERIFY(shared.resets() > 0);
        else
            QCOMPARE(shared.resets(), size_t(0));
    }

    void idle()
    {
        const Group g = parsed({ "abc", "de\\b" }, {}, false);
        const LazyDfa lazy(g.inputs());
        LazyDfa::Cache cache(lazy);
        for (int ctx : { Dfa::AtFileStart, Dfa::AfterNonWord, Dfa::AfterWord })
            QVERIFY(cache.idle(cache.start(ctx)));
        auto after = [&](const QByteArray &text) {
            uint32_t s = cache.start(Dfa::AtFileStart);
            for (char c : text)
                s = cache.next(s, uint8_t(c));
            return s;
        };
        // A match in progress keeps a window walking past its end; one that failed does not.
        QVERIFY(!cache.idle(after("a")));
        QVERIFY(!cache.idle(after("ab")));
        QVERIFY(!cache.idle(after("xxab")));
        QVERIFY(cache.idle(after("abx")));
        QVERIFY(cache.idle(after("xyz")));
        // "de" waits for the next byte to decide its \b.
        QVERIFY(!cache.idle(after("de")));
        QVERIFY(!cache.reports(after("de")));
        QVERIFY(cache.reports(after("de ")));
        QVERIFY(cache.idle(after("de  ")));
        QVERIFY(cache.idle(after("dex")));

        // Nothing to build from: not valid.
        QVERIFY(!LazyDfa({}).isValid());
    }
};

QTEST_GUILESS_MAIN(TestLazyDfa)

#include "tst_lazydfa.moc"
