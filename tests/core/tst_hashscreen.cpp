// SPDX-License-Identifier: GPL-3.0-or-later
// HashScreen: which sequences it takes, and that a scan finds exactly the occurrences a position-by-position
// comparison finds, whatever the key lengths, at the edges of the data and of the range of ends asked for.
#include <algorithm>
#include <cstring>
#include <iterator>

#include <QRandomGenerator>
#include <QTest>

#include "automata/hashscreen.h"
#include "testutilguarded.h"
#include "testutilregex.h"

using namespace Hitscope;

namespace {

using Sequence = HashScreen::Sequence;
/// (tag, end) pairs, sorted, duplicates kept: a sequence found twice at one end is an error to see.
using Found = std::vector<std::pair<uint32_t, int64_t>>;

Sequence lit(const QByteArray &text)
{
    Sequence s;
    for (char c : text)
        s.push_back(ByteSet().set(uint8_t(c)));
    return s;
}

Sequence nocase(const QByteArray &text)
{
    Sequence s;
    for (char c : text) {
        ByteSet set;
        set.set(uint8_t(c));
        if (c >= 'a' && c <= 'z')
            set.set(uint8_t(c - 'a' + 'A'));
        else if (c >= 'A' && c <= 'Z')
            set.set(uint8_t(c - 'A' + 'a'));
        s.push_back(set);
    }
    return s;
}

/// The sixteen bytes whose high nibble is that of `b`.
ByteSet nibble(uint8_t b)
{
    ByteSet set;
    for (int low = 0; low < 16; ++low)
        set.set((b & 0xf0) | low);
    return set;
}

Sequence operator+(Sequence a, const Sequence &b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

struct Tagged
{
    Sequence sequence;
    uint32_t tag = 0;
};
using Sequences = std::vector<Tagged>;

/// Every (tag, end) of every sequence, whatever the range of ends: the scan's windows filter this.
Found bruteForce(const Sequences &sequences, const QByteArray &data)
{
    // Indexed by the bytes of the first position, so that thousands of sequences over 64 KiB stay quick; the
    // comparison itself is the plain one.
    std::vector<std::vector<size_t>> byFirst(256);
    for (size_t q = 0; q < sequences.size(); ++q)
        for (int b = 0; b < 256; ++b)
            if (sequences[q].sequence.front().test(size_t(b)))
                byFirst[size_t(b)].push_back(q);
    Found out;
    const uint8_t *d = reinterpret_cast<const uint8_t *>(data.constData());
    for (int64_t i = 0; i < data.size(); ++i) {
        for (size_t q : byFirst[d[i]]) {
            const Sequence &s = sequences[q].sequence;
            if (i + int64_t(s.size()) > data.size())
                continue;
            bool ok = true;
            for (size_t k = 1; k < s.size() && ok; ++k)
                ok = s[k].test(d[i + int64_t(k)]);
            if (ok)
                out.push_back({ sequences[q].tag, i + int64_t(s.size()) - 1 });
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

Found window(const Found &all, int64_t from, int64_t to)
{
    Found out;
    for (const auto &m : all)
        if (m.second >= from && m.second < to)
            out.push_back(m);
    return out;
}


Found scanned(const HashScreen &screen, const TestUtil::Guarded &data, int64_t n, int64_t from, int64_t to)
{
    std::vector<HashScreen::Match> matches;
    screen.scan(data.data(), n, from, to, matches);
    Found out;
    for (const auto &m : matches)
        out.push_back({ m.tag, m.end });
    std::sort(out.begin(), out.end());
    return out;
}

QByteArray format(const Found &found)
{
    QByteArray s;
    for (const auto &[tag, end] : found)
        s += QByteArray::number(tag) + ':' + QByteArray::number(end) + ' ';
    return s.trimmed();
}

/// Where two multisets differ, for the failure message.
QByteArray difference(const Found &got, const Found &want)
{
    Found missed, extra;
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missed));
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
    return "missed " + format(missed).left(600) + "\nextra " + format(extra).left(600);
}

} // namespace

Q_DECLARE_METATYPE(Sequences)

class TestHashScreen : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void handCases_data()
    {
        QTest::addColumn<Sequences>("sequences");
        QTest::addColumn<QByteArray>("data");

        QTest::newRow("literals") << Sequences { { lit("GLIBC"), 0 }, { lit("LIBC_2"), 1 }, { lit("abcd"), 2 } }
                                  << QByteArray("xxGLIBC_2.2 abcdabcd GLIBC LIBC_");
        QTest::newRow("nocase") << Sequences { { nocase("kernel32"), 5 }, { nocase("dll"), 6 } }
                                << QByteArray("KERNEL32.DLL kErNeL32.dll kernel3 DlL");
        QTest::newRow("nibbles") << Sequences { { lit("\x48\x8b") + Sequence { nibble(0x40) } + lit("\x24"), 1 },
                                                { Sequence { nibble(0x70), nibble(0x00) } + lit("\xc3"), 2 } }
                                 << QByteArray("\x48\x8b\x44\x24\x48\x8b\x4f\x24\x48\x8b\x50\x24"
                                               "\x7f\x0e\xc3\x70\x10\xc3\x48\x8b\x40\x24",
                                               22);
        QTest::newRow("length 2") << Sequences { { lit("MZ"), 0 }, { lit("PE"), 1 }, { nocase("zp"), 2 } }
                                  << QByteArray("MZ..PEPE MZP zPz");
        QTest::newRow("length 3") << Sequences { { lit("ELF"), 0 }, { nocase("exe"), 1 }, { lit("LFE"), 2 } }
                                  << QByteArray("ELFELF.EXE exe eXeLF");
        // Keys of 2, 3 and 4 bytes both at offset 0 and ending at the last byte, where the loop has fewer than
        // four bytes left.
        QTest::newRow("very start and end")
            << Sequences { { lit("ab"), 0 }, { lit("abc"), 1 }, { lit("abcd"), 2 }, { lit("abcde"), 3 },
                           { lit("yz"), 4 }, { lit("xyz"), 5 }, { lit("wxyz"), 6 }, { lit("vwxyz"), 7 } }
            << QByteArray("abcde..abc..vwxyz");
        QTest::newRow("data of two bytes") << Sequences { { lit("ab"), 0 }, { lit("abc"), 1 } } << QByteArray("ab");
        QTest::newRow("data of three bytes") << Sequences { { lit("abc"), 0 }, { lit("bc"), 1 }, { lit("ab"), 2 } }
                                             << QByteArray("abc");
        // The tail pads with zeros: no key of zeros may match in the padding.
        QTest::newRow("zero bytes at the end")
            << Sequences { { lit(QByteArray("\0\0", 2)), 0 }, { lit(QByteArray("\0\0\0", 3)), 1 },
                           { lit(QByteArray("a\0\0", 3)), 2 }, { lit(QByteArray("\xff\0", 2)), 3 } }
            << QByteArray("xx\0\0\0\xff\0a\0", 9);
        QTest::newRow("duplicate tags") << Sequences { { lit("abc"), 4 }, { lit("bcd"), 4 }, { lit("abc"), 4 },
                                                       { lit("abc"), 9 }, { nocase("ab"), 4 } }
                                        << QByteArray("abcd ABcd abc");
        QTest::newRow("overlapping") << Sequences { { lit("aaaa"), 0 }, { lit("aa"), 1 }, { lit("abab"), 2 } }
                                     << QByteArray("aaaaaaa abababab");
        // The key sits where the bytes are rarest, inside the sequence: a key found too close to the data's
        // start or end for the whole sequence is no match.
        QTest::newRow("key inside the sequence")
            << Sequences { { lit(QByteArray("\0\0\0\0Q\x01\0\0", 8)), 3 } }
            << QByteArray("\0Q\x01\0\0 ", 6) + QByteArray("\0\0\0\0Q\x01\0\0", 8) + QByteArray("\0\0\0Q\x01\0\0", 7)
                   + QByteArray("x\0\0\0\0Q\x01\0", 8);
    }

    void handCases()
    {
        // Every window [from, to) of the data: only ends inside count, whatever the match's start.
        QFETCH(Sequences, sequences);
        QFETCH(QByteArray, data);
        HashScreen screen;
        for (const Tagged &t : sequences) {
            QVERIFY(HashScreen::suits(t.sequence));
            QVERIFY(screen.add(t.sequence, t.tag));
        }
        screen.build();
        QCOMPARE(screen.size(), sequences.size());
        QVERIFY(screen.bytes() > 0);
        const Found all = bruteForce(sequences, data);
        QVERIFY(!all.empty());
        const TestUtil::Guarded guarded(data);
        const int64_t n = data.size();
        for (int64_t from = 0; from <= n; ++from) {
            for (int64_t to = from; to <= n + 2; ++to) {
                const Found want = window(all, from, to);
                const Found got = scanned(screen, guarded, n, from, to);
                QVERIFY2(got == want, qPrintable(QStringLiteral("[%1, %2): ").arg(from).arg(to)
                                                 + QString::fromLatin1(difference(got, want))));
            }
        }
    }

    void suits()
    {
        // One position is SequenceScreen's.
        QVERIFY(!HashScreen::suits(lit("a")));
        const ByteSet any16 = nibble(0x30);
        // Every two-position window of 16 x 16 strings: too many for a key.
        const Sequence nibbles(6, any16);
        QVERIFY(!HashScreen::suits(nibbles));
        QVERIFY(!HashScreen::suits(Sequence { any16, any16 }));
        // 8 x 8 is the most a key may expand to; 9 x 8 is one set too many.
        ByteSet eight, nine;
        for (int b = 0; b < 8; ++b)
            eight.set(size_t('a' + b));
        nine = eight;
        nine.set('z');
        QVERIFY(HashScreen::suits(Sequence { eight, eight }));
        QVERIFY(!HashScreen::suits(Sequence { nine, eight }));
        // One narrow position among wide ones is enough for a key.
        QVERIFY(HashScreen::suits(Sequence { any16, any16, ByteSet().set('x'), any16 }));
        QVERIFY(HashScreen::suits(nocase("ab")));

        HashScreen screen;
        QVERIFY(!screen.add(lit("a"), 1));
        QVERIFY(!screen.add(nibbles, 2));
        QVERIFY(!screen.add(Sequence { nine, eight }, 3));
        QVERIFY(screen.empty());
        QVERIFY(screen.add(Sequence { any16, any16, ByteSet().set('x'), any16 }, 4));
        QCOMPARE(screen.size(), size_t(1));
        screen.build();
        // The refused ones are not found, the taken one is.
        const QByteArray data("a 000 0000 01x2 ab");
        const TestUtil::Guarded guarded(data);
        QCOMPARE(scanned(screen, guarded, data.size(), 0, data.size()), (Found { { 4u, 14 } }));
    }

    void randomized_data()
    {
        QTest::addColumn<quint32>("seed");
        QTest::addColumn<int>("count");
        QTest::newRow("a few") << 1u << 40;
        QTest::newRow("thousands") << 2u << 3000;
        QTest::newRow("thousands, other seed") << 3u << 4000;
    }

    void randomized()
    {
        // Random sequences over a small alphabet (so they occur in random data too, not only where planted),
        // mostly single bytes, some nocase letters and small sets, in 64 KiB with copies planted at the edges
        // and across random windows.
        QFETCH(quint32, seed);
        QFETCH(int, count);
        QRandomGenerator rng(seed);
        const QByteArray alphabet("abcdefghAB\x00\xff\x90 ", 14);
        auto letterCase = [](uint8_t c) {
            return uint8_t(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        };
        Sequences sequences;
        int refused = 0;
        while (int(sequences.size()) < count) {
            const int roll = int(rng.bounded(10));
            const int length = roll < 3 ? 2 + int(rng.bounded(2))
                : roll < 8              ? 4 + int(rng.bounded(8))
                                        : 12 + int(rng.bounded(9));
            Sequence s;
            for (int k = 0; k < length; ++k) {
                const uint8_t c = uint8_t(alphabet[int(rng.bounded(int(alphabet.size())))]);
                ByteSet set;
                set.set(c);
                const int kind = int(rng.bounded(12));
                if (kind == 0)
                    set.set(letterCase(c));
                else if (kind == 1)
                    for (int extra = 1 + int(rng.bounded(3)); extra > 0; --extra)
                        set.set(uint8_t(alphabet[int(rng.bounded(int(alphabet.size())))]));
                else if (kind == 2 && rng.bounded(4) == 0)
                    set |= nibble(uint8_t(rng.bounded(256)));
                s.push_back(set);
            }
            if (!HashScreen::suits(s)) {
                ++refused;
                continue;
            }
            // Some tags repeat: several sequences may stand for one pattern.
            sequences.push_back({ s, uint32_t(rng.bounded(10) == 0 ? rng.bounded(8) : sequences.size()) });
        }
        HashScreen screen;
        for (const Tagged &t : sequences)
            QVERIFY(screen.add(t.sequence, t.tag));
        screen.build();
        QCOMPARE(screen.size(), sequences.size());
        QVERIFY(screen.bytes() > 0);

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
        for (int round = 0; round < 4; ++round) {
            const int size = round == 1 ? 65536 : 60000 + int(rng.bounded(5536));
            QByteArray data = TestUtil::randomText(rng, size, alphabet);
            const int64_t n = data.size();
            std::vector<std::pair<int64_t, int64_t>> windows { { 0, n }, { 0, 1 }, { n - 1, n }, { 0, n + 5 } };
            for (int k = 0; k < 12; ++k) {
                const int64_t from = int64_t(rng.bounded(int(n)));
                const int64_t length = 1 + int64_t(rng.bounded(k < 6 ? 40 : 20000));
                windows.push_back({ from, std::min<int64_t>(n, from + length) });
            }
            // Copies ending at the data's edges and at both sides of every window's bounds.
            std::vector<int64_t> places { 0, 1, 2, 3, n - 1, n - 2, n - 3, n - 4 };
            for (const auto &[from, to] : windows)
                for (int64_t d : { -1, 0, 1 }) {
                    places.push_back(from + d);
                    places.push_back(to - 1 + d);
                }
            for (int k = 0; k < 200; ++k)
                places.push_back(int64_t(rng.bounded(int(n))));
            // Every sequence once, side by side, in half the rounds: each key and each table is used.
            if (round % 2 == 0) {
                int64_t at = int64_t(rng.bounded(8));
                size_t planted = 0;
                for (const Tagged &t : sequences) {
                    const QByteArray copy = instance(t.sequence);
                    if (at + copy.size() > n)
                        break;
                    data.replace(at, copy.size(), copy);
                    at += copy.size() + int64_t(rng.bounded(4));
                    ++planted;
                }
                QCOMPARE(planted, sequences.size());
            }
            for (int64_t end : places) {
                const QByteArray copy = instance(sequences[rng.bounded(int(sequences.size()))].sequence);
                const int64_t at = std::clamp<int64_t>(end - copy.size() + 1, 0, n - copy.size());
                data.replace(at, copy.size(), copy);
            }
            const Found all = bruteForce(sequences, data);
            QVERIFY(all.size() > 1000);
            const TestUtil::Guarded guarded(data);
            for (const auto &[from, to] : windows) {
                const Found want = window(all, from, to);
                const Found got = scanned(screen, guarded, n, from, to);
                QVERIFY2(got == want,
                         qPrintable(QStringLiteral("round %1, [%2, %3) of %4: ").arg(round).arg(from).arg(to).arg(n)
                                    + QString::fromLatin1(difference(got, want))));
            }
        }
        qInfo("%zu sequences (%d refused), %zu table bytes", sequences.size(), refused, screen.bytes());
    }
};

QTEST_GUILESS_MAIN(TestHashScreen)

#include "tst_hashscreen.moc"
