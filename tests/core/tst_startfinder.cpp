// SPDX-License-Identifier: GPL-3.0-or-later
#include <atomic>
#include <map>
#include <thread>

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QTest>

#include "automata/dfabuilder.h"
#include "automata/startfinder.h"
#include "pattern/regexparser.h"
#include "testutildfa.h"
#include "testutilregex.h"

using Hitscope::DfaBuilder;
using Hitscope::Regex;
using Hitscope::RuleSet;
using Hitscope::StartFinder;

namespace {

Regex parse(const QByteArray &source)
{
    Hitscope::RegexParser::Result r = Hitscope::RegexParser::parse(source);
    if (!r.error.isEmpty())
        qFatal("bad test pattern %s: %s", source.constData(), qPrintable(r.error));
    return std::move(r.regex);
}

RuleSet ruleSet(std::vector<Regex> regexes)
{
    RuleSet rules;
    for (Regex &re : regexes) {
        Hitscope::Pattern p;
        p.id = QStringLiteral("$p%1").arg(rules.patterns.size());
        p.regex = std::move(re);
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
    return rules;
}

StartFinder::ByteAt bytesOf(const QByteArray &text)
{
    return [&text](int64_t at) { return uint8_t(text[qsizetype(at)]); };
}

/// For every offset of `text`: the leftmost start of a match ending there, or -1.
std::vector<int64_t> expectedStarts(const Regex &re, const QByteArray &text)
{
    std::vector<int64_t> out(size_t(text.size()), -1);
    for (const TestUtil::RefMatch &m : TestUtil::referenceMatches(re, text))
        out[size_t(m.end)] = m.start;
    return out;
}

QByteArray firstDifference(const std::vector<int64_t> &ends, const std::vector<int64_t> &got,
                           const std::vector<int64_t> &want)
{
    for (size_t i = 0; i < ends.size(); ++i)
        if (got[i] != want[i])
            return "end " + QByteArray::number(qint64(ends[i])) + ": start " + QByteArray::number(qint64(got[i]))
                + ", expected " + QByteArray::number(qint64(want[i]));
    return {};
}

} // namespace

class TestStartFinder : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void batchMatchesReference_data();
    void batchMatchesReference();
    void countedRepeats_data();
    void countedRepeats();
    void base64Run();
    void threads();
};

void TestStartFinder::batchMatchesReference_data()
{
    QTest::addColumn<int>("seed");
    for (int seed = 1; seed <= 6; ++seed)
        QTest::addRow("seed %d", seed) << seed;
}

void TestStartFinder::batchMatchesReference()
{
    // Random patterns, every offset of random texts asked in ascending batches: with `verify` the answer is
    // exact everywhere (-1 where nothing ends), without it wherever a match ends.
    QFETCH(int, seed);
    QRandomGenerator rng { quint32(seed) * 104729u };
    static const QByteArray kAlphabets[] = { "ab", "ab ", "abc_ ", "a1 .-" };
    std::vector<Regex> regexes;
    std::vector<QByteArray> alphabets;
    for (int i = 0; i < 120; ++i) {
        alphabets.push_back(kAlphabets[rng.bounded(4)]);
        regexes.push_back(TestUtil::randomRegex(rng, 3, alphabets.back()));
    }
    const RuleSet rules = ruleSet(regexes);
    const StartFinder finder(rules);
    int checked = 0;
    for (size_t i = 0; i < rules.patterns.size(); ++i) {
        const Regex &re = rules.patterns[i].regex;
        for (int t = 0; t < 3; ++t) {
            const QByteArray text = TestUtil::randomText(rng, 1 + int(rng.bounded(160)), alphabets[i] + "x");
            const std::vector<int64_t> want = expectedStarts(re, text);
            // Ends in a few batches, as the scanner's batches would cut them; some batches skip offsets.
            std::vector<int64_t> ends, wantHere, got;
            for (int64_t from = 0; from < text.size();) {
                const int64_t to = std::min<int64_t>(text.size(), from + 1 + rng.bounded(80));
                const bool sparse = rng.bounded(3) == 0;
                ends.clear();
                wantHere.clear();
                for (int64_t e = from; e < to; ++e) {
                    if (sparse && rng.bounded(2))
                        continue;
                    ends.push_back(e);
                    wantHere.push_back(want[size_t(e)]);
                }
                from = to;
                finder.leftmostStarts(int(i), ends, text.size(), bytesOf(text), got, true);
                const QByteArray diff = firstDifference(ends, got, wantHere);
                QVERIFY2(diff.isEmpty(), qPrintable(QStringLiteral("pattern %1 in \"%2\": %3")
                                                         .arg(i)
                                                         .arg(QString::fromLatin1(text), QString::fromLatin1(diff))));
                // Without verify, only the ends of matches are asked (fixed lengths are trusted there).
                std::vector<int64_t> matched, wantMatched;
                for (size_t k = 0; k < ends.size(); ++k) {
                    if (wantHere[k] >= 0) {
                        matched.push_back(ends[k]);
                        wantMatched.push_back(wantHere[k]);
                    }
                }
                finder.leftmostStarts(int(i), matched, text.size(), bytesOf(text), got);
                QCOMPARE(firstDifference(matched, got, wantMatched), QByteArray());
                checked += int(ends.size());
            }
        }
    }
    QVERIFY(checked > 10000);
}

void TestStartFinder::countedRepeats_data()
{
    QTest::addColumn<QByteArray>("pattern");
    QTest::addColumn<QByteArray>("alphabet");
    QTest::addRow("unbounded count") << QByteArray("[ab]{12,}c?") << QByteArray("ab c");
    QTest::addRow("base64 tail") << QByteArray("[A-Za-z0-9+/]{24,}={0,2}") << QByteArray("aZ9+/= ");
    QTest::addRow("fixed count after a literal") << QByteArray("x[ab]{10}") << QByteArray("abx");
    QTest::addRow("bounded window") << QByteArray("a[^b]{2,30}b") << QByteArray("abcd");
    QTest::addRow("pairs") << QByteArray("(aa)+") << QByteArray("aab");
    QTest::addRow("word pairs") << QByteArray("(\\w\\w){3,}x") << QByteArray("ab_x ");
    QTest::addRow("boundaries") << QByteArray("\\b[a-z]{6,}\\b") << QByteArray("abc .");
    QTest::addRow("file start") << QByteArray("^[ab]{8,}") << QByteArray("ab");
    QTest::addRow("file end") << QByteArray("[ab]{8,}$") << QByteArray("ab");
    QTest::addRow("nested counts") << QByteArray("(x[ab]{5,9}){2,}") << QByteArray("abx");
    QTest::addRow("never dies") << QByteArray("a.*") << QByteArray("ab");
}

void TestStartFinder::countedRepeats()
{
    // Patterns whose reversed DFAs have long chains and loops, over long runs of the chain's bytes: the
    // skips and the memo must not change a single answer.
    QFETCH(QByteArray, pattern);
    QFETCH(QByteArray, alphabet);
    const RuleSet rules = ruleSet({ parse(pattern) });
    const StartFinder finder(rules);
    QRandomGenerator rng(qHash(pattern));
    for (int t = 0; t < 8; ++t) {
        QByteArray text;
        while (text.size() < 500) {
            // Long runs of one or two bytes, then noise.
            const QByteArray run = TestUtil::randomText(rng, 1 + int(rng.bounded(2)), alphabet);
            text += TestUtil::randomText(rng, int(rng.bounded(120)), run);
            text += TestUtil::randomText(rng, int(rng.bounded(6)), alphabet);
        }
        const std::vector<int64_t> want = expectedStarts(rules.patterns[0].regex, text);
        std::vector<int64_t> ends(size_t(text.size())), got;
        for (size_t e = 0; e < ends.size(); ++e)
            ends[e] = int64_t(e);
        finder.leftmostStarts(0, ends, text.size(), bytesOf(text), got, true);
        QVERIFY2(firstDifference(ends, got, want).isEmpty(),
                 qPrintable(QString::fromLatin1(firstDifference(ends, got, want) + " in " + text)));
        // One at a time (no memo) agrees.
        for (size_t e = 0; e < ends.size(); e += 7)
            if (want[e] >= 0)
                QCOMPARE(finder.leftmostStart(0, int64_t(e), text.size(), bytesOf(text)), want[e]);
    }
}

void TestStartFinder::base64Run()
{
    // A 2 MiB base64 run: every offset past the 80th ends a match that starts at the run's first byte. Walking
    // back from each end alone would be quadratic (about 2^41 steps).
    const QByteArray pattern = "[A-Za-z0-9+/]{80,}={0,2}";
    const RuleSet rules = ruleSet({ parse(pattern) });
    static const char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    QRandomGenerator rng(64);
    QByteArray text = "data: ";
    const qsizetype runBegin = text.size();
    const qsizetype runLength = 2 << 20;
    text.reserve(runBegin + runLength + 8);
    for (qsizetype i = 0; i < runLength; ++i)
        text += kBase64[rng.bounded(64)];
    text += "==\r\n";

    const Regex &forward = rules.patterns[0].regex;
    const DfaBuilder::Result dfa = DfaBuilder::build({ { &forward, 0 } }, 10000);
    QVERIFY(!dfa.exceededBudget);
    std::vector<int64_t> ends;
    for (const TestUtil::DfaHit &h : TestUtil::scanDfa(dfa.dfa, text))
        ends.push_back(h.end);
    QCOMPARE(qsizetype(ends.size()), runLength - 79 + 2);

    const StartFinder finder(rules);
    // A scanner-like reader: a std::function per byte, as Scanner::resolve passes.
    const StartFinder::ByteAt byteAt = bytesOf(text);
    std::vector<int64_t> starts;
    QElapsedTimer timer;
    timer.start();
    finder.leftmostStarts(0, ends, text.size(), byteAt, starts);
    const qint64 ns = timer.nsecsElapsed();
    qInfo("2 MiB base64 run: %zu ends resolved in %.1f ms (%.1f ns per end)", ends.size(), double(ns) / 1e6,
          double(ns) / double(ends.size()));
    QCOMPARE(starts.size(), ends.size());
    QCOMPARE(std::count(starts.begin(), starts.end(), int64_t(runBegin)), qsizetype(ends.size()));

    // The same with verify (the pattern is variable-length: the same walk) and on 4 KiB one end at a time,
    // for comparison.
    timer.restart();
    finder.leftmostStarts(0, ends, text.size(), byteAt, starts, true);
    qInfo("with verify: %.1f ms", double(timer.nsecsElapsed()) / 1e6);
    QCOMPARE(std::count(starts.begin(), starts.end(), int64_t(runBegin)), qsizetype(ends.size()));
    timer.restart();
    int64_t singles = 0;
    for (int64_t e : ends) {
        if (e >= 4096)
            break;
        QCOMPARE(finder.leftmostStart(0, e, text.size(), byteAt), int64_t(runBegin));
        ++singles;
    }
    qInfo("one end at a time: %lld ends of the first 4 KiB in %.1f ms", qlonglong(singles),
          double(timer.nsecsElapsed()) / 1e6);
}

void TestStartFinder::threads()
{
    // A fresh finder used from four threads at once, one batch per (thread, pattern): same answers.
    QRandomGenerator rng(11);
    std::vector<Regex> regexes;
    for (int i = 0; i < 48; ++i)
        regexes.push_back(TestUtil::randomRegex(rng, 3, "ab "));
    const RuleSet rules = ruleSet(regexes);
    const QByteArray text = TestUtil::randomText(rng, 300, "ab ");
    std::vector<int64_t> ends(size_t(text.size()));
    for (size_t e = 0; e < ends.size(); ++e)
        ends[e] = int64_t(e);
    std::vector<std::vector<int64_t>> expected;
    for (const Hitscope::Pattern &p : rules.patterns)
        expected.push_back(expectedStarts(p.regex, text));

    const StartFinder finder(rules);
    std::atomic<int> wrong { 0 };
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t) {
        pool.emplace_back([&, t] {
            std::vector<int64_t> got;
            for (size_t k = 0; k < expected.size(); ++k) {
                const size_t i = (k + size_t(t) * 12) % expected.size();
                finder.leftmostStarts(int(i), ends, text.size(), bytesOf(text), got, true);
                if (got != expected[i])
                    ++wrong;
            }
        });
    }
    for (std::thread &th : pool)
        th.join();
    QCOMPARE(wrong.load(), 0);
}

QTEST_GUILESS_MAIN(TestStartFinder)
#include "tst_startfinder.moc"
