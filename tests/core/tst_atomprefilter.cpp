// SPDX-License-Identifier: GPL-3.0-or-later
// Atoms and the CPU engine's prefilter: which atoms a pattern gets, which groups are covered, and that a scan
// with the prefilter reports exactly the hits of a scan with a pass per group.
#include <set>

#include <QDir>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "automata/atomextractor.h"
#include "automata/atomprefilter.h"
#include "automata/patterncatalog.h"
#include "pattern/prioritymatcher.h"
#include "rules/ruleloader.h"
#include "testutil.h"
#include "testutilregex.h"
#include "testutilyara.h"

using namespace Hitscope;
using TestUtil::parseRegex;

namespace {

QByteArray atomText(const AtomExtractor::Atom &atom)
{
    QByteArray out;
    for (const ByteSet &set : atom) {
        if (set.count() == 1) {
            for (int b = 0; b < 256; ++b)
                if (set.test(size_t(b)))
                    out += char(b);
        } else {
            out += '[' + QByteArray::number(qulonglong(set.count())) + ']';
        }
    }
    return out;
}

std::set<QByteArray> atomTexts(const char *pattern, bool caseless = false)
{
    std::set<QByteArray> out;
    for (const auto &a : AtomExtractor::extract(parseRegex(pattern, caseless)).atoms)
        out.insert(atomText(a));
    return out;
}

using Hits = TestUtil::ScanHits;

Hits scan(const RuleSet &rules, const PatternCatalog &catalog, const QString &dir, int64_t segmentBytes = 64 << 10)
{
    LaunchParams params;
    params.batchBytes = 1 << 20; // several batches, files in chunks
    params.segmentBytes = segmentBytes;
    params.threads = 2;
    return TestUtil::cpuScanHits(rules, catalog, dir, params);
}

/// The catalog the CLI compiles for the CPU engine (CompileOptions::tableless: what the prefilter finds has no DFA,
/// windows walk LazyDfas), scanned as `scan` does.
Hits tablelessScan(const RuleSet &rules, const QString &dir, const LaunchParams *params = nullptr)
{
    CompileOptions options;
    options.tableless = true;
    const PatternCatalog catalog = PatternCatalog::compile(rules, options);
    return params ? TestUtil::cpuScanHits(rules, catalog, dir, *params) : scan(rules, catalog, dir);
}

} // namespace

class TestAtomPrefilter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void atoms()
    {
        // A literal of up to 16 bytes is its own atom; case-folded letters are sets of two.
        QCOMPARE(atomTexts("xhelloy"), (std::set<QByteArray> { "xhelloy" }));
        QCOMPARE(atomTexts("ab", true), (std::set<QByteArray> { "[2][2]" }));
        // Alternatives each bring theirs; a required part wins over optional ones.
        QCOMPARE(atomTexts("(abcd|efgh)[0-9]+"), (std::set<QByteArray> { "abcd", "efgh" }));
        QCOMPARE(atomTexts("[a-z]*@example\\.com"), (std::set<QByteArray> { "@example.com" }));
        QCOMPARE(atomTexts("(foo)?barbaz"), (std::set<QByteArray> { "barbaz" }));
        // Nothing every match contains: no atoms.
        QVERIFY(AtomExtractor::extract(parseRegex("[a-z]+")).quality < 8);
        QVERIFY(atomTexts("(abc)?").empty());
        QVERIFY(AtomExtractor::extract(parseRegex("abc|[0-9]+")).quality < 8);
        // Zero bytes are common: four of them make a weak atom.
        const auto zeros = AtomExtractor::extract(Regex::fromLiteral("\0\0\0\0\0\0", 6));
        const auto text = AtomExtractor::extract(Regex::fromLiteral("GLIBC_", 6));
        QVERIFY(zeros.quality < text.quality);
        // A run of one byte is common too (ruler lines of dashes): the best 16 positions past it are taken.
        QCOMPARE(atomTexts("-----BEGIN CERTIFICATE-----"), (std::set<QByteArray> { "-BEGIN CERTIFICA" }));
        QVERIFY(AtomExtractor::extract(Regex::fromLiteral("====", 4)).quality < 18);
    }

    void prefilterCoversOnlyGroupsItCan()
    {
        QTemporaryDir tmp;
        const QString rulesPath = tmp.filePath(QStringLiteral("r.yar"));
        QVERIFY(TestUtil::writeFile(rulesPath, R"(
rule lits { strings: $a = "GLIBC_2.2.5" $b = "kernel32.dll" nocase wide condition: any of them }
rule hex { strings: $h = { 55 48 89 E5 [0-8] 48 83 EC ?? } condition: $h }
rule unbounded { strings: $u = /GCC: [^)]+\)/ condition: $u }
rule weak { strings: $w = /[a-z]{1,20}[0-9]/ condition: $w }
rule seq { strings: $s = /[a-z]{3}[0-9]/ $z = { 00 00 00 00 00 00 00 00 } condition: any of them }
)"));
        const RuleSet rules = RuleLoader::loadFiles({ rulesPath });
        QVERIFY(rules.rejections.empty());
        const PatternCatalog catalog = TestUtil::compileInSmallGroups(rules);
        QVERIFY(catalog.groups.size() >= 3);
        QVERIFY(catalog.prefilter);
        for (size_t g = 0; g < catalog.groups.size(); ++g) {
            bool strong = true;
            for (int p : catalog.groups[g].patterns) {
                const QString &rule = rules.rules[size_t(rules.patterns[size_t(p)].ruleIndex)].name;
                strong = strong && rule != QLatin1String("weak");
            }
            QCOMPARE(catalog.prefilter->covers(int(g)), strong);
        }
        // Fixed sequences, however weak their bytes, are screened whole (the hex string's jump as nine
        // lengths); the unbounded YARA regex is scanned in windows (YARA's scan limit bounds its matches); the
        // bounded regex with a weak atom keeps its group's pass.
        for (size_t p = 0; p < rules.patterns.size(); ++p) {
            const QString &rule = rules.rules[size_t(rules.patterns[p].ruleIndex)].name;
            const bool sequence = rule != QLatin1String("unbounded") && rule != QLatin1String("weak");
            QCOMPARE(catalog.prefilter->isScreened(int(p)), sequence);
        }
    }

    void longMaskedHexStringsScreenedWhole()
    {
        // Packer signatures (PEiD's) are hex strings of a hundred positions and more, most of them ??: no DFA
        // can hold them (its states multiply with each ??), so the hash screen finds them whole from a key of
        // neighbouring fixed bytes, or the sparse screen from their rarest byte, as YARA verifies at its atom. Planted across segment and batch edges, with
        // near misses, the -s lines must be yara's.
        QTemporaryDir tmp;
        QByteArray wild;
        for (int i = 0; i < 40; ++i)
            wild += " ??";
        const QByteArray sig1 = "9C 60 50 8D 88 00" + wild + " 8B DC 8B E1 68" + wild + wild + " C3";
        const QByteArray sig2 = "EB 06 68 ?? ?? ?? ?? C3" + wild + " 4? 5A" + wild + " 90 90 90 E8";
        // Fixed bytes that all stand alone: no hash key, no atom; the sparse screen takes it.
        const QByteArray sig3 = "EB" + wild + " EB" + wild + " 77" + wild + wild + " B3";
        const QString rulesPath = tmp.filePath(QStringLiteral("long.yar"));
        QVERIFY(TestUtil::writeFile(rulesPath, "rule packer1 { strings: $a = { " + sig1 + " } condition: $a }\n"
                                               "rule packer2 { strings: $b = { " + sig2 + " } condition: #b >= 1 }\n"
                                               "rule packer3 { strings: $c = { " + sig3 + " } condition: $c }\n"));
        const RuleSet rules = RuleLoader::loadFiles({ rulesPath });
        QVERIFY(rules.rejections.empty());
        CompileOptions options;
        options.tableless = true;
        const PatternCatalog catalog = PatternCatalog::compile(rules, options);
        QVERIFY(catalog.prefilter);
        for (size_t p = 0; p < rules.patterns.size(); ++p)
            QVERIFY2(catalog.prefilter->isScreened(int(p)), qPrintable(rules.patterns[p].id));

        // Bytes of a signature: its fixed positions, anything else at ?? (a nibble's high half for 4?).
        auto instance = [](const QByteArray &sig, QRandomGenerator &random) {
            QByteArray out;
            for (const QByteArray &token : sig.split(' ')) {
                if (token == "??")
                    out += char(random.bounded(256));
                else if (token.endsWith('?'))
                    out += char((token.left(1).toInt(nullptr, 16) << 4) | random.bounded(16));
                else
                    out += char(token.toInt(nullptr, 16));
            }
            return out;
        };
        QRandomGenerator random(77);
        const QString dir = tmp.filePath(QStringLiteral("corpus"));
        QVERIFY(QDir().mkpath(dir));
        for (int f = 0; f < 6; ++f) {
            QByteArray data(300000 + f * 50000, '\0');
            for (qsizetype i = 0; i < data.size(); i += 3)
                data[i] = char(random.bounded(256)); // zeros between random bytes, as in code
            const int64_t edges[] = { 0, 4096 - 50, 65536 - 100, 65536 + 7, 131072 - 1, int64_t(data.size()) - 400 };
            for (int64_t at : edges) {
                const int which = random.bounded(3);
                QByteArray s = instance(which == 0 ? sig1 : which == 1 ? sig2 : sig3, random);
                if (random.bounded(4) == 0)
                    s[s.size() - 1] = char(s[s.size() - 1] ^ 0x01); // a near miss: the last fixed byte wrong
                data.replace(at, s.size(), s);
            }
            QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f%1.bin").arg(f), data));
        }
        TestUtil::YaraReport expected;
        for (const QFileInfo &file : QDir(dir).entryInfoList(QDir::Files)) {
            QByteArray err;
            const TestUtil::YaraReport one = TestUtil::parseYaraReport(
                TestUtil::runYara({ QStringLiteral("-s"), rulesPath, file.filePath() }, &err));
            expected.insert(one.begin(), one.end());
        }
        std::set<QByteArray> matched;
        for (const auto &[key, lines] : expected)
            matched.insert(key.first);
        QCOMPARE(matched, (std::set<QByteArray> { "packer1", "packer2", "packer3" })); // each is planted somewhere
        QByteArray out;
        QCOMPARE(TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu"),
                                    QStringLiteral("-s"), QStringLiteral("--segment-bytes"), QStringLiteral("4K"),
                                    QStringLiteral("--batch-bytes"), QStringLiteral("64K"), rulesPath, dir },
                                  &out),
                 0);
        const TestUtil::YaraReport got = TestUtil::parseYaraReport(out);
        QVERIFY2(got == expected, qPrintable(TestUtil::describeReportDifference(expected, got)));
    }

    void sameHitsAsFullPasses()
    {
        QTemporaryDir tmp;
        const TestUtil::GeneratedCase c = TestUtil::generateCase(tmp.filePath(QStringLiteral("corpus")), 4242, 4096);
        for (const QString &file : { c.literalsFile, c.regexesFile }) {
            const RuleSet rules = RuleLoader::loadFiles({ file });
            PatternCatalog catalog = TestUtil::compileInSmallGroups(rules);
            if (file == c.literalsFile)
                QVERIFY2(catalog.prefilter, qPrintable(QStringLiteral("the literal list (%1 groups) gets no prefilter: the test tests nothing").arg(catalog.groups.size())));
            const Hits with = scan(rules, catalog, c.dir);
            catalog.prefilter.reset();
            const Hits without = scan(rules, catalog, c.dir);
            QVERIFY(!without.empty());
            QCOMPARE(with.size(), without.size());
            QVERIFY(with == without);
            QVERIFY(tablelessScan(rules, c.dir) == without);
        }
    }

    void screenBesideGroupPasses_data()
    {
        QTest::addColumn<QByteArray>("weak");
        QTest::addColumn<bool>("unbounded");
        // An unbounded group carries its state from chunk to chunk; a bounded one is walked in segments.
        QTest::newRow("unbounded pass") << QByteArray("/[a-z]{2}[0-9]+x/") << true;
        QTest::newRow("bounded pass") << QByteArray("/[a-z]{2}[0-9]{1,30}x/") << false;
    }

    void screenBesideGroupPasses()
    {
        // Screened strings and the windows around atoms, beside a group that keeps a pass of its own (weak
        // atoms): the hits must be those of full passes, also where a screened string crosses the edge of a
        // segment or of a chunk (a large file in 1 MiB batches).
        QFETCH(QByteArray, weak);
        QFETCH(bool, unbounded);
        QTemporaryDir tmp;
        const QString rulesPath = tmp.filePath(QStringLiteral("r.yar"));
        QVERIFY(TestUtil::writeFile(rulesPath,
                                    "rule lits { strings: $a = \"GLIBC_2.2.5\" $b = \"kernel32.dll\" nocase wide "
                                    "condition: any of them }\n"
                                    "rule hex { strings: $h = { 55 48 89 E5 [0-8] 48 83 EC ?? } condition: $h }\n"
                                    "rule win { strings: $r = /VirtualAlloc(Ex)?[a-z]{0,30}!/ condition: $r }\n"
                                    "rule weak { strings: $w = " + weak + " condition: $w }\n"));
        const RuleSet rules = RuleLoader::loadFiles({ rulesPath });
        QVERIFY(rules.rejections.empty());
        PatternCatalog catalog = TestUtil::compileInSmallGroups(rules);
        QVERIFY(catalog.prefilter);
        int passes = 0, windows = 0;
        for (size_t g = 0; g < catalog.groups.size(); ++g) {
            if (!catalog.prefilter->covers(int(g))) {
                ++passes;
                QCOMPARE(catalog.groups[g].unbounded(), unbounded);
            } else if (catalog.prefilter->groupReach[g] > 0) {
                ++windows;
            }
        }
        QCOMPARE(passes, 1);
        QVERIFY2(windows >= 1, "no group is scanned in windows: the test tests nothing");

        QRandomGenerator rng(7);
        const QString dir = tmp.filePath(QStringLiteral("corpus"));
        QVERIFY(QDir().mkpath(dir));
        const QByteArray wide = QByteArray("K\0e\0r\0N\0e\0l\0003\0002\0.\0d\0l\0l\0", 24);
        const QByteArray copies[] = { "GLIBC_2.2.5", wide, QByteArray("\x55\x48\x89\xE5\x90\x90\x48\x83\xEC\x10", 10),
                                      "ab123x", "VirtualAllocExabc!" };
        for (int f = 0; f < 5; ++f) {
            QByteArray data(f == 4 ? 3 << 20 : 30000 + f * 999, '\0');
            for (char &c : data)
                c = rng.bounded(3) == 0 ? char(rng.bounded(256)) : char('a' + rng.bounded(26));
            std::vector<qsizetype> places;
            for (int k = 0; k < 40; ++k)
                places.push_back(qsizetype(rng.bounded(int(data.size() - 30))));
            // Across every segment edge (64 KiB) and so every chunk edge (1 MiB), a few bytes either side.
            if (f == 4)
                for (qsizetype edge = 64 << 10; edge < data.size(); edge += 64 << 10)
                    for (int k = 0; k < 4; ++k)
                        places.push_back(edge - 1 - qsizetype(edge / (64 << 10) + k * 5) % 23);
            for (size_t k = 0; k < places.size(); ++k) {
                const QByteArray &copy = copies[k % 5];
                data.replace(std::min(places[k], data.size() - copy.size()), copy.size(), copy);
            }
            QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f%1.bin").arg(f), data));
        }
        // Alone in its folder, a large file's first chunk owns [0, 1 MiB - 1) (fixed batches of 1 MiB). A copy that
        // starts 6 bytes before that edge has its atom (GLIB) in the bytes the second chunk holds before the
        // bytes it owns, and its end in them: only the second batch's marks can find it, and nothing else is
        // near enough to mark its block.
        const QString edgeDir = tmp.filePath(QStringLiteral("edge"));
        QVERIFY(QDir().mkpath(edgeDir));
        QByteArray big(3 << 20, '\0');
        for (char &c : big)
            c = char('a' + rng.bounded(26));
        const qsizetype edge = (1 << 20) - 1;
        big.replace(edge - 6, 11, "GLIBC_2.2.5");
        QVERIFY(TestUtil::writeFile(edgeDir + QStringLiteral("/big.bin"), big));
        const Hits with = scan(rules, catalog, dir);
        const Hits edgeWith = scan(rules, catalog, edgeDir);
        catalog.prefilter.reset();
        const Hits without = scan(rules, catalog, dir);
        const Hits edgeWithout = scan(rules, catalog, edgeDir);
        QCOMPARE(edgeWithout.size(), size_t(1));
        QVERIFY(edgeWith == edgeWithout);
        std::set<int> patterns;
        for (const auto &hit : without)
            patterns.insert(std::get<1>(hit));
        QCOMPARE(patterns.size(), rules.patterns.size()); // every string is found somewhere
        QVERIFY(without.size() > 300);
        QCOMPARE(with.size(), without.size());
        QVERIFY(with == without);
        QVERIFY(tablelessScan(rules, dir) == without);
        QVERIFY(tablelessScan(rules, edgeDir) == edgeWithout);
    }

    void windowsWithBoundariesAndYaraScanLimit()
    {
        // Regexes with \b, and unbounded ones that YARA cuts at its scan limit (4,096 bytes), in windows around
        // atoms widened by the edges of their sub-patterns (the digits around an IP address's dots): the
        // matches must be those of full passes, at a file's start and end, next to word bytes, longer than
        // the limit, and across the edges of segments and of chunks (a large file in 1 MiB batches, whose
        // chunks then hold 4 KiB before the bytes they own).
        QTemporaryDir tmp;
        const QString rulesPath = tmp.filePath(QStringLiteral("r.yar"));
        QVERIFY(TestUtil::writeFile(rulesPath, R"(
rule ip { strings: $ip = /\b(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}\b/ condition: $ip }
rule url { strings: $u = /https?:\/\/[a-z.]+\.(org|com)\// condition: $u }
rule banner { strings: $v = /[Vv]ersion [0-9]+\.[0-9]+/ condition: $v }
rule lits { strings: $a = "GLIBC_2.2.5" condition: $a }
)"));
        const RuleSet rules = RuleLoader::loadFiles({ rulesPath });
        QVERIFY(rules.rejections.empty());
        PatternCatalog catalog = TestUtil::compileInSmallGroups(rules);
        QVERIFY(catalog.prefilter);
        for (size_t g = 0; g < catalog.groups.size(); ++g)
            QVERIFY2(catalog.prefilter->covers(int(g)), qPrintable(QStringLiteral("group %1 keeps a pass").arg(g)));
        QCOMPARE(catalog.prefilter->maxRadius, PriorityMatcher::kScanLimit);
        QVERIFY(catalog.chunkContext() > PriorityMatcher::kScanLimit);

        QRandomGenerator rng(5);
        const QString dir = tmp.filePath(QStringLiteral("corpus"));
        QVERIFY(QDir().mkpath(dir));
        auto host = [&](int n) {
            QByteArray h;
            for (int i = 0; i < n; ++i)
                h += i % 7 == 6 ? '.' : char('a' + rng.bounded(26));
            return h;
        };
        for (int f = 0; f < 4; ++f) {
            QByteArray data;
            if (f != 3)
                data += "10.0.0.1 "; // at the start of the file
            while (data.size() < (f == 0 ? 3 << 20 : 60000 + f * 4321)) {
                switch (rng.bounded(8)) {
                case 0:
                    data += QByteArray::number(rng.bounded(300)) + '.' + QByteArray::number(rng.bounded(300)) + '.'
                        + QByteArray::number(rng.bounded(300)) + '.' + QByteArray::number(rng.bounded(300));
                    data += rng.bounded(3) == 0 ? "x" : " "; // a word byte after it: no match there
                    break;
                case 1:
                    data += "http://" + host(int(rng.bounded(2) ? rng.bounded(40) : rng.bounded(5000))) + ".org/";
                    break;
                case 2:
                    data += "Version " + QByteArray(int(rng.bounded(2) ? 1 + rng.bounded(5) : rng.bounded(6000)), '7')
                        + ".1";
                    break;
                case 3:
                    data += "GLIBC_2.2.5";
                    break;
                default:
                    for (int i = 0, n = int(rng.bounded(2000)); i < n; ++i)
                        data += char(rng.bounded(4) == 0 ? rng.bounded(256) : 'a' + rng.bounded(26));
                }
            }
            if (f != 2)
                data += " 192.168.1.254"; // at the end of the file
            QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f%1.bin").arg(f), data));
        }
        const Hits with = scan(rules, catalog, dir);
        catalog.prefilter.reset();
        const Hits without = scan(rules, catalog, dir);
        std::set<int> patterns;
        int64_t longest = 0;
        for (const auto &[path, pattern, offset, length] : without) {
            patterns.insert(pattern);
            longest = std::max(longest, length);
        }
        QCOMPARE(patterns.size(), rules.patterns.size()); // every string is found somewhere
        QVERIFY2(longest > 3000, "no match near the scan limit: the test tests nothing");
        QCOMPARE(with.size(), without.size());
        QVERIFY(with == without);
        QVERIFY(tablelessScan(rules, dir) == without);
    }

    void windowsAtFileStartAndEnd()
    {
        // ^ and $ in windows: a window at a file's first byte starts in the file-start context, and one that
        // reaches the file's end reports what only the end decides. Copies elsewhere, and in a large file's
        // later chunks, are no matches.
        QTemporaryDir tmp;
        const QString rulesPath = tmp.filePath(QStringLiteral("r.yar"));
        QVERIFY(TestUtil::writeFile(rulesPath, "rule head { strings: $h = /^MZ[a-z]{2}/ condition: $h }\n"
                                               "rule tail { strings: $t = /end[0-9]{2}$/ condition: $t }\n"));
        const RuleSet rules = RuleLoader::loadFiles({ rulesPath });
        QVERIFY(rules.rejections.empty());
        PatternCatalog catalog = TestUtil::compileInSmallGroups(rules);
        QVERIFY(catalog.prefilter);
        for (size_t g = 0; g < catalog.groups.size(); ++g)
            QVERIFY(catalog.prefilter->covers(int(g)) && catalog.prefilter->groupReach[g] > 0);
        const QString dir = tmp.filePath(QStringLiteral("corpus"));
        QVERIFY(QDir().mkpath(dir));
        for (int f = 0; f < 3; ++f) {
            QByteArray data(f == 2 ? (3 << 20) + 17 : 5000 + f * 333, '.');
            for (qsizetype at = 100; at + 5 < data.size(); at += 70001)
                data.replace(at, 9, "MZabend42");
            if (f != 1) {
                data.replace(0, 4, "MZxy");
                data.replace(data.size() - 5, 5, "end77");
            }
            QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f%1.bin").arg(f), data));
        }
        const Hits with = scan(rules, catalog, dir);
        catalog.prefilter.reset();
        const Hits without = scan(rules, catalog, dir);
        QCOMPARE(without.size(), size_t(4)); // a head and a tail in files 0 and 2
        for (const auto &[path, pattern, offset, length] : without)
            QVERIFY(offset == 0 || offset + length == QFileInfo(QString::fromLocal8Bit(path)).size());
        QVERIFY(with == without);
        QVERIFY(tablelessScan(rules, dir) == without);
    }

    void atomsAcrossSegmentEdgesWithoutBoundedGroups()
    {
        // With only unbounded patterns the segments do not overlap (no bounded match to hold), yet an atom may
        // cross a segment's edge: each segment must be screened from early enough to see it whole.
        QTemporaryDir tmp;
        const QString rulesPath = tmp.filePath(QStringLiteral("r.yar"));
        QVERIFY(TestUtil::writeFile(rulesPath, "rule u { strings: $u = /qzxj[a-z]*!/ condition: $u }\n"));
        const RuleSet rules = RuleLoader::loadFiles({ rulesPath });
        QVERIFY(rules.rejections.empty());
        PatternCatalog catalog = TestUtil::compileInSmallGroups(rules);
        QVERIFY(catalog.prefilter && catalog.prefilter->covers(0));
        QCOMPARE(catalog.maxBoundedMatchLength(), 0);
        const QString dir = tmp.filePath(QStringLiteral("corpus"));
        QVERIFY(QDir().mkpath(dir));
        // A copy whose atom starts 3, 2 and 1 bytes before a 64-byte segment edge, and one at the edge.
        QByteArray data(1000, '.');
        const int starts[] = { 61, 126, 191, 256, 900 };
        for (int at : starts)
            data.replace(at, 7, "qzxjab!");
        QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f.bin"), data));
        LaunchParams params;
        params.batchBytes = 1 << 20;
        params.segmentBytes = 64;
        params.threads = 1;
        const Hits with = TestUtil::cpuScanHits(rules, catalog, dir, params);
        catalog.prefilter.reset();
        const Hits without = TestUtil::cpuScanHits(rules, catalog, dir, params);
        QCOMPARE(without.size(), std::size(starts));
        QCOMPARE(with.size(), without.size());
        QVERIFY(with == without);
        QVERIFY(tablelessScan(rules, dir, &params) == without);
    }

    void xorStringsFoundByTheirDeltas()
    {
        // An xor string is found by the XOR of neighbouring bytes (the same under every key) instead of one atom
        // per key: copies under the first and last keys of the range, wide copies, copies at a file's start and
        // end and across chunks of a large file are all found; the plain text (key 0, outside 0x01-0xff) is not.
        QTemporaryDir tmp;
        const QString rulesPath = tmp.filePath(QStringLiteral("r.yar"));
        QVERIFY(TestUtil::writeFile(rulesPath,
                                    "rule lits { strings: $a = \"GLIBC_2.2.5\" $b = \"VirtualAlloc\" condition: any of them }\n"
                                    "rule xored { strings: $x = \"http://\" xor(0x01-0xff) condition: $x }\n"
                                    "rule xored_wide { strings: $w = \"kernel32\" wide xor(0x20-0x30) condition: $w }\n"));
        const RuleSet rules = RuleLoader::loadFiles({ rulesPath });
        QVERIFY(rules.rejections.empty());
        PatternCatalog catalog = TestUtil::compileInSmallGroups(rules);
        QVERIFY(catalog.prefilter);
        QCOMPARE(catalog.prefilter->xorAtoms.size(), size_t(2));
        // Not 255 + 17 keyed sequences in the screen: the xor strings are screened by their deltas.
        QVERIFY2(catalog.prefilter->screen.size() < 8, qPrintable(QString::number(catalog.prefilter->screen.size())));

        auto xored = [](QByteArray text, int key, bool wide) {
            QByteArray out;
            for (char c : text) {
                out += char(uint8_t(c) ^ uint8_t(key));
                if (wide)
                    out += char(key);
            }
            return out;
        };
        QRandomGenerator rng(99);
        const QString dir = tmp.filePath(QStringLiteral("corpus"));
        QVERIFY(QDir().mkpath(dir));
        const int asciiKeys[] = { 1, 0xff, 0x41, 0x2a };
        for (int f = 0; f < 6; ++f) {
            QByteArray data(f == 5 ? 3 << 20 : 20000 + f * 777, '\0'); // the last one spans several batches
            for (char &c : data)
                c = rng.bounded(4) == 0 ? char(rng.bounded(256)) : char('a' + rng.bounded(26));
            // Places: the file's start and end, random ones, and in the large file across every segment edge
            // (64 KiB) and every MiB (where the batches of 1 MiB cut it into chunks) with a few bytes either side.
            std::vector<qsizetype> places { 0, -1 };
            for (int k = 0; k < 38; ++k)
                places.push_back(qsizetype(rng.bounded(int(data.size() - 20))));
            if (f == 5)
                for (qsizetype edge = 64 << 10; edge < data.size(); edge += 64 << 10)
                    places.push_back(edge - 1 - qsizetype(edge / (64 << 10)) % 15);
            for (size_t k = 0; k < places.size(); ++k) {
                const bool wide = k % 3 == 2;
                // Wide keys run through 0x20..0x30, both ends included; ASCII ones include 0x01 and 0xff.
                const int key = wide ? 0x20 + int(k * 7 % 17) : asciiKeys[k % 4];
                const QByteArray copy = xored(wide ? "kernel32" : "http://", key, wide);
                const qsizetype at = places[k] < 0 ? data.size() - copy.size() : std::min(places[k], data.size() - copy.size());
                data.replace(at, copy.size(), copy);
            }
            data.replace(100, 7, "http://"); // key 0: not a match of xor(0x01-0xff)
            QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f%1.bin").arg(f), data));
        }
        const Hits with = scan(rules, catalog, dir);
        // Segments of a whole batch: the screening's 64 KiB steps then have copies across their edges too.
        const Hits withLongSegments = scan(rules, catalog, dir, 1 << 20);
        catalog.prefilter.reset();
        const Hits without = scan(rules, catalog, dir);
        QVERIFY(without.size() > 200);
        QCOMPARE(with.size(), without.size());
        QVERIFY(with == without);
        QCOMPARE(withLongSegments.size(), without.size());
        QVERIFY(withLongSegments == without);
        QVERIFY(tablelessScan(rules, dir) == without);
        // The plain text (key 0) at offset 100 is no match of xor(0x01-0xff), in either scan.
        int xorPattern = -1;
        for (size_t p = 0; p < rules.patterns.size(); ++p)
            if (rules.patterns[p].id == QLatin1String("$x"))
                xorPattern = int(p);
        QVERIFY(xorPattern >= 0);
        int xorHits = 0;
        for (const auto &[path, pattern, offset, length] : with) {
            if (pattern != xorPattern)
                continue;
            ++xorHits;
            QVERIFY2(offset != 100, path.constData());
        }
        QVERIFY(xorHits > 100);
    }

    void thousandsOfStringsInTablelessGroups()
    {
        // A collection's worth of YARA strings (text, nocase, wide, hex with jumps and wildcards, regexes) in a
        // CPU-only catalog: no DFA is built for any that the prefilter finds, most sequences go to the hash
        // screen, windows walk LazyDfas of many groups. The matches must be those of full passes over DFAs.
        QRandomGenerator rng(2024);
        const QByteArray alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_.";
        auto word = [&](int n) {
            QByteArray w;
            for (int i = 0; i < n; ++i)
                w += alphabet[int(rng.bounded(int(alphabet.size())))];
            return w;
        };
        auto hexOf = [](const QByteArray &bytes) {
            QByteArray h;
            for (char ch : bytes)
                h += QByteArray::number(uint8_t(ch), 16).rightJustified(2, '0').toUpper() + ' ';
            return h;
        };
        QByteArray text;
        std::vector<QByteArray> plants; // bytes that match some string, planted in the corpus
        for (int r = 0; r < 700; ++r) {
            text += "rule r" + QByteArray::number(r) + " { strings: ";
            const int strings = 1 + int(rng.bounded(3));
            for (int s = 0; s < strings; ++s) {
                const QByteArray a = word(5 + int(rng.bounded(8))), b = word(4 + int(rng.bounded(4)));
                text += "$s" + QByteArray::number(s) + " = ";
                switch (rng.bounded(6)) {
                case 0:
                    text += '"' + a + "\" ";
                    plants.push_back(a);
                    break;
                case 1:
                    text += '"' + a + "\" nocase ";
                    plants.push_back(a.toUpper());
                    break;
                case 2: {
                    text += '"' + a + "\" wide ascii ";
                    QByteArray wide;
                    for (char ch : a)
                        wide += QByteArray(1, ch) + QByteArray(1, '\0');
                    plants.push_back(wide);
                    break;
                }
                case 3:
                    text += "{ " + hexOf(a) + "?? [0-" + QByteArray::number(1 + rng.bounded(40)) + "] " + hexOf(b) + "} ";
                    plants.push_back(a + "x" + word(int(rng.bounded(8))) + b);
                    break;
                case 4:
                    text += "/" + a + "[0-9]{1," + QByteArray::number(2 + rng.bounded(30)) + "}" + b + "/ ";
                    plants.push_back(a + QByteArray::number(rng.bounded(100000)) + b);
                    break;
                default:
                    text += "/\\b" + a + "(" + b + "|[a-z]+!)/ ";
                    plants.push_back(" " + a + "xyz!");
                }
            }
            text += "condition: any of them }\n";
        }
        QTemporaryDir tmp;
        const QString rulesPath = tmp.filePath(QStringLiteral("many.yar"));
        QVERIFY(TestUtil::writeFile(rulesPath, text));
        const RuleSet rules = RuleLoader::loadFiles({ rulesPath });
        QVERIFY(rules.rejections.empty());
        QVERIFY(rules.patterns.size() > 1000);

        const QString dir = tmp.filePath(QStringLiteral("corpus"));
        QVERIFY(QDir().mkpath(dir));
        for (int f = 0; f < 4; ++f) {
            QByteArray data(f == 0 ? (2 << 20) + 99 : 40000 + f * 1000, '\0');
            for (char &ch : data)
                ch = rng.bounded(3) == 0 ? char(rng.bounded(256)) : alphabet[int(rng.bounded(int(alphabet.size())))];
            for (int k = 0; k < (f == 0 ? 3000 : 300); ++k) {
                const QByteArray &p = plants[rng.bounded(quint32(plants.size()))];
                data.replace(qsizetype(rng.bounded(quint32(data.size() - p.size()))), p.size(), p);
            }
            QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f%1.bin").arg(f), data));
        }

        CompileOptions tablelessOptions;
        tablelessOptions.tableless = true;
        const PatternCatalog tableless = PatternCatalog::compile(rules, tablelessOptions);
        QVERIFY(tableless.rejections.empty());
        QVERIFY2(tableless.tablelessGroups() > 5, qPrintable(QString::number(tableless.tablelessGroups())));
        QVERIFY(tableless.prefilter && tableless.prefilter->hashScreen.size() > 500);
        size_t tables = 0;
        for (const DfaGroup &g : tableless.groups)
            tables += g.tableless ? 0 : 1;
        QVERIFY2(tables <= 2, qPrintable(QString::number(tables)));

        PatternCatalog full = PatternCatalog::compile(rules);
        full.prefilter.reset();
        const Hits expected = scan(rules, full, dir);
        const Hits got = scan(rules, tableless, dir);
        std::set<int> found;
        for (const auto &hit : expected)
            found.insert(std::get<1>(hit));
        QVERIFY2(found.size() > rules.patterns.size() * 3 / 4, qPrintable(QString::number(found.size())));
        QCOMPARE(got.size(), expected.size());
        QVERIFY(got == expected);
    }
    void jumpyHexStringsInSmallFilesSharingBlocks()
    {
        // Hex strings with wide jumps get a tableless group each (their lazy states multiply in a shared one);
        // hundreds of small files share the marks' 64-byte blocks, so a block's window may belong to the end of
        // one file and the start of the next. Every match, at file starts and ends too, as full passes find.
        QByteArray text;
        const char *heads[] = { "8B", "E8", "FF 15", "4D 5A", "C3" };
        for (int r = 0; r < 40; ++r) {
            const QByteArray tail = QByteArray::number(0x10 + r, 16).toUpper();
            text += "rule j" + QByteArray::number(r) + " { strings: $h = { " + heads[r % 5] + " [1-" + QByteArray::number(4 + r % 13)
                + "] 89 ?? " + tail + " [0-6] F3 A4 } $t = \"tx" + QByteArray::number(r) + "z\" condition: $h or $t }\n";
        }
        QTemporaryDir tmp;
        const QString rulesPath = tmp.filePath(QStringLiteral("jumps.yar"));
        QVERIFY(TestUtil::writeFile(rulesPath, text));
        const RuleSet rules = RuleLoader::loadFiles({ rulesPath });
        QVERIFY(rules.rejections.empty());
        CompileOptions tablelessOptions;
        tablelessOptions.tableless = true;
        const PatternCatalog tableless = PatternCatalog::compile(rules, tablelessOptions);
        size_t alone = 0;
        for (const DfaGroup &g : tableless.groups)
            alone += g.tableless && g.lazy && g.patterns.size() == 1 ? 1 : 0;
        QVERIFY2(alone >= 40, qPrintable(QString::number(alone)));

        QRandomGenerator rng(77);
        const QString dir = tmp.filePath(QStringLiteral("corpus"));
        QVERIFY(QDir().mkpath(dir));
        const QByteArray headBytes[] = { "\x8B", "\xE8", "\xFF\x15", "MZ", "\xC3" };
        for (int f = 0; f < 300; ++f) {
            QByteArray data(10 + int(rng.bounded(150)), '\0');
            for (char &ch : data)
                ch = char(rng.bounded(256));
            const int r = int(rng.bounded(40));
            QByteArray m = headBytes[r % 5] + QByteArray(1 + int(rng.bounded(quint32(4 + r % 13))), 'j') + "\x89" + "?"
                + QByteArray(1, char(0x10 + r)) + QByteArray(int(rng.bounded(7)), 'k') + "\xF3\xA4";
            if (m.size() <= data.size()) {
                const int where = int(rng.bounded(3));
                const qsizetype at = where == 0 ? 0 : where == 1 ? data.size() - m.size()
                                                                 : qsizetype(rng.bounded(quint32(data.size() - m.size() + 1)));
                data.replace(at, m.size(), m);
            }
            if (rng.bounded(4) == 0)
                data += "tx" + QByteArray::number(r) + "z";
            QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f%1.bin").arg(f, 3, 10, QLatin1Char('0')), data));
        }
        PatternCatalog full = PatternCatalog::compile(rules);
        full.prefilter.reset();
        const Hits expected = scan(rules, full, dir);
        QVERIFY2(expected.size() > 200, qPrintable(QString::number(expected.size())));
        const Hits got = scan(rules, tableless, dir);
        QCOMPARE(got.size(), expected.size());
        QVERIFY(got == expected);
    }
};

QTEST_GUILESS_MAIN(TestAtomPrefilter)

#include "tst_atomprefilter.moc"
