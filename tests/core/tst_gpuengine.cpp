// SPDX-License-Identifier: GPL-3.0-or-later
// The GPU engine against the CPU engine on the same batches: exactly the same hits, for every offered workgroup
// size and worker-group count, with a hit ring of capacity 1, across segment and batch boundaries; on whatever
// Vulkan the machine has (lavapipe in CI, which also checks Mesa's loop limit), with the validation layer on.
// Counted patterns (Engine::setCountedPatterns): the same hits and per-file counts as the CPU engine.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include <QGuiApplication>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "automata/atomprefilter.h"
#include "automata/patterncatalog.h"
#include "cpu/cpuengine.h"
#include "gpu/gpuengine.h"
#include "gpu/headlessplatform.h"
#include "rules/ruleloader.h"
#include "scan/batcher.h"
#include "scan/filewalker.h"
#include "scan/scanner.h"
#include "session/fallbackengine.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

using HitKey = std::tuple<QByteArray, int, int64_t, int64_t>;

struct ScanOutcome
{
    std::set<HitKey> hits;
    std::vector<BatchTelemetry> batches;
    std::vector<QString> notices;
    int files = 0;
};

ScanOutcome scanWith(Engine &engine, const RuleSet &rules, const PatternCatalog &catalog, const QString &dir,
                     const LaunchParams &params)
{
    ScanOutcome out;
    Scanner scanner(rules, catalog, engine);
    Scanner::Callbacks cb;
    cb.fileDone = [&](const FileResult &fr) {
        ++out.files;
        for (const Hit &h : fr.hits)
            out.hits.insert({ fr.path, h.pattern, h.offset, h.length });
    };
    cb.batchDone = [&](const BatchTelemetry &t) { out.batches.push_back(t); };
    cb.notice = [&](const QString &n) { out.notices.push_back(n); };
    scanner.run({ QFile::encodeName(dir) }, WalkOptions {}, params, cb);
    return out;
}

using RawKey = std::tuple<QByteArray, uint32_t, int64_t>; // path, pattern, end
using CountKey = std::pair<QByteArray, uint32_t>;         // path, pattern

// What an engine itself reports, with counted patterns: ends as hits, and counts per (file, pattern).
struct RawOutcome
{
    std::vector<RawKey> hits; // sorted
    std::map<CountKey, int64_t> counts;
    int64_t countEntries = 0;
    int64_t countedEnds = 0;
    int64_t minCount = INT64_MAX; // of one count entry
    std::vector<BatchTelemetry> batches;
    struct Batch
    {
        int64_t hits, counts, hitsRerun;
    };
    std::vector<Batch> perBatch;
    std::vector<QString> notices;
    QStringList faults; // a counted pattern's end among the hits, telemetry hits that do not add up
};

// Stands between the Scanner and an engine: records each batch's raw result and hands the Scanner nothing to
// resolve. The counted set is the test's: the Scanner's own setCountedPatterns call is not passed on.
class RecordingEngine : public Engine
{
public:
    RecordingEngine(Engine &inner, const std::vector<bool> &counted, RawOutcome &out)
        : m_inner(inner)
        , m_counted(counted)
        , m_out(out)
    {
    }
    QString name() const override { return m_inner.name(); }
    int64_t maxBatchBytes() const override { return m_inner.maxBatchBytes(); }
    int64_t preferredSegmentBytes() const override { return m_inner.preferredSegmentBytes(); }
    void setCountedPatterns(const std::vector<bool> &) override { }
    // As in a real scan: the first batch finds what prepare() made (and the results must not change).
    void prepare(const PatternCatalog &catalog, const LaunchParams &params, int64_t batchBytes) override
    {
        m_inner.prepare(catalog, params, batchBytes);
    }
    void prepareBatch(FileBatch &batch, const PatternCatalog &catalog) const override
    {
        m_inner.prepareBatch(batch, catalog);
    }
    bool scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
              const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error) override
    {
        if (!m_inner.scan(batch, catalog, params, carryIn, result, error))
            return false;
        int64_t ends = int64_t(result.hits.size());
        for (const RawHit &h : result.hits) {
            if (h.pattern < m_counted.size() && m_counted[h.pattern])
                m_out.faults << QStringLiteral("batch %1: counted pattern %2 reported as a hit")
                                    .arg(batch.index)
                                    .arg(h.pattern);
            m_out.hits.emplace_back(batch.files[h.batchFile].path, h.pattern, h.end);
        }
        for (const RawCount &c : result.counts) {
            if (c.pattern >= m_counted.size() || !m_counted[c.pattern])
                m_out.faults << QStringLiteral("batch %1: count of pattern %2, not counted")
                                    .arg(batch.index)
                                    .arg(c.pattern);
            m_out.minCount = std::min(m_out.minCount, c.count);
            m_out.counts[{ batch.files[c.batchFile].path, c.pattern }] += c.count;
            ++m_out.countEntries;
            m_out.countedEnds += c.count;
            ends += c.count;
        }
        m_out.perBatch.push_back(
            { int64_t(result.hits.size()), int64_t(result.counts.size()), result.telemetry.hitsRerun });
        if (result.telemetry.hits != ends)
            m_out.faults << QStringLiteral("batch %1: telemetry says %2 hits, %3 reported")
                                .arg(batch.index)
                                .arg(result.telemetry.hits)
                                .arg(ends);
        result.hits.clear();
        result.counts.clear();
        return true;
    }

private:
    Engine &m_inner;
    const std::vector<bool> &m_counted;
    RawOutcome &m_out;
};

RawOutcome rawScanWith(Engine &engine, const std::vector<bool> &counted, const RuleSet &rules,
                       const PatternCatalog &catalog, const QString &dir, const LaunchParams &params)
{
    RawOutcome out;
    engine.setCountedPatterns(counted);
    RecordingEngine recorder(engine, counted, out);
    Scanner scanner(rules, catalog, recorder);
    Scanner::Callbacks cb;
    cb.batchDone = [&](const BatchTelemetry &t) { out.batches.push_back(t); };
    cb.notice = [&](const QString &n) { out.notices.push_back(n); };
    scanner.run({ QFile::encodeName(dir) }, WalkOptions {}, params, cb);
    engine.setCountedPatterns({});
    std::sort(out.hits.begin(), out.hits.end());
    std::erase_if(out.counts, [](const auto &c) { return c.second == 0; });
    return out;
}

// The catalog the CLI compiles for either engine by default (the GPU's key screen, the CPU's screens).
PatternCatalog compileTableless(const RuleSet &rules)
{
    CompileOptions options;
    options.tableless = true;
    return PatternCatalog::compile(rules, options);
}

// `lits` written as a literal list at `path` (one per line) and loaded.
RuleSet loadList(const QString &path, const QList<QByteArray> &lits)
{
    if (!TestUtil::writeFile(path, lits.join('\n') + '\n'))
        qFatal("cannot write %s", qPrintable(path));
    return RuleLoader::loadFiles({ path });
}

// Every end per (file, pattern), counted or not.
std::map<CountKey, int64_t> endsPerFileAndPattern(const RawOutcome &o)
{
    std::map<CountKey, int64_t> out = o.counts;
    for (const auto &[path, pattern, end] : o.hits)
        ++out[{ path, pattern }];
    return out;
}

// Zeros, a few letters and newlines, random bytes, runs of zeros up to several segments long, and lines that go
// on for several segments (the unbounded patterns' matches then span segments: fix-up passes).
QByteArray countedContent(QRandomGenerator &rng, int size)
{
    QByteArray d(size, '\0');
    for (int i = 0; i < size; ++i) {
        const int r = int(rng.bounded(100));
        d[i] = r < 30 ? '\0'
            : r < 40  ? 'a'
            : r < 45  ? 'b'
            : r < 50  ? 'x'
            : r < 55  ? 'z'
            : r < 58  ? '\n'
                      : char(rng.bounded(256));
    }
    for (int k = 0; k < size / 5000 + 1; ++k) {
        const int at = int(rng.bounded(size));
        const int len = std::min(size - at, 1 + int(rng.bounded(k == 0 ? 12000 : 1500)));
        std::fill_n(d.begin() + at, len, '\0');
    }
    for (int k = 0; size > 12000 && k < size / 40000 + 1; ++k) {
        const int at = int(rng.bounded(size - 12000));
        d[at] = 'b';
        for (int i = at + 1; i < at + 12000; ++i)
            if (d[i] == '\n')
                d[i] = 'y';
    }
    return d;
}

} // namespace

class TestGpuEngine : public QObject
{
    Q_OBJECT

public:
    static void initMain() { useHeadlessPlatformIfNeeded(); }

private:
    QTemporaryDir m_tmp;
    TestUtil::GeneratedCase m_case;
    RuleSet m_rules;
    PatternCatalog m_catalog;
    std::unique_ptr<FallbackEngine> m_engine; // the GPU engine as the CLI and the GUI run it
    GpuEngine *m_gpu = nullptr;               // its GPU part
    ScanOutcome m_cpu;
    LaunchParams m_base;
    // Counted patterns: a corpus of zero runs, its rules, the counted set, and the CPU engine's results.
    QString m_countDir;
    RuleSet m_countRules;
    PatternCatalog m_countCatalog;
    std::vector<bool> m_counted;
    RawOutcome m_cpuCounted;
    RawOutcome m_cpuUncounted;

private Q_SLOTS:
    void initTestCase()
    {
        RhiDeviceOptions options;
        options.backend = GpuBackend::Vulkan;
        options.validation = true;
        QString error;
        std::unique_ptr<GpuEngine> gpu = GpuEngine::create(options, &error);
        if (!gpu)
            HITSCOPE_SKIP_WITHOUT_GPU(qPrintable(QStringLiteral("no Vulkan compute device: ") + error));
        m_engine = std::make_unique<FallbackEngine>(std::move(gpu));
        m_gpu = &m_engine->gpu();
        RhiDevice::clearValidationMessages();

        m_case = TestUtil::generateCase(m_tmp.path(), 4242, 3000);
        // Thousands of literals on top of the generated lists: random words, many of them present.
        QRandomGenerator rng(99);
        QByteArray lits;
        for (int i = 0; i < 3000; ++i) {
            QByteArray w;
            const int len = 3 + rng.bounded(12);
            for (int k = 0; k < len; ++k)
                w += "abcdefghijklmnopqrstuvwxyz0123456789 -:/"[rng.bounded(40)];
            lits += w + '\n';
        }
        const QString many = m_tmp.path() + QLatin1String("/many.txt");
        QVERIFY(TestUtil::writeFile(many, lits));
        m_rules = RuleLoader::loadFiles({ m_case.literalsFile, m_case.regexesFile, many });
        m_catalog = PatternCatalog::compile(m_rules);
        QVERIFY(m_catalog.rejections.empty());
        QVERIFY2(m_catalog.groups.size() >= 2, "bounded and unbounded groups both");

        m_base.segmentBytes = 3000;
        m_base.batchBytes = 256 << 10; // large files are split across batches: unbounded state is carried
        m_base.threads = 2;
        CpuEngine cpu;
        m_cpu = scanWith(cpu, m_rules, m_catalog, m_case.dir, m_base);
        QVERIFY(m_cpu.hits.size() > 1000);

        // Files smaller and larger than a segment (3000 bytes) and than a batch (256 KiB: carried states).
        m_countDir = m_tmp.path() + QLatin1String("/counted");
        QRandomGenerator crng(7331);
        int n = 0;
        for (int size : { 0, 1, 2, 15, 700, 2999, 3000, 3001, 9000, 40000, 300000 })
            QVERIFY(TestUtil::writeFile(m_countDir + QStringLiteral("/f%1.bin").arg(n++), countedContent(crng, size)));
        // Five counted patterns that all end at every byte of a long run of zeros (more than the kernel's pending
        // slots), counted unbounded ones (fix-up passes), counted ends decided a byte late or at the end of the
        // file, and patterns that are not counted beside them, some ending where counted ones do.
        const QByteArray countedSources[] = { "\\x00\\x00", "\\x00{3}", "\\x00{4}", "\\x00{8}", "\\x00{16}",
                                              "x[a-z]{0,3}\\x00", "b[^\\n]*\\x00\\x00\\x00", "z\\x00{5,}",
                                              "[a-z]x\\b", "\\x00\\x00$" };
        const QByteArray plainSources[] = { "ab", "a[^z\\n]*z", "\\x00\\x00a", "zz", "a\\x00\\x00", "zb\\b" };
        QByteArray tsv;
        int k = 0;
        for (const QByteArray &r : countedSources)
            tsv += "-\tcounted" + QByteArray::number(k++) + '\t' + r + '\n';
        for (const QByteArray &r : plainSources)
            tsv += "-\tplain" + QByteArray::number(k++) + '\t' + r + '\n';
        const QString tsvPath = m_tmp.path() + QLatin1String("/counted.tsv");
        QVERIFY(TestUtil::writeFile(tsvPath, tsv));
        m_countRules = RuleLoader::loadFiles({ tsvPath });
        QVERIFY(m_countRules.rejections.empty());
        m_countCatalog = PatternCatalog::compile(m_countRules);
        QVERIFY(m_countCatalog.rejections.empty());
        QCOMPARE(m_countRules.patterns.size(), std::size(countedSources) + std::size(plainSources));
        m_counted.assign(m_countRules.patterns.size(), false);
        for (size_t p = 0; p < m_countRules.patterns.size(); ++p)
            m_counted[p] = m_countRules.rules[size_t(m_countRules.patterns[p].ruleIndex)].name.startsWith(
                QLatin1String("counted"));
        QCOMPARE(std::count(m_counted.begin(), m_counted.end(), true), qsizetype(std::size(countedSources)));
        QVERIFY(std::any_of(m_countCatalog.groups.begin(), m_countCatalog.groups.end(),
                            [](const DfaGroup &g) { return g.unbounded(); }));
        m_cpuCounted = rawScanWith(cpu, m_counted, m_countRules, m_countCatalog, m_countDir, m_base);
        m_cpuUncounted = rawScanWith(cpu, {}, m_countRules, m_countCatalog, m_countDir, m_base);
        QVERIFY2(m_cpuCounted.faults.isEmpty(), qPrintable(m_cpuCounted.faults.join(QLatin1Char('\n'))));
        QVERIFY(m_cpuCounted.countedEnds > 10000);
        QVERIFY(m_cpuCounted.hits.size() > 1000);
        QVERIFY(m_cpuUncounted.counts.empty());
        QVERIFY(endsPerFileAndPattern(m_cpuCounted) == endsPerFileAndPattern(m_cpuUncounted));
    }

    // QRhi resources go while the application and its Vulkan instance still exist.
    void cleanupTestCase() { m_engine.reset(); }

    void init() { RhiDevice::clearValidationMessages(); }
    void cleanup()
    {
        QVERIFY2(RhiDevice::validationMessageCount() == 0,
                 qPrintable(RhiDevice::validationMessages().join(QLatin1Char('\n'))));
    }

    /// Rows of launch parameters: every workgroup size, fixed worker-group counts (`workerGroupRows`), and a
    /// hit ring of capacity 1.
    static void launchRows(bool workerGroupRows)
    {
        QTest::addColumn<int>("workgroupSize");
        QTest::addColumn<int>("workerGroups");
        QTest::addColumn<qint64>("hitCapacity");
        for (int wg : { 32, 64, 128, 256, 512 })
            QTest::addRow("workgroup %d, automatic groups", wg) << wg << 0 << qint64(0);
        if (workerGroupRows) {
            QTest::addRow("one worker group") << 64 << 1 << qint64(0);
            QTest::addRow("seven worker groups of 32") << 32 << 7 << qint64(0);
        }
        QTest::addRow("hit ring of capacity 1") << 64 << 0 << qint64(1);
        QTest::addRow("hit ring of capacity 1, one group of 512") << 512 << 1 << qint64(1);
    }

    /// The current row's launch parameters (see launchRows), with no timeout.
    LaunchParams rowParams() const
    {
        QFETCH(int, workgroupSize);
        QFETCH(int, workerGroups);
        QFETCH(qint64, hitCapacity);
        LaunchParams p = m_base;
        p.workgroupSize = workgroupSize;
        p.workerGroups = workerGroups;
        p.hitCapacity = hitCapacity;
        p.timeoutMs = 0;
        return p;
    }

    void sameHitsAsCpu_data() { launchRows(true); }

    void sameHitsAsCpu()
    {
        const LaunchParams p = rowParams();
        const int workgroupSize = p.workgroupSize;
        const int workerGroups = p.workerGroups;
        const qint64 hitCapacity = p.hitCapacity;
        const ScanOutcome gpu = scanWith(*m_engine, m_rules, m_catalog, m_case.dir, p);
        QVERIFY2(gpu.notices.empty(), gpu.notices.empty() ? "" : qPrintable(gpu.notices.front()));
        QCOMPARE(gpu.files, m_cpu.files);
        QCOMPARE(gpu.hits.size(), m_cpu.hits.size());
        QVERIFY(gpu.hits == m_cpu.hits);
        for (const BatchTelemetry &t : gpu.batches) {
            QCOMPARE(t.engine, QStringLiteral("gpu"));
            QCOMPARE(t.workgroupSize, workgroupSize);
            if (workerGroups > 0)
                QCOMPARE(t.workerGroups, workerGroups);
            if (hitCapacity == 1 && t.hits > 1)
                QVERIFY2(t.hitsRerun >= t.hits, "a full ring must be re-run, never truncated");
        }
    }

    /// The catalog the CLI compiles for either engine (CompileOptions::tableless): the GPU marks where the
    /// prefilter's keys occur, walks the groups with tables, and the host screens the marked blocks. The same
    /// hits as the CPU engine on that catalog and as the GPU on every DFA, for every launch row.
    void tablelessCatalogSameHitsAsCpu_data() { launchRows(true); }

    void tablelessCatalogSameHitsAsCpu()
    {
        const PatternCatalog tableless = compileTableless(m_rules);
        QVERIFY(tableless.rejections.empty());
        QVERIFY(tableless.tablelessGroups() > 0);
        QVERIFY(tableless.prefilter && !tableless.prefilter->keyFilter.empty());
        const KeyFilter &keys = tableless.prefilter->keyFilter;
        size_t longKeys = 0;
        for (int length = 4; length <= KeyFilter::kMaxKeyLength; ++length)
            longKeys += keys.keysOfLength(length);
        QVERIFY2(longKeys > 1000, qPrintable(QString::number(longKeys)));
        QVERIFY(keys.keysOfLength(3) + keys.keysOfLength(2) + keys.keysOfLength(1) > 0);
        const LaunchParams p = rowParams();
        const ScanOutcome gpu = scanWith(*m_engine, m_rules, tableless, m_case.dir, p);
        QVERIFY2(gpu.notices.empty(), gpu.notices.empty() ? "" : qPrintable(gpu.notices.front()));
        QCOMPARE(gpu.files, m_cpu.files);
        QCOMPARE(gpu.hits.size(), m_cpu.hits.size());
        QVERIFY(gpu.hits == m_cpu.hits);
        int64_t marked = 0, bytes = 0;
        for (const BatchTelemetry &t : gpu.batches) {
            QCOMPARE(t.engine, QStringLiteral("gpu"));
            marked += t.keyBlocks;
            bytes += t.haystackBytes;
        }
        // Keys occur in part of the corpus only, and somewhere.
        QVERIFY2(marked > 0 && marked < bytes / 64, qPrintable(QStringLiteral("%1 of %2").arg(marked).arg(bytes / 64)));
    }

    /// Counted patterns and unbounded groups with tables beside the tableless ones: their states are carried
    /// from batch to batch in the catalog's numbering of unbounded groups, not the device's.
    void tablelessCatalogCountedSameAsCpu()
    {
        const PatternCatalog tableless = compileTableless(m_countRules);
        QVERIFY(tableless.rejections.empty());
        QVERIFY(tableless.tablelessGroups() > 0);
        size_t unboundedWithTables = 0;
        for (size_t g = 0; g < tableless.groups.size(); ++g)
            unboundedWithTables += !tableless.groups[g].tableless && tableless.groups[g].unbounded()
                    && !tableless.prefilter->covers(int(g))
                ? 1
                : 0;
        QVERIFY(unboundedWithTables > 0);
        LaunchParams p = m_base;
        p.timeoutMs = 0;
        p.batchBytes = 64 << 10; // the largest file in five chunks
        p.rampBatches = false;
        CpuEngine cpu;
        const RawOutcome expected = rawScanWith(cpu, m_counted, m_countRules, tableless, m_countDir, p);
        const RawOutcome got = rawScanWith(*m_engine, m_counted, m_countRules, tableless, m_countDir, p);
        QVERIFY2(got.faults.isEmpty(), qPrintable(got.faults.join(QLatin1Char('\n'))));
        QVERIFY2(got.notices.empty(), got.notices.empty() ? "" : qPrintable(got.notices.front()));
        QVERIFY(got.batches.size() > 2);
        QVERIFY(endsPerFileAndPattern(got) == endsPerFileAndPattern(expected));
        QVERIFY(endsPerFileAndPattern(got) == endsPerFileAndPattern(m_cpuUncounted));
    }

    /// The kernel marks exactly the blocks that KeyFilter::keyAt allows ends in, as it does: per 16 bytes, every
    /// block from the first end to the last that a key starting there allows. One file in one batch, so that the
    /// haystack is the file; its size leaves a last block of 20 bytes, which holds a key.
    void keyKernelMarksTheBlocksTheHostFilterFinds()
    {
        QRandomGenerator rng(4711);
        QByteArray text;
        QList<QByteArray> words;
        for (int i = 0; i < 400; ++i) {
            QByteArray w;
            const int len = 1 + int(rng.bounded(14)); // keys of one to eight bytes
            for (int k = 0; k < len; ++k)
                w += char('a' + rng.bounded(26));
            words << w;
            text += "-\tw" + QByteArray::number(i) + '\t' + w + '\n';
        }
        QTemporaryDir tmp;
        const QString tsv = tmp.filePath(QStringLiteral("words.tsv"));
        QVERIFY(TestUtil::writeFile(tsv, text));
        const RuleSet rules = RuleLoader::loadFiles({ tsv });
        QVERIFY(rules.rejections.empty());
        const PatternCatalog catalog = compileTableless(rules);
        QVERIFY(catalog.prefilter);
        const KeyFilter &keys = catalog.prefilter->keyFilter;
        for (int length : { 1, 2, 3, 4, 6, 8 })
            QVERIFY2(keys.keysOfLength(length) > 0, qPrintable(QString::number(length)));
        // Mostly bytes no key starts with, words planted here and there, one at the very end.
        QByteArray data(2048 * 97 + 20, '\0');
        for (char &c : data)
            c = char(0x80 + rng.bounded(0x80));
        for (int k = 0; k < 300; ++k) {
            const QByteArray &w = words[int(rng.bounded(quint32(words.size())))];
            data.replace(qsizetype(rng.bounded(quint32(data.size() - w.size()))), w.size(), w);
        }
        data.replace(data.size() - 3, 3, "kqz");
        data.replace(data.size() - words[0].size(), words[0].size(), words[0]);
        const QString dir = tmp.filePath(QStringLiteral("one"));
        QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f.bin"), data));
        std::vector<uint32_t> marked(size_t((data.size() + 63) / 64), 0);
        const auto *bytes = reinterpret_cast<const uint8_t *>(data.constData());
        uint32_t allClasses = 0;
        for (qsizetype c = 0; c * 16 < data.size(); ++c) {
            int64_t first = INT64_MAX, last = -1;
            uint32_t classes = 0;
            for (qsizetype p = c * 16; p < std::min(data.size(), c * 16 + 16); ++p) {
                int lo = 0, hi = 0;
                uint32_t cls = 0;
                if (keys.keyAt(bytes + p, data.size() - p, &lo, &hi, &cls)) {
                    first = std::min<int64_t>(first, p + lo);
                    last = std::max<int64_t>(last, std::min<int64_t>(p + hi, data.size() - 1));
                    classes |= cls;
                }
            }
            for (int64_t b = first / 64; last >= 0 && b <= last / 64; ++b)
                marked[size_t(b)] |= classes;
            allClasses |= classes;
        }
        const int64_t expected = std::count_if(marked.begin(), marked.end(), [](uint32_t m) { return m != 0; });
        QVERIFY(marked.back() != 0);
        QCOMPARE(allClasses, 1u); // words of 14 letters at most: the first class
        QVERIFY2(expected > 100 && expected < int64_t(marked.size()) / 2, qPrintable(QString::number(expected)));
        LaunchParams p = m_base;
        p.batchBytes = 1 << 20;
        p.timeoutMs = 0;
        const ScanOutcome gpu = scanWith(*m_engine, rules, catalog, dir, p);
        QCOMPARE(gpu.batches.size(), size_t(1));
        QCOMPARE(gpu.batches.front().keyBlocks, expected);
        CpuEngine cpu;
        const ScanOutcome host = scanWith(cpu, rules, catalog, dir, p);
        QVERIFY(host.hits.size() > 300);
        QCOMPARE(gpu.hits.size(), host.hits.size());
        QVERIFY(gpu.hits == host.hits);
    }

    /// Literals of every length class (up to 900 bytes): the host's screens look back as far as the longest
    /// sequence that may end in a marked block, across segment and batch edges.
    void longSequencesOnTheKeyScreen()
    {
        QRandomGenerator rng(2024);
        QList<QByteArray> lits;
        for (int len : { 5, 20, 31, 40, 100, 127, 200, 400, 600, 900 }) {
            for (int k = 0; k < 3; ++k) {
                QByteArray w;
                for (int i = 0; i < len; ++i)
                    w += char('a' + rng.bounded(26));
                lits << w;
            }
        }
        QTemporaryDir tmp;
        const RuleSet rules = loadList(tmp.filePath(QStringLiteral("long.txt")), lits);
        QVERIFY(rules.rejections.empty());
        const PatternCatalog catalog = compileTableless(rules);
        QVERIFY(catalog.prefilter && catalog.tablelessGroups() > 0);
        QCOMPARE(catalog.prefilter->keyFilter.longest(), 900);
        const QString dir = tmp.filePath(QStringLiteral("files"));
        for (int f = 0; f < 6; ++f) {
            QByteArray data(f == 0 ? 300000 : 5000 + 7000 * f, '\0');
            for (char &c : data)
                c = char(rng.bounded(256));
            for (int k = 0; k < (f == 0 ? 60 : 8); ++k) {
                const QByteArray &w = lits[int(rng.bounded(quint32(lits.size())))];
                data.replace(qsizetype(rng.bounded(quint32(data.size() - w.size()))), w.size(), w);
            }
            data.replace(data.size() - lits.back().size(), lits.back().size(), lits.back());
            QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f%1.bin").arg(f), data));
        }
        LaunchParams p = m_base;
        p.batchBytes = 64 << 10;
        p.segmentBytes = 3000;
        p.timeoutMs = 0;
        CpuEngine cpu;
        const ScanOutcome host = scanWith(cpu, rules, catalog, dir, p);
        const ScanOutcome gpu = scanWith(*m_engine, rules, catalog, dir, p);
        QVERIFY(host.hits.size() >= 90);
        QVERIFY2(gpu.notices.empty(), gpu.notices.empty() ? "" : qPrintable(gpu.notices.front()));
        QCOMPARE(gpu.hits.size(), host.hits.size());
        QVERIFY(gpu.hits == host.hits);
    }

    /// A thousand keys of five to eight bytes with the same first four bytes share one home slot: every occurrence of those
    /// four bytes probes them all. Dense occurrences must neither lose a match nor run past Mesa's loop limit
    /// unnoticed (the kernel proves each loop ended, and the host sizes the work per invocation by the longest
    /// probe).
    void keysSharingTheirFirstFourBytes()
    {
        QRandomGenerator rng(31337);
        QList<QByteArray> lits;
        for (int i = 0; i < 1000; ++i) {
            QByteArray w = "Qz9#";
            for (int k = 0; k < 4 + int(rng.bounded(6)); ++k)
                w += char('a' + rng.bounded(26));
            lits << w;
        }
        QTemporaryDir tmp;
        const RuleSet rules = loadList(tmp.filePath(QStringLiteral("shared.txt")), lits);
        QVERIFY(rules.rejections.empty());
        const PatternCatalog catalog = compileTableless(rules);
        QVERIFY(catalog.prefilter);
        QVERIFY2(catalog.prefilter->keyFilter.longestProbe() > 900,
                 qPrintable(QString::number(catalog.prefilter->keyFilter.longestProbe())));
        const QString dir = tmp.filePath(QStringLiteral("files"));
        for (int f = 0; f < 3; ++f) {
            QByteArray data;
            while (data.size() < 200000)
                data += rng.bounded(3) == 0 ? lits[int(rng.bounded(quint32(lits.size())))] : QByteArray("Qz9#Qz9#");
            QVERIFY(TestUtil::writeFile(dir + QStringLiteral("/f%1.bin").arg(f), data));
        }
        LaunchParams p = m_base;
        p.batchBytes = 1 << 20;
        p.timeoutMs = 0;
        CpuEngine cpu;
        const ScanOutcome host = scanWith(cpu, rules, catalog, dir, p);
        const ScanOutcome gpu = scanWith(*m_engine, rules, catalog, dir, p);
        QVERIFY(host.hits.size() > 10000);
        QVERIFY2(gpu.notices.empty(), gpu.notices.empty() ? "" : qPrintable(gpu.notices.front()));
        QCOMPARE(gpu.hits.size(), host.hits.size());
        QVERIFY(gpu.hits == host.hits);
    }

    void countedSameAsCpu_data() { launchRows(false); }

    void countedSameAsCpu()
    {
        const LaunchParams p = rowParams();
        const int workgroupSize = p.workgroupSize;
        const qint64 hitCapacity = p.hitCapacity;
        const RawOutcome gpu = rawScanWith(*m_engine, m_counted, m_countRules, m_countCatalog, m_countDir, p);
        QVERIFY2(gpu.notices.empty(), gpu.notices.empty() ? "" : qPrintable(gpu.notices.front()));
        QVERIFY2(gpu.faults.isEmpty(), qPrintable(gpu.faults.join(QLatin1Char('\n'))));
        QCOMPARE(gpu.hits.size(), m_cpuCounted.hits.size());
        QVERIFY(gpu.hits == m_cpuCounted.hits);
        QCOMPARE(gpu.countedEnds, m_cpuCounted.countedEnds);
        QVERIFY(gpu.counts == m_cpuCounted.counts);
        QVERIFY(gpu.minCount > 0);
        QVERIFY2(gpu.countEntries < gpu.countedEnds / 2, "runs of ends are counted in the kernel");
        int64_t rescanned = 0;
        for (const BatchTelemetry &t : gpu.batches) {
            QCOMPARE(t.engine, QStringLiteral("gpu"));
            QCOMPARE(t.workgroupSize, workgroupSize);
            QCOMPARE(t.bytesMoved(), t.bytesUploadedData + t.bytesUploadedTables + t.bytesReadBack);
            rescanned += t.rescannedSegments;
        }
        QVERIFY2(rescanned > 0, "unbounded segments must have been scanned again");
        // Hits are ring entries; a ring entry may count for several patterns (one state's).
        for (const RawOutcome::Batch &b : gpu.perBatch)
            if (hitCapacity == 1 && b.hits + b.counts > 1)
                QVERIFY2(b.hitsRerun >= std::max<int64_t>(2, b.hits), "a full ring must be re-run, never truncated");
    }

    void countedAcrossPieces_data()
    {
        QTest::addColumn<qint64>("hitCapacity");
        QTest::addRow("automatic hit ring") << qint64(0);
        QTest::addRow("hit ring of capacity 1") << qint64(1);
    }

    void countedAcrossPieces()
    {
        // Segments longer than a piece where loops are limited (Mesa: 16 KiB): what is pending when a piece ends
        // is written too. Mostly zeros, so that the accept loops stay within Mesa's limit.
        QFETCH(qint64, hitCapacity);
        QTemporaryDir tmp;
        QRandomGenerator rng(4711);
        for (int size : { 50000, 150000 }) {
            QByteArray data(size, '\0');
            for (int at = int(rng.bounded(700)); at + 40 < size; at += 200 + int(rng.bounded(1500)))
                for (int i = 0; i < 40; ++i)
                    data[at + i] = "abxz\n\0y"[rng.bounded(7)];
            QVERIFY(TestUtil::writeFile(tmp.path() + QStringLiteral("/f%1.bin").arg(size), data));
        }
        LaunchParams p = m_base;
        p.segmentBytes = 40000;
        p.hitCapacity = hitCapacity;
        p.timeoutMs = 0;
        CpuEngine cpu;
        const RawOutcome want = rawScanWith(cpu, m_counted, m_countRules, m_countCatalog, tmp.path(), p);
        const RawOutcome got = rawScanWith(*m_engine, m_counted, m_countRules, m_countCatalog, tmp.path(), p);
        QVERIFY2(got.notices.empty(), got.notices.empty() ? "" : qPrintable(got.notices.front()));
        QVERIFY2(got.faults.isEmpty(), qPrintable(got.faults.join(QLatin1Char('\n'))));
        QVERIFY(want.countedEnds > 100000);
        QVERIFY(got.hits == want.hits);
        QVERIFY(got.counts == want.counts);
    }

    void countedPlusHitsAreTheUncountedHits()
    {
        LaunchParams p = m_base;
        p.timeoutMs = 0;
        const RawOutcome uncounted = rawScanWith(*m_engine, {}, m_countRules, m_countCatalog, m_countDir, p);
        QVERIFY2(uncounted.notices.empty(), uncounted.notices.empty() ? "" : qPrintable(uncounted.notices.front()));
        QVERIFY(uncounted.counts.empty());
        QVERIFY(uncounted.hits == m_cpuUncounted.hits);
        const RawOutcome counted = rawScanWith(*m_engine, m_counted, m_countRules, m_countCatalog, m_countDir, p);
        QVERIFY(!counted.counts.empty());
        QVERIFY(endsPerFileAndPattern(counted) == endsPerFileAndPattern(uncounted));
        // The hits of patterns not counted are the same either way.
        std::vector<RawKey> plain;
        std::copy_if(uncounted.hits.begin(), uncounted.hits.end(), std::back_inserter(plain),
                     [&](const RawKey &k) { return !m_counted[std::get<1>(k)]; });
        QVERIFY(plain == counted.hits);
    }

    void countedOnTheCpuFallback()
    {
        // A batch re-run on the CPU engine counts the same patterns.
        LaunchParams p = m_base;
        p.timeoutMs = 1;
        const RawOutcome got = rawScanWith(*m_engine, m_counted, m_countRules, m_countCatalog, m_countDir, p);
        QVERIFY(!got.notices.empty());
        QVERIFY2(got.faults.isEmpty(), qPrintable(got.faults.join(QLatin1Char('\n'))));
        for (const BatchTelemetry &t : got.batches)
            QCOMPARE(t.engine, QStringLiteral("cpu (GPU fallback)"));
        QVERIFY(got.hits == m_cpuCounted.hits);
        QVERIFY(got.counts == m_cpuCounted.counts);
    }

    void countedSetIsPartOfTheTableCache()
    {
        // The counted set lives in the uploaded accept entries: the same set uploads no tables again, another does.
        LaunchParams p = m_base;
        p.timeoutMs = 0;
        auto tableUploads = [](const RawOutcome &o) {
            std::vector<bool> uploads;
            for (const BatchTelemetry &t : o.batches)
                uploads.push_back(t.bytesUploadedTables > 0);
            return uploads;
        };
        const RawOutcome first = rawScanWith(*m_engine, m_counted, m_countRules, m_countCatalog, m_countDir, p);
        QVERIFY(first.batches.size() >= 2);
        for (size_t i = 1; i < first.batches.size(); ++i)
            QCOMPARE(first.batches[i].bytesUploadedTables, int64_t(0));
        const RawOutcome again = rawScanWith(*m_engine, m_counted, m_countRules, m_countCatalog, m_countDir, p);
        QVERIFY(tableUploads(again) == std::vector<bool>(again.batches.size(), false));
        QVERIFY(again.counts == m_cpuCounted.counts);
        std::vector<bool> fewer = m_counted;
        fewer[0] = false;
        const RawOutcome other = rawScanWith(*m_engine, fewer, m_countRules, m_countCatalog, m_countDir, p);
        QVERIFY(other.batches.front().bytesUploadedTables > 0);
        QVERIFY(endsPerFileAndPattern(other) == endsPerFileAndPattern(m_cpuUncounted));
        QVERIFY(std::none_of(other.counts.begin(), other.counts.end(),
                             [](const auto &c) { return c.first.second == 0; }));
        // Counted patterns of another catalog (another number of patterns) are not counted.
        const RawOutcome wrongSize = rawScanWith(*m_engine, std::vector<bool>(m_counted.size() + 1, true), m_countRules,
                                                 m_countCatalog, m_countDir, p);
        QVERIFY(wrongSize.counts.empty());
        QVERIFY(wrongSize.hits == m_cpuUncounted.hits);
    }

    void unboundedMatchesSpanningManySegments()
    {
        // Matches far longer than the warm-up before each segment: the speculative segments disagree with the
        // true states, run again from them, and the result is still exactly the CPU's.
        QTemporaryDir tmp;
        QByteArray data(1000, 'x');
        data += ' ';
        for (int i = 0; i < 30000; ++i)
            data += "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(i * 7) % 64];
        data += "== ab";
        data += QByteArray(9000, 'c');
        data += "f tail";
        QVERIFY(TestUtil::writeFile(tmp.path() + QLatin1String("/files/long.txt"), data));
        const QString tsv = tmp.path() + QLatin1String("/r.tsv");
        QVERIFY(TestUtil::writeFile(tsv, "-\tb64\t[A-Za-z0-9+/]{40,}={0,2}\n-\tabcf\tab(c|de)*f\n-\tword\t\\bc+f\\b\n"));
        const RuleSet rules = RuleLoader::loadFiles({ tsv });
        const PatternCatalog catalog = PatternCatalog::compile(rules);
        QVERIFY(catalog.rejections.empty());
        LaunchParams p = m_base;
        p.timeoutMs = 0;
        CpuEngine cpu;
        const ScanOutcome want = scanWith(cpu, rules, catalog, tmp.path() + QLatin1String("/files"), p);
        const ScanOutcome got = scanWith(*m_engine, rules, catalog, tmp.path() + QLatin1String("/files"), p);
        QVERIFY(want.hits.size() > 30000);
        QCOMPARE(got.hits.size(), want.hits.size());
        QVERIFY(got.hits == want.hits);
        int64_t rerun = 0;
        for (const BatchTelemetry &t : got.batches)
            rerun += t.hitsRerun;
        QVERIFY2(rerun > 0, "segments whose speculative start disagreed must have run again");
    }

    void parameterChangeAppliesFromTheNextBatch()
    {
        LaunchParams p = m_base;
        p.timeoutMs = 0;
        p.workgroupSize = 64;
        Scanner scanner(m_rules, m_catalog, *m_engine);
        std::vector<BatchTelemetry> batches;
        std::set<HitKey> hits;
        Scanner::Callbacks cb;
        cb.fileDone = [&](const FileResult &fr) {
            for (const Hit &h : fr.hits)
                hits.insert({ fr.path, h.pattern, h.offset, h.length });
        };
        cb.batchDone = [&](const BatchTelemetry &t) {
            batches.push_back(t);
            if (batches.size() == 1) {
                LaunchParams changed = p;
                changed.workgroupSize = 256;
                changed.workerGroups = 3;
                scanner.setParams(changed);
            }
        };
        scanner.run({ QFile::encodeName(m_case.dir) }, WalkOptions {}, p, cb);
        QVERIFY(batches.size() >= 4);
        QCOMPARE(batches[0].workgroupSize, 64);
        QVERIFY(!batches[0].paramsChanged);
        // Batch 0 is resolved while batch 1 may already run on the engine: the change applies from the next batch
        // launched, batch 1 or 2 (it may already have been packed, but it is launched with the new parameters),
        // and stays.
        size_t from = 1;
        if (batches[1].workgroupSize == 64) {
            QVERIFY(!batches[1].paramsChanged);
            from = 2;
        }
        for (size_t i = from; i < batches.size(); ++i) {
            QCOMPARE(batches[i].workgroupSize, 256);
            QCOMPARE(batches[i].workerGroups, 3);
            QCOMPARE(batches[i].paramsChanged, i == from);
        }
        QVERIFY(hits == m_cpu.hits);
    }

    void slowBatchesRunAgainOnTheCpu()
    {
        // A timeout no batch can meet: every batch is reported and re-run on the CPU engine; nothing is lost.
        LaunchParams p = m_base;
        p.timeoutMs = 1;
        const ScanOutcome got = scanWith(*m_engine, m_rules, m_catalog, m_case.dir, p);
        QVERIFY(!got.notices.empty());
        QVERIFY2(got.notices.front().contains(QLatin1String("re-run on the CPU engine")), qPrintable(got.notices.front()));
        QCOMPARE(got.hits.size(), m_cpu.hits.size());
        QVERIFY(got.hits == m_cpu.hits);
        for (const BatchTelemetry &t : got.batches)
            QCOMPARE(t.engine, QStringLiteral("cpu (GPU fallback)"));
    }

    void telemetryInvariants()
    {
        LaunchParams p = m_base;
        p.timeoutMs = 0;
        // Other rules first: then the first batch of this scan must upload its tables, later batches not.
        // (One device per process: Qt 6.4 crashes when two Vulkan QRhis are destroyed in some orders.)
        const QString other = m_tmp.path() + QLatin1String("/other.txt");
        QVERIFY(TestUtil::writeFile(other, "just one literal\n"));
        const RuleSet otherRules = RuleLoader::loadFiles({ other });
        const PatternCatalog otherCatalog = PatternCatalog::compile(otherRules);
        QVERIFY(otherCatalog.fingerprint() != m_catalog.fingerprint());
        const ScanOutcome first = scanWith(*m_engine, otherRules, otherCatalog, m_case.dir, p);
        QVERIFY(first.batches.front().bytesUploadedTables > 0);
        const ScanOutcome out = scanWith(*m_engine, m_rules, m_catalog, m_case.dir, p);
        QVERIFY(out.batches.size() >= 3);
        QVERIFY(out.batches[0].bytesUploadedTables > 0);
        for (size_t i = 0; i < out.batches.size(); ++i) {
            const BatchTelemetry &t = out.batches[i];
            if (i > 0)
                QCOMPARE(t.bytesUploadedTables, int64_t(0));
            QCOMPARE(t.bytesMoved(), t.bytesUploadedData + t.bytesUploadedTables + t.bytesReadBack);
            QVERIFY(t.bytesUploadedData >= t.haystackBytes);
            QVERIFY(t.workItems >= t.segments);
            QVERIFY(t.occupancy > 0 && t.occupancy <= 1);
            QVERIFY(t.gpuMs > 0);
            QCOMPARE(t.backend, QStringLiteral("Vulkan"));
            QVERIFY(!t.device.isEmpty());
            if (i > 0)
                QVERIFY(t.pipelineCacheHits > 0);
        }
    }

    void batchesGoToTheGpuFromWhereTheyWereRead()
    {
        // Where the device imports host memory (Mesa's lavapipe does, as the NVIDIA driver), the scanner's
        // batches come from the engine and go to the GPU with no copy on the host; batches in memory of anyone
        // else's are staged. Both give the CPU engine's hits.
        const bool imports = m_gpu->device().hasHostMemoryImport();
        if (m_gpu->device().deviceName().contains(QLatin1String("llvmpipe"))
            && !qEnvironmentVariableIsSet("HITSCOPE_GPU_NO_HOST_IMPORT"))
            QVERIFY2(imports, "lavapipe offers VK_EXT_external_memory_host");
        LaunchParams p = m_base;
        p.rampBatches = true;
        const ScanOutcome out = scanWith(*m_engine, m_rules, m_catalog, m_case.dir, p);
        QVERIFY(out.hits == m_cpu.hits);
        QVERIFY(out.batches.size() > 3);
        int64_t staged = 0;
        for (const BatchTelemetry &t : out.batches)
            staged += t.bytesStaged;
        if (imports)
            QCOMPARE(staged, int64_t(0));
        else
            QVERIFY(staged > 0);
        // The scan's buffers wait, imported, for the next scan: a buffer of their size is not imported again,
        // one of another size is (and the waiting ones are let go).
        const int64_t made = m_gpu->hostImportsMade();
        {
            const Haystack same = m_gpu->newHaystack(p.batchBytes);
        }
        QCOMPARE(m_gpu->hostImportsMade(), made);
        {
            const Haystack other = m_gpu->newHaystack(p.batchBytes * 9);
        }
        QCOMPARE(m_gpu->hostImportsMade(), made + (imports ? 1 : 0));

        // A batch in plain memory, read by a batcher of its own.
        std::vector<std::unique_ptr<FileBatch>> batches;
        Batcher batcher(
            std::max(0, m_catalog.maxBoundedMatchLength() - 1), [] { return std::make_unique<FileBatch>(); },
            [&](std::unique_ptr<FileBatch> b) { batches.push_back(std::move(b)); });
        batcher.setSizes(m_base.batchBytes, m_base.segmentBytes);
        FileWalker().walk({ QFile::encodeName(m_case.dir) }, [&](const FileEntry &e) { batcher.addFile(e); },
                          [](const FileProblem &) {});
        batcher.finish();
        QVERIFY(!batches.empty());
        const FileBatch &b = *batches.front();
        std::vector<uint32_t> carry(b.files.size() * m_catalog.groups.size(), 0);
        BatchResult gpu, cpu;
        QString error;
        QVERIFY2(m_gpu->scan(b, m_catalog, m_base, carry, gpu, &error), qPrintable(error));
        CpuEngine cpuEngine;
        QVERIFY2(cpuEngine.scan(b, m_catalog, m_base, carry, cpu, &error), qPrintable(error));
        QVERIFY(gpu.telemetry.bytesStaged >= b.used);
        auto key = [](const RawHit &h) { return std::make_tuple(h.batchFile, h.pattern, h.end); };
        std::set<std::tuple<uint32_t, uint32_t, int64_t>> g, c;
        for (const RawHit &h : gpu.hits)
            g.insert(key(h));
        for (const RawHit &h : cpu.hits)
            c.insert(key(h));
        QVERIFY(c.size() > 10);
        QVERIFY(g == c);
    }

    void nextBatchIsCopiedWhileThisOneIsScanned()
    {
        if (!m_gpu->device().hasHostMemoryImport())
            QSKIP("the device does not import host memory: batches are copied in their own frames");
        // Batches read into the engine's memory, as the scanner's are.
        std::vector<std::unique_ptr<FileBatch>> batches;
        Batcher batcher(
            std::max(0, m_catalog.maxBoundedMatchLength() - 1), [] { return std::make_unique<FileBatch>(); },
            [&](std::unique_ptr<FileBatch> b) { batches.push_back(std::move(b)); });
        batcher.setAllocator([this](int64_t bytes) { return m_gpu->newHaystack(bytes); });
        batcher.setSizes(m_base.batchBytes, m_base.segmentBytes);
        FileWalker().walk({ QFile::encodeName(m_case.dir) }, [&](const FileEntry &e) { batcher.addFile(e); },
                          [](const FileProblem &) {});
        batcher.finish();
        QVERIFY(batches.size() >= 4);
        CpuEngine cpuEngine;
        auto sameAsCpu = [&](const FileBatch &b) {
            std::vector<uint32_t> carry(b.files.size() * m_catalog.groups.size(), 0);
            BatchResult gpu, cpu;
            QString error;
            if (!m_gpu->scan(b, m_catalog, m_base, carry, gpu, &error) || !gpu.notices.empty()
                || !cpuEngine.scan(b, m_catalog, m_base, carry, cpu, &error))
                return false;
            auto keys = [](const BatchResult &r) {
                std::set<std::tuple<uint32_t, uint32_t, int64_t>> k;
                for (const RawHit &h : r.hits)
                    k.insert({ h.batchFile, h.pattern, h.end });
                return k;
            };
            return !cpu.hits.empty() && keys(gpu) == keys(cpu);
        };
        const int64_t before = m_gpu->batchesPrefetched();
        // Handed over as the next one, batch 1 is on the GPU when its scan begins.
        m_gpu->setNext(*batches[1]);
        QVERIFY(sameAsCpu(*batches[0]));
        QVERIFY(sameAsCpu(*batches[1]));
        QCOMPARE(m_gpu->batchesPrefetched(), before + 1);
        // A scan of another batch than the one handed over scans its own bytes, and the copy waits for its own.
        m_gpu->setNext(*batches[2]);
        QVERIFY(sameAsCpu(*batches[0]));
        QVERIFY(sameAsCpu(*batches[3]));
        QCOMPARE(m_gpu->batchesPrefetched(), before + 1);
        QVERIFY(sameAsCpu(*batches[2]));
        QCOMPARE(m_gpu->batchesPrefetched(), before + 2);
        // One forgotten may go at once.
        m_gpu->setNext(*batches[2]);
        QVERIFY(sameAsCpu(*batches[1]));
        m_gpu->forgetNext();
        batches[2].reset();
        QVERIFY(sameAsCpu(*batches[3]));
        QCOMPARE(m_gpu->batchesPrefetched(), before + 2);
        // Copied the moment it is prepared (copyAhead), once prepare() has run, only where copies have a queue of
        // their own: on one queue the copy would be submitted from the preparing thread beside QRhi's frames.
        m_gpu->copyAhead(*batches[1]);
        QVERIFY(sameAsCpu(*batches[1]));
        QCOMPARE(m_gpu->batchesPrefetched(), before + 2);
        m_gpu->prepare(m_catalog, m_base, m_base.batchBytes);
        m_gpu->copyAhead(*batches[1]);
        QVERIFY(sameAsCpu(*batches[1]));
        QVERIFY(sameAsCpu(*batches[0]));
        const int64_t copiedAhead = m_gpu->copiesBesideScans() ? 1 : 0;
        QCOMPARE(m_gpu->batchesPrefetched(), before + 2 + copiedAhead);

        // The scanner hands over every batch it has read by then: on this slow device, most of them.
        LaunchParams p = m_base;
        const ScanOutcome out = scanWith(*m_engine, m_rules, m_catalog, m_case.dir, p);
        QVERIFY(out.hits == m_cpu.hits);
        QVERIFY(out.batches.size() >= 4);
        QVERIFY(m_gpu->batchesPrefetched() > before + 1);
    }

    void defaultBatchSizeSuitsTheDevice()
    {
        // hitscope-cli uses it when --batch-bytes is not given: never above what one binding holds, and on
        // Mesa's software Vulkan the engines' default of 64 MiB (larger batches gain nothing there).
        const int64_t preferred = m_gpu->preferredBatchBytes();
        QVERIFY(preferred > 0 && preferred <= m_gpu->maxBatchBytes());
        if (m_gpu->loopLimited())
            QCOMPARE(preferred, int64_t(64) << 20);
        else
            QCOMPARE(preferred, std::min<int64_t>(int64_t(256) << 20, m_gpu->maxBatchBytes()));
    }

    void missingKernelIsReportedAndTheScanGoesOn()
    {
        // Kernels from a folder that lacks them (HITSCOPE_GPU_SHADER_DIR, for comparing kernel variants): every
        // batch says which kernel is missing and runs again on the CPU engine; no hit is lost.
        const QStringList rules { QStringLiteral("-r"), m_case.literalsFile, QStringLiteral("-r"), m_case.regexesFile };
        QByteArray cpuOut, gpuOut, err;
        QCOMPARE(TestUtil::runCli(QStringList { QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("cpu") }
                                      + rules + QStringList { m_case.dir },
                                  &cpuOut, &err),
                 0);
        const QString missing = m_tmp.path() + QLatin1String("/no-kernels");
        qputenv("HITSCOPE_GPU_SHADER_DIR", QFile::encodeName(missing));
        const int rc = TestUtil::runCli(QStringList { QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("gpu") }
                                            + rules + QStringList { m_case.dir },
                                        &gpuOut, &err);
        qunsetenv("HITSCOPE_GPU_SHADER_DIR");
        QCOMPARE(rc, 0);
        // The first kernel the batch needs is named: the key screen's (the CLI's catalog is tableless).
        QVERIFY2(err.contains("no key screen kernel") && err.contains(QByteArray(QFile::encodeName(missing) + "/keyscreen")),
                 err.constData());
        QVERIFY2(err.contains("re-run on the CPU engine"), err.constData());
        QVERIFY(!cpuOut.isEmpty());
        QByteArrayList want = cpuOut.split('\n'), got = gpuOut.split('\n');
        std::sort(want.begin(), want.end());
        std::sort(got.begin(), got.end());
        QVERIFY(got == want);
    }

    void noComputeDeviceGivesClearError()
    {
        // OpenGL needs a display: on the headless platform there is none.
        if (qEnvironmentVariableIsSet("DISPLAY"))
            QSKIP("a display is present: OpenGL may well work here");
        RhiDeviceOptions options;
        options.backend = GpuBackend::OpenGL;
        QString error;
        QVERIFY(!GpuEngine::create(options, &error));
        QVERIFY2(error.contains(QLatin1String("OpenGL")), qPrintable(error));
        QByteArray out, err;
        QCOMPARE(TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("gpu"),
                                    QStringLiteral("--backend"), QStringLiteral("opengl"), QStringLiteral("-r"),
                                    m_case.literalsFile, m_case.dir },
                                  &out, &err),
                 1);
        QVERIFY2(err.contains("no GPU engine") && err.contains("OpenGL"), err.constData());
        // Auto falls back to the CPU engine, with a notice, and still finds everything.
        QCOMPARE(TestUtil::runCli({ QStringLiteral("scan"), QStringLiteral("--engine"), QStringLiteral("auto"),
                                    QStringLiteral("--backend"), QStringLiteral("opengl"), QStringLiteral("-r"),
                                    m_case.literalsFile, m_case.dir },
                                  &out, &err),
                 0);
        QVERIFY2(err.contains("using the CPU engine"), err.constData());
        QVERIFY(out.count('\n') > 10);
    }
};

QTEST_MAIN(TestGpuEngine)
#include "tst_gpuengine.moc"
