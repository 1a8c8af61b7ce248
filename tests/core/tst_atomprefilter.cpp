// SPDX-License-Identifier: GPL-3.0-or-later
// Atoms and the CPU engine's prefilter: which atoms a pattern gets, which groups are covered, and that a scan
// with the prefilter reports exactly the hits of a scan with a pass per group.
#include <set>

#include <QDir>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "automata/atomextractor.h"
#include "automata/atomprefilter.h"
#include "automata/patterncatalog.h"
#include "automata/regexparser.h"
#include "cpu/cpuengine.h"
#include "rules/ruleloader.h"
#include "scan/scanner.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

Regex parse(const char *pattern, bool caseless = false)
{
    RegexFlags flags;
    flags.caseless = caseless;
    RegexParser::Result r = RegexParser::parse(pattern, flags);
    if (!r.error.isEmpty())
        qFatal("bad test pattern %s", pattern);
    return std::move(r.regex);
}

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
    for (const auto &a : AtomExtractor::extract(parse(pattern, caseless)).atoms)
        out.insert(atomText(a));
    return out;
}

using Hits = std::set<std::tuple<QByteArray, int, int64_t, int64_t>>;

Hits scan(const RuleSet &rules, const PatternCatalog &catalog, const QString &dir)
{
    CpuEngine engine;
    Scanner scanner(rules, catalog, engine);
    Hits hits;
    Scanner::Callbacks cb;
    cb.fileDone = [&](const FileResult &fr) {
        for (const Hit &h : fr.hits)
            hits.insert({ fr.path, h.pattern, h.offset, h.length });
    };
    LaunchParams params;
    params.batchBytes = 1 << 20; // several batches, files in chunks
    params.segmentBytes = 64 << 10;
    params.threads = 2;
    scanner.run({ QFile::encodeName(dir) }, WalkOptions {}, params, cb);
    return hits;
}

} // namespace

class TestAtomPrefilter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void atoms()
    {
        // The best window of a literal; case-folded letters are sets of two.
        QCOMPARE(atomTexts("xhelloy"), (std::set<QByteArray> { "xhel" }));
        QCOMPARE(atomTexts("ab", true), (std::set<QByteArray> { "[2][2]" }));
        // Alternatives each bring theirs; a required part wins over optional ones.
        QCOMPARE(atomTexts("(abcd|efgh)[0-9]+"), (std::set<QByteArray> { "abcd", "efgh" }));
        QCOMPARE(atomTexts("[a-z]*@example\\.com"), (std::set<QByteArray> { "@exa" }));
        QCOMPARE(atomTexts("(foo)?barbaz"), (std::set<QByteArray> { "barb" }));
        // Nothing every match contains: no atoms.
        QVERIFY(AtomExtractor::extract(parse("[a-z]+")).quality < 8);
        QVERIFY(atomTexts("(abc)?").empty());
        QVERIFY(AtomExtractor::extract(parse("abc|[0-9]+")).quality < 8);
        // Zero bytes are common: four of them make a weak atom.
        const auto zeros = AtomExtractor::extract(Regex::fromLiteral("\0\0\0\0\0\0", 6));
        const auto text = AtomExtractor::extract(Regex::fromLiteral("GLIBC_", 6));
        QVERIFY(zeros.quality < text.quality);
    }

    void prefilterCoversOnlyGroupsItCan()
    {
        QTemporaryDir tmp;
        const QString rulesPath = tmp.filePath(QStringLiteral("r.yar"));
        QVERIFY(TestUtil::writeFile(rulesPath, R"(
rule lits { strings: $a = "GLIBC_2.2.5" $b = "kernel32.dll" nocase wide condition: any of them }
rule hex { strings: $h = { 55 48 89 E5 [0-8] 48 83 EC ?? } condition: $h }
rule unbounded { strings: $u = /GCC: [^)]+\)/ condition: $u }
rule weak { strings: $w = /[a-z]{3}[0-9]/ condition: $w }
)"));
        const RuleSet rules = RuleLoader::loadFiles({ rulesPath });
        QVERIFY(rules.rejections.empty());
        CompileOptions small;
        small.maxStatesPerGroup = 40; // a group per pattern or so
        const PatternCatalog catalog = PatternCatalog::compile(rules, small);
        QVERIFY(catalog.groups.size() >= 3);
        QVERIFY(catalog.prefilter);
        for (size_t g = 0; g < catalog.groups.size(); ++g) {
            bool strong = true;
            for (int p : catalog.groups[g].patterns) {
                const QString &rule = rules.rules[size_t(rules.patterns[size_t(p)].ruleIndex)].name;
                strong = strong && (rule == QLatin1String("lits") || rule == QLatin1String("hex"));
            }
            QCOMPARE(catalog.prefilter->covers(int(g)), strong);
        }
    }

    void sameHitsAsFullPasses()
    {
        QTemporaryDir tmp;
        const TestUtil::GeneratedCase c = TestUtil::generateCase(tmp.filePath(QStringLiteral("corpus")), 4242, 4096);
        for (const QString &file : { c.literalsFile, c.regexesFile }) {
            const RuleSet rules = RuleLoader::loadFiles({ file });
            CompileOptions small;
            small.maxStatesPerGroup = 40; // several groups, so that the prefilter has work
            PatternCatalog catalog = PatternCatalog::compile(rules, small);
            if (file == c.literalsFile)
                QVERIFY2(catalog.prefilter, qPrintable(QStringLiteral("the literal list (%1 groups) gets no prefilter: the test tests nothing").arg(catalog.groups.size())));
            const Hits with = scan(rules, catalog, c.dir);
            catalog.prefilter.reset();
            const Hits without = scan(rules, catalog, c.dir);
            QVERIFY(!without.empty());
            QCOMPARE(with.size(), without.size());
            QVERIFY(with == without);
        }
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
        CompileOptions small;
        small.maxStatesPerGroup = 40;
        PatternCatalog catalog = PatternCatalog::compile(rules, small);
        QVERIFY(catalog.prefilter);
        QCOMPARE(catalog.prefilter->xorAtoms.size(), size_t(2));
        // Without the 255 + 17 keyed atoms the atom DFA needs few byte classes.
        QVERIFY2(catalog.prefilter->dfa.numClasses < 64, qPrintable(QString::number(catalog.prefilter->dfa.numClasses)));

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
        catalog.prefilter.reset();
        const Hits without = scan(rules, catalog, dir);
        QVERIFY(without.size() > 200);
        QCOMPARE(with.size(), without.size());
        QVERIFY(with == without);
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
};

QTEST_GUILESS_MAIN(TestAtomPrefilter)

#include "tst_atomprefilter.moc"
