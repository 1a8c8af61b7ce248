// SPDX-License-Identifier: GPL-3.0-or-later
// SequenceScreen: which patterns are sequences, and that a screen finds exactly the occurrences a byte-by-byte
// comparison finds, with every instruction set this CPU runs, at the edges of the data and of the range of
// ends asked for.
#include <algorithm>
#include <cstring>
#include <set>

#include <QRandomGenerator>
#include <QTest>

#include "automata/sequencescreen.h"
#include "testutilguarded.h"
#include "testutilregex.h"

using namespace Hitscope;
using TestUtil::parseRegex;

namespace {

using Sequence = SequenceScreen::Sequence;
using Found = std::set<std::pair<uint32_t, int64_t>>; // tag, end

Sequence bytes(const QByteArray &text)
{
    Sequence s;
    for (char c : text) {
        ByteSet set;
        set.set(uint8_t(c));
        s.push_back(set);
    }
    return s;
}

Found bruteForce(const std::vector<Sequence> &sequences, const QByteArray &data, int64_t from, int64_t to)
{
    Found out;
    for (size_t q = 0; q < sequences.size(); ++q) {
        const Sequence &s = sequences[q];
        for (int64_t i = 0; i + int64_t(s.size()) <= data.size(); ++i) {
            bool ok = true;
            for (size_t k = 0; k < s.size() && ok; ++k)
                ok = s[k].test(uint8_t(data.constData()[i + int64_t(k)]));
            const int64_t end = i + int64_t(s.size()) - 1;
            if (ok && end >= from && end < to)
                out.insert({ uint32_t(q), end });
        }
    }
    return out;
}


Found screened(const SequenceScreen &screen, const QByteArray &data, int64_t from, int64_t to, SequenceScreen::Isa isa,
               size_t *duplicates)
{
    std::vector<SequenceScreen::Match> matches;
    std::vector<SequenceScreen::Run> runs;
    const TestUtil::Guarded guarded(data);
    screen.scan(guarded.data(), data.size(), from, to, matches, runs, isa);
    Found out;
    size_t listed = 0;
    for (const auto &m : matches) {
        out.insert({ m.tag, m.end });
        ++listed;
    }
    for (const auto &r : runs)
        for (int64_t e = r.firstEnd; e <= r.lastEnd; ++e) {
            out.insert({ r.tag, e });
            ++listed;
        }
    *duplicates = listed - out.size();
    return out;
}

} // namespace

class TestSequenceScreen : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void expand()
    {
        // A literal is one sequence; nocase letters are sets of two.
        QCOMPARE(SequenceScreen::expand(parseRegex("GLIBC"), 16), std::vector<Sequence> { bytes("GLIBC") });
        const auto nocase = SequenceScreen::expand(parseRegex("ab", true), 16);
        QCOMPARE(nocase.size(), size_t(1));
        QCOMPARE(nocase[0][0].count(), size_t(2));
        // Alternatives that differ in one position are one sequence with a set there; others stay apart.
        const auto oneSet = SequenceScreen::expand(parseRegex("\\x0f(\\x84|\\x85)[\\x00-\\xff]{2}(H|L)\\x8b"), 16);
        QCOMPARE(oneSet.size(), size_t(1));
        QCOMPARE(oneSet[0].size(), size_t(6));
        QCOMPARE(oneSet[0][1].count(), size_t(2));
        QCOMPARE(oneSet[0][2].count(), size_t(256));
        QCOMPARE(SequenceScreen::expand(parseRegex("/bin/(ba)?sh"), 16).size(), size_t(2));
        // A short jump is one sequence per length.
        QCOMPARE(SequenceScreen::expand(parseRegex("UH.{0,8}\\x83"), 16).size(), size_t(9));
        // Not sequences: unbounded, too many, too long, assertions, empty.
        QVERIFY(SequenceScreen::expand(parseRegex("ab(c|de)*f"), 16).empty());
        QVERIFY(SequenceScreen::expand(parseRegex("a.{0,20}b"), 16).empty());
        QVERIFY(SequenceScreen::expand(parseRegex(QByteArray(65, 'x').constData()), 16).empty());
        QCOMPARE(SequenceScreen::expand(parseRegex(QByteArray(64, 'x').constData()), 16).size(), size_t(1));
        QVERIFY(SequenceScreen::expand(parseRegex("\\bword\\b"), 16).empty());
        QVERIFY(SequenceScreen::expand(parseRegex("^MZ"), 16).empty());
        QVERIFY(SequenceScreen::expand(parseRegex("(ab)?"), 16).empty());
    }

    void findsWhatComparingFinds_data()
    {
        QTest::addColumn<int>("count");
        QTest::addColumn<uint>("seed");
        QTest::addColumn<bool>("anyByte");
        QTest::newRow("a few, one pass") << 6 << 11u << false;
        QTest::newRow("many, several passes") << 150 << 12u << false;
        // Every byte value in sequences and data: matches are mostly the planted ones, and most 64-byte steps of
        // the VBMI loop are closed by its gate (high bytes take the other half of its tables).
        QTest::newRow("many, every byte value") << 150 << 13u << true;
    }

    void findsWhatComparingFinds()
    {
        // Random sequences (exact bytes, sets, any-byte positions, one to 64 long, runs of one byte) over random
        // data with copies planted at its very start and end, both sides of the bounds of the ends asked for,
        // and across the 32- and 64-byte steps of the vector loops.
        QFETCH(int, count);
        QFETCH(uint, seed);
        QFETCH(bool, anyByte);
        QRandomGenerator rng(seed);
        auto randomByte = [&](int alphabet) {
            return uint8_t(anyByte ? rng.bounded(256) : "abcdez\x00\xff"[rng.bounded(alphabet)]);
        };
        std::vector<Sequence> sequences;
        for (int q = 0; q < count; ++q) {
            Sequence s;
            const int kind = q % 5;
            const int length = kind == 0 ? 1 + int(rng.bounded(3))
                : kind == 4              ? 40 + int(rng.bounded(25))
                                         : 4 + int(rng.bounded(12));
            for (int k = 0; k < length; ++k) {
                ByteSet set;
                // A small alphabet, so that sequences occur in the random data too, not only where planted.
                set.set(randomByte(8));
                if (rng.bounded(6) == 0)
                    set.set(size_t(rng.bounded(256)));
                if (kind == 3 && k == 2)
                    set.set(); // any byte
                s.push_back(set);
            }
            if (kind == 1 && q % 2 == 1) // a run of one byte
                s.assign(size_t(length), s.front().count() == 1 ? s.front() : ByteSet().set(0));
            sequences.push_back(s);
        }
        sequences.push_back(Sequence(16, ByteSet().set(0))); // sixteen zero bytes
        // Runs of one byte in several lengths, found in one pass for the byte: each must still end where it can.
        for (int length : { 4, 7, 9, 31 })
            sequences.push_back(Sequence(size_t(length), ByteSet().set(0)));
        sequences.push_back(Sequence(5, ByteSet().set('z')));

        SequenceScreen screen;
        for (size_t q = 0; q < sequences.size(); ++q)
            screen.add(sequences[q], uint32_t(q));
        screen.build();
        if (count > 32)
            QVERIFY(screen.passes() > 1);

        auto instance = [&](const Sequence &s) {
            QByteArray out;
            for (const ByteSet &set : s) {
                int b = int(rng.bounded(256));
                while (!set.test(size_t(b)))
                    b = (b + 1) % 256;
                out += char(b);
            }
            return out;
        };
        for (int round = 0; round < 6; ++round) {
            // Sizes that are and are not multiples of the vector loops' steps and of the run finder's words.
            QByteArray data(round == 3 ? 4096 : 300 + int(rng.bounded(5000)), '\0');
            for (char &c : data)
                c = char(randomByte(round % 2 ? 8 : 6));
            const int64_t from = round < 2 ? 0 : int64_t(rng.bounded(int(data.size() / 2)));
            const int64_t to = round < 2 ? data.size() : from + int64_t(rng.bounded(int(data.size() - from))) + 1;
            std::vector<int64_t> places { 0, from - 1, from, from + 1, to - 2, to - 1, to, 31, 32, 63, 64, 95 };
            for (int k = 0; k < 40; ++k)
                places.push_back(int64_t(rng.bounded(int(data.size()))));
            for (size_t k = 0; k < places.size() + 2; ++k) {
                const QByteArray copy = instance(sequences[rng.bounded(int(sequences.size()))]);
                if (copy.size() > data.size())
                    continue;
                // A copy that ends at a place (ends are what the bounds select), or at the data's last byte.
                const int64_t end = k < places.size() ? places[k] : data.size() - 1 - int64_t(k - places.size());
                const int64_t at = std::clamp<int64_t>(end - copy.size() + 1, 0, data.size() - copy.size());
                data.replace(at, copy.size(), copy);
            }
            const Found want = bruteForce(sequences, data, from, to);
            QVERIFY(!want.empty());
            for (auto isa : { SequenceScreen::Isa::Scalar, SequenceScreen::Isa::Avx2, SequenceScreen::Isa::Avx512,
                              SequenceScreen::Isa::Avx512Vbmi }) {
                if (!SequenceScreen::supported(isa))
                    continue;
                size_t duplicates = 0;
                const Found got = screened(screen, data, from, to, isa, &duplicates);
                QCOMPARE(duplicates, size_t(0));
                if (got != want) {
                    for (const auto &[tag, end] : want)
                        if (!got.count({ tag, end }))
                            qWarning("missed: sequence %u (%zu bytes) ending at %lld", tag, sequences[tag].size(),
                                     qlonglong(end));
                    for (const auto &[tag, end] : got)
                        if (!want.count({ tag, end }))
                            qWarning("extra: sequence %u ending at %lld", tag, qlonglong(end));
                }
                QVERIFY2(got == want,
                         qPrintable(QStringLiteral("instruction set %1, round %2").arg(int(isa)).arg(round)));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestSequenceScreen)

#include "tst_sequencescreen.moc"
