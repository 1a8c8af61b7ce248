// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU engine's hits do not depend on how it splits the work: one thread or several, long or short
// segments, a large file's chunk walked by one item or cut into parts for several threads.
#include <algorithm>
#include <array>
#include <set>

#include <QDir>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "automata/atomprefilter.h"
#include "automata/patterncatalog.h"
#include "rules/ruleloader.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

using Hits = TestUtil::ScanHits;

Hits scan(const RuleSet &rules, const PatternCatalog &catalog, const QString &dir, const LaunchParams &params)
{
    return TestUtil::cpuScanHits(rules, catalog, dir, params);
}

} // namespace

class TestCpuEngine : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void largeChunksOnSeveralThreads_data()
    {
        QTest::addColumn<bool>("prefilter");
        QTest::newRow("unbounded group alone") << false;
        QTest::newRow("with the screen") << true;
    }

    void largeChunksOnSeveralThreads()
    {
        // A chunk of a large file is cut into parts walked by several threads, each part but the first from a
        // guessed state; matches longer than a piece (base64 runs of up to 4,000 bytes) and across the edges
        // of parts, pieces and batches must come out as from one thread walking the file whole.
        QFETCH(bool, prefilter);
        QTemporaryDir tmp;
        // Regex and literal lists: every end is a hit of its own, so that no YARA start search (quadratic in
        // a run of base64) dominates the test.
        const QString regexes = tmp.filePath(QStringLiteral("r.tsv"));
        QVERIFY(TestUtil::writeFile(regexes, "-\tb64\t[A-Za-z0-9+/]{40,}={0,2}\n-\tabcf\tab(c|de)*f\n"
                                             "-\tword\t\\bc+f\\b\n"));
        const QString literals = tmp.filePath(QStringLiteral("l.txt"));
        QVERIFY(TestUtil::writeFile(literals, "GLIBC_2.2.5\nkernel32\nVirtualAlloc\n__libc_start_main\n"
                                              "hex: 55 48 89 E5 ?? 48 83 EC\n"));
        const RuleSet rules = RuleLoader::loadFiles({ regexes, literals });
        QVERIFY(rules.rejections.empty());
        PatternCatalog catalog = TestUtil::compileInSmallGroups(rules);
        QVERIFY(catalog.rejections.empty());
        bool unbounded = false;
        for (const DfaGroup &g : catalog.groups)
            unbounded = unbounded || g.unbounded();
        QVERIFY(unbounded);
        if (prefilter) {
            QVERIFY(catalog.prefilter);
            const auto &screened = catalog.prefilter->screened;
            QVERIFY2(std::count(screened.begin(), screened.end(), 1) >= 4,
                     "the literals are not screened: the test tests nothing");
        } else {
            catalog.prefilter.reset();
        }

        QRandomGenerator rng(31);
        const QString dir = tmp.filePath(QStringLiteral("corpus"));
        QVERIFY(QDir().mkpath(dir));
        for (int f = 0; f < 3; ++f) {
            QByteArray data;
            while (data.size() < (f == 0 ? 3 << 20 : 200000 + f * 7777)) {
                switch (rng.bounded(6)) {
                case 0: // a long base64 run, now and then across a batch edge
                    for (int i = 0, n = 40 + int(rng.bounded(4000)); i < n; ++i)
                        data += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[rng.bounded(64)];
                    data += rng.bounded(2) ? "== " : " ";
                    break;
                case 1:
                    data += " ab" + QByteArray(int(rng.bounded(5000)), 'c') + "f ";
                    break;
                case 2:
                    data += std::array { "GLIBC_2.2.5", "kernel32", "VirtualAlloc", "__libc_start_main" }[rng.bounded(4)];
                    break;
                case 3:
                    data += QByteArray("\x55\x48\x89\xE5\x90\x48\x83\xEC\x10", 9);
                    break;
                default:
                    for (int i = 0, n = int(rng.bounded(3000)); i < n; ++i)
                        data += char(rng.bounded(4) == 0 ? rng.bounded(256) : 'a' + rng.bounded(26));
                }
            }
            QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f%1.bin").arg(f), data));
        }

        LaunchParams whole;
        whole.threads = 1; // one item per chunk, its pieces in one thread's lanes
        whole.segmentBytes = 1 << 20;
        whole.batchBytes = 1 << 20;
        LaunchParams parts = whole;
        parts.threads = 2; // chunks of up to 1 MiB in parts of 256 KiB, pieces of 1000 bytes
        parts.segmentBytes = 1000;
        LaunchParams many = parts;
        many.threads = 4; // chunks of up to 300,000 bytes in parts of 37,500, pieces of 700
        many.segmentBytes = 700;
        many.batchBytes = 300000;
        const Hits want = scan(rules, catalog, dir, whole);
        QVERIFY(want.size() > 500);
        std::set<int> patterns;
        for (const auto &hit : want)
            patterns.insert(std::get<1>(hit));
        QCOMPARE(patterns.size(), rules.patterns.size()); // every string is found somewhere
        int64_t longest = 0;
        for (const auto &hit : want)
            longest = std::max(longest, std::get<3>(hit));
        QVERIFY2(longest > 3000, "no match spans several pieces: the test tests nothing");
        for (const LaunchParams &p : { parts, many }) {
            const Hits got = scan(rules, catalog, dir, p);
            QCOMPARE(got.size(), want.size());
            QVERIFY(got == want);
        }
    }
};

QTEST_GUILESS_MAIN(TestCpuEngine)

#include "tst_cpuengine.moc"
