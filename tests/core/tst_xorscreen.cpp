// SPDX-License-Identifier: GPL-3.0-or-later
// XorScreen: every instruction set this CPU runs gives exactly the starts a byte-by-byte comparison gives, at any
// length (vector loops, their tails and the narrower loops the tails go to) and any key.
#include <vector>

#include <QRandomGenerator>
#include <QTest>

#include "cpu/xorscreen.h"

using namespace Hitscope;

namespace {

std::vector<int64_t> expected(const std::vector<uint8_t> &data, const uint8_t *d)
{
    std::vector<int64_t> starts;
    for (size_t i = 0; i + 4 < data.size(); ++i) {
        bool all = true;
        for (size_t k = 0; k < 4; ++k)
            all = all && (data[i + k] ^ data[i + k + 1]) == d[k];
        if (all)
            starts.push_back(int64_t(i));
    }
    return starts;
}

} // namespace

class TestXorScreen : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyInstructionSetAgreesWithBytes_data()
    {
        QTest::addColumn<int>("isa");
        QTest::addRow("scalar") << int(XorScreen::Isa::Scalar);
        QTest::addRow("SSE2") << int(XorScreen::Isa::Sse2);
        QTest::addRow("AVX2") << int(XorScreen::Isa::Avx2);
        QTest::addRow("AVX-512") << int(XorScreen::Isa::Avx512);
    }

    void everyInstructionSetAgreesWithBytes()
    {
        QFETCH(int, isa);
        const auto set = XorScreen::Isa(isa);
        if (!XorScreen::supported(set))
            QSKIP("this CPU does not run it");
        QRandomGenerator rng(17);
        const uint8_t plain[] = "http://";
        int64_t total = 0;
        for (int round = 0; round < 400; ++round) {
            // Lengths around every loop's step and reach, then longer ones.
            const size_t n = round < 200 ? size_t(round) : size_t(rng.bounded(5000));
            std::vector<uint8_t> data(n);
            // Few byte values, so that deltas repeat by chance too.
            for (uint8_t &b : data)
                b = uint8_t(rng.bounded(4));
            const uint8_t key = uint8_t(1 + rng.bounded(255));
            // The string under the key at random places, some at the very start and end.
            for (int k = 0; n >= 7 && k < 4; ++k) {
                const size_t at = k == 0 ? 0 : k == 1 ? n - 7 : size_t(rng.bounded(int(n - 6)));
                for (size_t j = 0; j < 7; ++j)
                    data[at + j] = plain[j] ^ key;
            }
            uint8_t d[4];
            for (int k = 0; k < 4; ++k)
                d[k] = uint8_t(plain[k] ^ plain[k + 1]);
            if (round % 3 == 0) // deltas of the random bytes themselves: many starts
                d[0] = d[1] = d[2] = d[3] = 1;
            std::vector<int64_t> out(n + 1);
            const int64_t found = XorScreen::screen(data.data(), int64_t(n), d, out.data(), set);
            out.resize(size_t(found));
            const std::vector<int64_t> want = expected(data, d);
            QVERIFY2(out == want, qPrintable(QStringLiteral("round %1, %2 bytes: %3 starts, %4 expected")
                                                 .arg(round).arg(n).arg(found).arg(want.size())));
            total += found;
        }
        QVERIFY(total > 1000);
    }
};

QTEST_GUILESS_MAIN(TestXorScreen)
#include "tst_xorscreen.moc"
