// SPDX-License-Identifier: GPL-3.0-or-later
// The batcher's promises: every byte of every file is owned by exactly one chunk and one segment, each
// chunk holds the overlap and context its matches need, and the held bytes are the file's bytes.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDeadlineTimer>
#include <QDir>
#include <QRandomGenerator>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QThread>
#include <QTest>

#include "scan/batcher.h"
#include "scan/ringreader.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

QByteArray randomBytes(int size, QRandomGenerator &rng)
{
    QByteArray data(size, Qt::Uninitialized);
    for (char &c : data)
        c = char(rng.bounded(256));
    return data;
}

// Open file descriptors of this process: a piece that closed its file twice, or never, shows here.
int openFds()
{
    return int(QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).size());
}

struct Sizes
{
    int overlap = 0;
    qint64 batchBytes = 64 << 20;
    qint64 segmentBytes = 256 << 10;
    qint64 pieceBytes = 8 << 20;
    int readThreads = 4;
    bool ramp = false; // with the bytes after each file told, as the scanner tells them once its walk has ended
    bool ring = true;  // through io_uring where the kernel allows it
    bool unsized = false; // files come with FileEntry::kUnknownSize, as from a walk that did not stat them
};

std::vector<std::unique_ptr<FileBatch>> batchFiles(const std::vector<FileEntry> &entries, const Sizes &sizes)
{
    std::vector<std::unique_ptr<FileBatch>> batches;
    Batcher batcher(
        sizes.overlap, [] { return std::make_unique<FileBatch>(); },
        [&](std::unique_ptr<FileBatch> b) { batches.push_back(std::move(b)); });
    batcher.setSizes(sizes.batchBytes, sizes.segmentBytes);
    batcher.setPieceBytes(sizes.pieceBytes);
    batcher.setReadThreads(sizes.readThreads);
    batcher.setRamp(sizes.ramp);
    batcher.setRingReads(sizes.ring);
    int64_t after = 0;
    for (const FileEntry &e : entries)
        after += e.size;
    int64_t unsizedAfter = sizes.unsized ? int64_t(entries.size()) : 0;
    for (FileEntry e : entries) {
        after -= e.size;
        if (sizes.unsized) {
            e.size = FileEntry::kUnknownSize;
            --unsizedAfter;
        }
        if (sizes.ramp)
            batcher.setBytesAfter(sizes.unsized ? 0 : after, unsizedAfter);
        batcher.addFile(e);
    }
    batcher.finish();
    return batches;
}

// Writes `count` files of random bytes, `size(i)` bytes each, named f0, f1, ... in `dir`; their entries and bytes
// go to the end of `entries` and `contents`. False if one could not be written.
template<typename Size>
bool writeRandomFiles(const QString &dir, int count, Size size, QRandomGenerator &rng, std::vector<FileEntry> &entries,
                      std::vector<QByteArray> &contents)
{
    for (int i = 0; i < count; ++i) {
        const QString path = dir + QStringLiteral("/f%1").arg(i);
        contents.push_back(randomBytes(size(i), rng));
        if (!TestUtil::writeFile(path, contents.back()))
            return false;
        entries.push_back({ QFile::encodeName(path), contents.back().size() });
    }
    return true;
}

// The chunk's held bytes are `data`'s bytes at the same offsets.
bool holdsBytes(const FileBatch &b, const BatchFile &f, const QByteArray &data)
{
    return f.holdEnd <= data.size()
        && std::equal(b.haystack.get() + f.dataOffset, b.haystack.get() + f.dataOffset + (f.holdEnd - f.holdBegin),
                      reinterpret_cast<const uint8_t *>(data.constData()) + f.holdBegin);
}

} // namespace

class TestBatcher : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        // Files of unknown size are opened through the calling thread's ring, a descriptor kept as long as the
        // thread: made now, before any test counts descriptors.
        RingReader::forThisThread();
    }

    void ownershipAndOverlap_data()
    {
        QTest::addColumn<int>("overlap");
        QTest::addColumn<qint64>("batchBytes");
        QTest::addColumn<qint64>("segmentBytes");
        QTest::addColumn<qint64>("pieceBytes");
        QTest::addColumn<bool>("ramp");
        QTest::addColumn<bool>("ring");
        QTest::addColumn<bool>("unsized");
        auto row = [](const char *name, int overlap, qint64 batch, qint64 segment, qint64 piece, bool ramp) {
            for (const bool ring : { true, false }) {
                for (const bool unsized : { false, true })
                    QTest::addRow("%s%s%s", name, ring ? "" : ", plain calls", unsized ? ", sizes unknown" : "")
                        << overlap << batch << segment << piece << ramp << ring << unsized;
            }
        };
        const qint64 whole = 8 << 20; // larger than every file: one piece per chunk
        row("no overlap, small batches", 0, 10000, 1000, whole, false);
        row("overlap 63", 63, 20000, 777, whole, false);
        row("overlap larger than segments", 300, 50000, 100, whole, false);
        row("one big batch", 16, 64 << 20, 256 << 10, whole, false);
        row("pieces of 1000, small batches", 0, 10000, 1000, 1000, false);
        row("pieces of 4096, overlap 63", 63, 20000, 777, 4096, false);
        row("pieces of 7, overlap 300", 300, 50000, 100, 7, false);
        row("pieces of 10000, one big batch", 16, 64 << 20, 256 << 10, 10000, false);
        row("ramp, small batches", 0, 10000, 1000, whole, true);
        row("ramp, overlap 300, pieces of 7", 300, 50000, 100, 7, true);
    }

    void ownershipAndOverlap()
    {
        QFETCH(int, overlap);
        QFETCH(qint64, batchBytes);
        QFETCH(qint64, segmentBytes);
        QFETCH(qint64, pieceBytes);
        QFETCH(bool, ramp);
        QFETCH(bool, ring);
        QFETCH(bool, unsized);
        if (ring && !RingReader::available())
            QSKIP("io_uring is not available to this process (old kernel, seccomp or kernel.io_uring_disabled)");
        QTemporaryDir tmp;
        QRandomGenerator rng(7);
        std::vector<QByteArray> contents;
        std::vector<FileEntry> entries;
        for (int size : { 0, 1, 5, 999, 1000, 1001, 9999, 10000, 25000, 123457 }) {
            const QByteArray data = randomBytes(size, rng);
            const QString path = tmp.path() + QStringLiteral("/f%1").arg(size);
            QVERIFY(TestUtil::writeFile(path, data));
            contents.push_back(data);
            entries.push_back({ QFile::encodeName(path), size });
        }

        const int fds = openFds();
        const int64_t ringFiles = RingReader::requestsRead();
        const auto batches
            = batchFiles(entries, { overlap, batchBytes, segmentBytes, pieceBytes, 4, ramp, ring, unsized });
        QCOMPARE(openFds(), fds);
        // Every row has files read in one piece: with the ring on, it read them.
        QCOMPARE(RingReader::requestsRead() > ringFiles, ring);

        std::map<int, std::vector<int>> ownedByChunk;  // file -> owner count per byte
        std::map<int, std::vector<int>> ownedBySegment;
        int expectedIndex = 0;
        for (const auto &b : batches) {
            QCOMPARE(b->index, expectedIndex++);
            QVERIFY(b->used <= b->capacity);
            int64_t owned = 0;
            for (const BatchFile &f : b->files) {
                const QByteArray &data = contents[size_t(f.fileIndex)];
                QCOMPARE(f.fileSize, int64_t(data.size()));
                // Held bytes are the file's bytes, with the overlap and one context byte before the chunk
                // and one look-ahead byte after it where the file has them.
                QCOMPARE(f.holdBegin, std::max<int64_t>(0, f.ownBegin - overlap - 1));
                QCOMPARE(f.holdEnd, std::min<int64_t>(f.fileSize, f.ownEnd + 1));
                QVERIFY(!f.failed);
                QVERIFY(holdsBytes(*b, f, data));
                auto &own = ownedByChunk[f.fileIndex];
                own.resize(size_t(f.fileSize));
                for (int64_t i = f.ownBegin; i < f.ownEnd; ++i)
                    ++own[size_t(i)];
                owned += f.ownEnd - f.ownBegin;
                QCOMPARE(f.lastChunk, f.ownEnd == f.fileSize);
                QCOMPARE(f.firstChunk, f.ownBegin == 0);
            }
            QCOMPARE(b->ownedBytes, owned);
            QVERIFY(b->problems.empty());
            for (const Segment &s : b->segments) {
                const BatchFile &f = b->files[s.batchFile];
                QVERIFY(s.ownBegin >= f.ownBegin && s.ownEnd <= f.ownEnd && s.ownBegin < s.ownEnd);
                QVERIFY(s.ownEnd - s.ownBegin <= segmentBytes);
                QCOMPARE(s.scanBegin, std::max<int64_t>(0, s.ownBegin - overlap));
                QCOMPARE(s.scanEnd, std::min<int64_t>(f.fileSize, s.ownEnd + 1));
                QVERIFY(s.scanBegin == 0 || s.scanBegin - 1 >= f.holdBegin);
                auto &own = ownedBySegment[f.fileIndex];
                own.resize(size_t(f.fileSize));
                for (int64_t i = s.ownBegin; i < s.ownEnd; ++i)
                    ++own[size_t(i)];
            }
        }
        QCOMPARE(int(ownedByChunk.size()), int(entries.size()));
        for (const auto &[file, counts] : ownedByChunk)
            QVERIFY2(std::all_of(counts.begin(), counts.end(), [](int c) { return c == 1; }), "a byte owned twice or never");
        for (const auto &[file, counts] : ownedBySegment)
            QVERIFY2(std::all_of(counts.begin(), counts.end(), [](int c) { return c == 1; }),
                     "a byte in no segment or two");
    }

    void rampGrowsFirstAndHalvesAtTheEnd()
    {
        // 400 files of 5,000 bytes in batches of 200,000 bytes: a batch takes whole files until fewer than
        // 5,000 bytes are left, so it holds from its size less 5,000 up to its size.
        QTemporaryDir tmp;
        QRandomGenerator rng(11);
        std::vector<FileEntry> entries;
        std::vector<QByteArray> contents;
        QVERIFY(writeRandomFiles(tmp.path(), 400, [](int) { return 5000; }, rng, entries, contents));
        const qint64 batchBytes = 200000;
        auto holds = [](const FileBatch &b, qint64 size) { return b.used <= size && b.used >= size - 5000; };
        Sizes sizes;
        sizes.batchBytes = batchBytes;
        sizes.segmentBytes = 4096;
        const auto fixed = batchFiles(entries, sizes);
        QCOMPARE(int(fixed.size()), 11);
        sizes.ramp = true;
        const auto ramped = batchFiles(entries, sizes);

        // The engine starts on an eighth of a batch, then a quarter, a half, then full batches.
        QVERIFY(ramped.size() > 8);
        QVERIFY(holds(*ramped[0], batchBytes / 8));
        QVERIFY(holds(*ramped[1], batchBytes / 4));
        QVERIFY(holds(*ramped[2], batchBytes / 2));
        QVERIFY(holds(*ramped[3], batchBytes));
        // Every buffer is of the full size: recycled buffers need not grow later.
        for (const auto &b : ramped)
            QCOMPARE(b->capacity, batchBytes);
        // From the full ones on, each holds at most what the one before held, and the scan ends on small ones.
        for (size_t i = 4; i < ramped.size(); ++i)
            QVERIFY(ramped[i]->used <= ramped[i - 1]->used + 5000);
        QVERIFY(ramped.back()->used <= batchBytes / 16);
        QVERIFY(ramped[ramped.size() - 2]->used <= batchBytes / 8);
        // A few batches more, not many.
        QVERIFY(ramped.size() <= fixed.size() + 10);
        int64_t owned = 0;
        for (const auto &b : ramped)
            owned += b->ownedBytes;
        QCOMPARE(owned, int64_t(400 * 5000));

        // Files the walk did not size, opened a group at a time: the batches are the same, the files still to
        // come counted at the mean size of those opened so far.
        sizes.unsized = true;
        const int fds = openFds();
        const auto unsized = batchFiles(entries, sizes);
        QCOMPARE(openFds(), fds);
        QCOMPARE(unsized.size(), ramped.size());
        for (size_t i = 0; i < ramped.size(); ++i)
            QCOMPARE(unsized[i]->used, ramped[i]->used);
    }

    void fileOfUnknownSizeIsReadFromTheDescriptorItWasSizedBy_data()
    {
        QTest::addColumn<bool>("ring");
        QTest::newRow("ring") << true;
        QTest::newRow("plain calls") << false;
    }

    void fileOfUnknownSizeIsReadFromTheDescriptorItWasSizedBy()
    {
        // Each path is replaced by another file between the plan (which opened the files to size them) and the
        // read: the batch holds the files that were sized, not whatever the paths name by then. A file the walk
        // sized is opened by its path when read, and gets the new bytes.
        QFETCH(bool, ring);
        if (ring && !RingReader::available())
            QSKIP("io_uring is not available to this process (old kernel, seccomp or kernel.io_uring_disabled)");
        QTemporaryDir tmp;
        QRandomGenerator rng(19);
        std::vector<FileEntry> entries;
        std::vector<QByteArray> contents;
        QVERIFY(writeRandomFiles(tmp.path(), 5, [](int i) { return 1000 + 100 * i; }, rng, entries, contents));
        for (const bool unsized : { true, false }) {
            std::vector<QByteArray> replaced;
            std::vector<std::unique_ptr<FileBatch>> batches;
            bool swapped = false;
            Batcher batcher(
                0,
                [&] {
                    // Called once a batch is planned, before it is read.
                    for (size_t i = 0; !swapped && i < entries.size(); ++i) {
                        replaced.push_back(randomBytes(int(contents[i].size()), rng));
                        const QString path = QFile::decodeName(entries[i].path);
                        if (!TestUtil::writeFile(path + QLatin1String(".new"), replaced.back())
                            || ::rename(QFile::encodeName(path + QLatin1String(".new")).constData(),
                                        entries[i].path.constData())
                                != 0)
                            return std::unique_ptr<FileBatch>();
                    }
                    swapped = true;
                    return std::make_unique<FileBatch>();
                },
                [&](std::unique_ptr<FileBatch> b) { batches.push_back(std::move(b)); });
            batcher.setRingReads(ring);
            for (FileEntry e : entries) {
                if (unsized)
                    e.size = FileEntry::kUnknownSize;
                batcher.addFile(e);
            }
            batcher.finish();
            QCOMPARE(batches.size(), size_t(1));
            QCOMPARE(batches[0]->files.size(), entries.size());
            for (const BatchFile &f : batches[0]->files) {
                const size_t i = size_t(f.fileIndex);
                QVERIFY(holdsBytes(*batches[0], f, unsized ? contents[i] : replaced[i]));
            }
            contents = replaced; // what the paths hold now
        }
    }

    void filesOfUnknownSizeBeyondTheDescriptorBudget()
    {
        // With few descriptors allowed, the batcher keeps only some of the files it sized open and opens the rest
        // again to read them: every file still arrives whole, none is reported, and none stays open. More files
        // than the limit: kept open all, they would fail to open.
        struct rlimit saved {};
        QCOMPARE(::getrlimit(RLIMIT_NOFILE, &saved), 0);
        struct rlimit low = saved;
        low.rlim_cur = std::min<rlim_t>(saved.rlim_max, 600); // 44 held at most: (600 - 512) / 2
        QCOMPARE(::setrlimit(RLIMIT_NOFILE, &low), 0);
        const auto restore = qScopeGuard([&] { ::setrlimit(RLIMIT_NOFILE, &saved); });
        QTemporaryDir tmp;
        QRandomGenerator rng(17);
        std::vector<FileEntry> entries;
        std::vector<QByteArray> contents;
        QVERIFY(writeRandomFiles(tmp.path(), 700, [&](int) { return int(rng.bounded(3000)); }, rng, entries, contents));
        for (const bool ring : { true, false }) {
            Sizes sizes;
            sizes.ring = ring;
            sizes.unsized = true;
            const int fds = openFds();
            const auto batches = batchFiles(entries, sizes);
            QCOMPARE(openFds(), fds);
            QCOMPARE(batches.size(), size_t(1)); // one batch of 64 MiB holds them all
            QCOMPARE(batches[0]->files.size(), entries.size());
            QVERIFY(batches[0]->problems.empty());
            for (const BatchFile &f : batches[0]->files) {
                QCOMPARE(f.fileSize, int64_t(contents[size_t(f.fileIndex)].size()));
                QVERIFY(holdsBytes(*batches[0], f, contents[size_t(f.fileIndex)]));
            }
        }
    }

    void rampEndsABatchOfManySmallFilesEarly()
    {
        // 3,000 files of 10 bytes fit in one 64 MiB batch by size. With the ramp on, a batch ends at 1,024 files:
        // each file costs every stage a fixed time, and one batch of tens of thousands held each stage up.
        QTemporaryDir tmp;
        QRandomGenerator rng(13);
        std::vector<FileEntry> entries;
        std::vector<QByteArray> contents;
        QVERIFY(writeRandomFiles(tmp.path(), 3000, [](int) { return 10; }, rng, entries, contents));
        Sizes sizes;
        sizes.batchBytes = 64 << 20;
        QCOMPARE(batchFiles(entries, sizes).size(), size_t(1));
        sizes.ramp = true;
        const auto ramped = batchFiles(entries, sizes);
        QCOMPARE(ramped.size(), size_t(3));
        int next = 0;
        for (const auto &b : ramped) {
            QVERIFY(b->files.size() <= 1024);
            for (const BatchFile &f : b->files) {
                QCOMPARE(f.fileIndex, next);
                QVERIFY(f.firstChunk && f.lastChunk);
                QVERIFY(holdsBytes(*b, f, contents[size_t(next)]));
                ++next;
            }
        }
        QCOMPARE(next, 3000);
        // A larger batch takes one file per 64 KiB of its size.
        sizes.batchBytes = 128 << 20;
        const auto larger = batchFiles(entries, sizes);
        QCOMPARE(larger.size(), size_t(2));
        QCOMPARE(larger[0]->files.size(), size_t(2048));
    }

    void pollHandsOnABatchOnceRead()
    {
        // A walk that passes many files --include leaves out adds nothing for a long time: poll() hands on the
        // batch that has been read meanwhile, without a next file.
        QTemporaryDir tmp;
        QRandomGenerator rng(5);
        std::vector<FileEntry> entries;
        for (int i = 0; i < 3; ++i) {
            const QString path = tmp.path() + QStringLiteral("/f%1").arg(i);
            QVERIFY(TestUtil::writeFile(path, randomBytes(20000, rng)));
            entries.push_back({ QFile::encodeName(path), 20000 });
        }
        std::vector<std::unique_ptr<FileBatch>> pool;
        pool.push_back(std::make_unique<FileBatch>());
        int emitted = 0;
        Batcher batcher(
            0,
            [&] {
                auto b = std::move(pool.back());
                pool.pop_back();
                return b;
            },
            [&](std::unique_ptr<FileBatch> b) {
                ++emitted;
                pool.push_back(std::move(b));
            });
        batcher.setSizes(30000, 1000);
        // The third file does not fit beside the first one: the first batch is full and being read.
        batcher.addFile(entries[0]);
        batcher.addFile(entries[1]);
        QCOMPARE(emitted, 0);
        QDeadlineTimer deadline(10000);
        while (emitted == 0 && !deadline.hasExpired()) {
            batcher.poll();
            QThread::msleep(1);
        }
        QCOMPARE(emitted, 1);
        batcher.addFile(entries[2]);
        batcher.finish();
        QVERIFY(emitted >= 2);
    }

    void batchesLeaveInOrderOnTheCallingThreadOneBufferAtATime()
    {
        QTemporaryDir tmp;
        QRandomGenerator rng(3);
        std::vector<FileEntry> entries;
        for (int i = 0; i < 40; ++i) {
            const int size = int(rng.bounded(30000));
            const QString path = tmp.path() + QStringLiteral("/f%1").arg(i);
            QVERIFY(TestUtil::writeFile(path, randomBytes(size, rng)));
            entries.push_back({ QFile::encodeName(path), size });
        }
        // The scanner's pool of buffers: one being read may be out, never two, or the scan could wait on us.
        std::vector<std::unique_ptr<FileBatch>> pool;
        for (int i = 0; i < 2; ++i)
            pool.push_back(std::make_unique<FileBatch>());
        const auto caller = std::this_thread::get_id();
        int out = 0, maxOut = 0, emitted = 0;
        bool elsewhere = false;
        std::vector<int> order;
        Batcher batcher(
            0,
            [&] {
                elsewhere |= std::this_thread::get_id() != caller;
                maxOut = std::max(maxOut, ++out);
                auto b = std::move(pool.back());
                pool.pop_back();
                return b;
            },
            [&](std::unique_ptr<FileBatch> b) {
                elsewhere |= std::this_thread::get_id() != caller;
                --out;
                ++emitted;
                order.push_back(b->index);
                pool.push_back(std::move(b));
            });
        batcher.setSizes(50000, 1000);
        batcher.setPieceBytes(4096);
        batcher.setReadThreads(3);
        for (int i = 0; i < int(entries.size()); ++i) {
            batcher.addFile(entries[size_t(i)]);
            if (i % 7 == 0)
                batcher.addProblem({ entries[size_t(i)].path, QStringLiteral("a walk problem") });
        }
        batcher.finish();
        QVERIFY(!elsewhere);
        QCOMPARE(maxOut, 1);
        QCOMPARE(out, 0);
        QVERIFY(emitted > 5);
        for (int i = 0; i < emitted; ++i)
            QCOMPARE(order[size_t(i)], i);
    }

    void fileThatChangedSizeIsScannedAsFarAsItGoes_data()
    {
        QTest::addColumn<int>("actual");
        QTest::addColumn<qint64>("planned");
        QTest::addColumn<qint64>("pieceBytes");
        QTest::addColumn<int>("afterSize");
        QTest::addColumn<bool>("ring");
        auto row = [](const char *name, int actual, qint64 planned, qint64 piece, int afterSize) {
            for (const bool ring : { true, false })
                QTest::addRow("%s%s", name, ring ? "" : ", plain calls")
                    << actual << planned << piece << afterSize << ring;
        };
        const qint64 whole = 8 << 20;
        // Batches of 8192 bytes: the planned 50,000 bytes take seven chunks, 10,000 bytes two, the second one
        // sharing its batch with a small file after it. Chunks read in one piece go through the ring.
        row("shrank inside its first chunk", 5000, 50000, whole, 20000);
        row("shrank inside its first chunk, pieces of 1000", 5000, 50000, 1000, 20000);
        row("shrank inside a piece", 5500, 50000, 1000, 20000);
        row("shrank inside its third chunk", 20000, 50000, 1000, 20000);
        row("shrank inside its third chunk, one piece per chunk", 20000, 50000, whole, 20000);
        row("shrank inside its last chunk", 49999, 50000, 777, 20000);
        row("shrank inside its last chunk, one piece per chunk", 49999, 50000, whole, 20000);
        row("emptied", 0, 50000, 1000, 20000);
        row("emptied, one piece per chunk", 0, 50000, whole, 20000);
        row("shrank before a last chunk that shares its batch", 5000, 10000, 1000, 3000);
        row("emptied before a last chunk that shares its batch", 0, 10000, whole, 3000);
        row("grew: scanned at the planned size", 60000, 50000, 1000, 20000);
        row("grew, one piece per chunk", 60000, 50000, whole, 3000);
    }

    void fileThatChangedSizeIsScannedAsFarAsItGoes()
    {
        QFETCH(int, actual);
        QFETCH(qint64, planned);
        QFETCH(qint64, pieceBytes);
        QFETCH(int, afterSize);
        QFETCH(bool, ring);
        if (ring && !RingReader::available())
            QSKIP("io_uring is not available to this process (old kernel, seccomp or kernel.io_uring_disabled)");
        QTemporaryDir tmp;
        QRandomGenerator rng(11);
        const QByteArray data = randomBytes(actual, rng);
        const QByteArray after = randomBytes(afterSize, rng);
        const QString path = tmp.path() + QLatin1String("/changed");
        const QString afterPath = tmp.path() + QLatin1String("/after");
        QVERIFY(TestUtil::writeFile(path, data));
        QVERIFY(TestUtil::writeFile(afterPath, after));
        const int overlap = 8;
        // The walker saw `planned` bytes; `actual` are there when the batches are read.
        const int64_t ringFiles = RingReader::requestsRead();
        const auto batches = batchFiles({ { QFile::encodeName(path), planned }, { QFile::encodeName(afterPath), afterSize } },
                                        { overlap, 8192, 1000, pieceBytes, 4, false, ring });
        // Chunks are read in one piece at least where pieces are as large as batches.
        QVERIFY(ring ? pieceBytes < 8192 || RingReader::requestsRead() > ringFiles
                     : RingReader::requestsRead() == ringFiles);

        const int64_t expected = std::min<int64_t>(actual, planned);
        std::map<int, std::vector<int>> owners;
        std::map<int, std::vector<int>> segmentOwners;
        std::map<int, int64_t> lastSize;
        for (const auto &b : batches) {
            QVERIFY(b->problems.empty());
            QVERIFY(!b->files.empty());
            int64_t owned = 0;
            int64_t heldEnd = 0;
            for (const BatchFile &f : b->files) {
                // Packed in order without overlapping, inside the batch.
                QVERIFY(f.dataOffset >= heldEnd);
                heldEnd = f.dataOffset + (f.holdEnd - f.holdBegin);
                QVERIFY(heldEnd <= b->used && b->used <= b->capacity);
                QVERIFY(!f.failed);
                QVERIFY2(!lastSize.count(f.fileIndex), "a chunk after the last one");
                QVERIFY(holdsBytes(*b, f, f.fileIndex == 0 ? data : after));
                auto &own = owners[f.fileIndex];
                own.resize(size_t(std::max<int64_t>(int64_t(own.size()), f.ownEnd)));
                for (int64_t i = f.ownBegin; i < f.ownEnd; ++i)
                    ++own[size_t(i)];
                owned += f.ownEnd - f.ownBegin;
                if (f.lastChunk)
                    lastSize[f.fileIndex] = f.fileSize;
            }
            QCOMPARE(b->ownedBytes, owned);
            for (const Segment &s : b->segments) {
                QVERIFY(s.batchFile < b->files.size());
                const BatchFile &f = b->files[s.batchFile];
                QVERIFY(s.ownBegin >= f.ownBegin && s.ownBegin < s.ownEnd && s.ownEnd <= f.ownEnd && s.scanEnd <= f.fileSize);
                auto &own = segmentOwners[f.fileIndex];
                own.resize(size_t(std::max<int64_t>(int64_t(own.size()), s.ownEnd)));
                for (int64_t i = s.ownBegin; i < s.ownEnd; ++i)
                    ++own[size_t(i)];
            }
        }
        QCOMPARE(lastSize[0], expected);
        QCOMPARE(lastSize[1], int64_t(afterSize));
        QCOMPARE(int64_t(owners[0].size()), expected);
        QCOMPARE(int64_t(owners[1].size()), int64_t(afterSize));
        QCOMPARE(segmentOwners[0].size(), owners[0].size());
        QCOMPARE(segmentOwners[1].size(), owners[1].size());
        for (const auto *byFile : { &owners, &segmentOwners })
            for (const auto &[file, counts] : *byFile)
                QVERIFY2(std::all_of(counts.begin(), counts.end(), [](int c) { return c == 1; }),
                         "a byte owned twice or never");
    }

    void unreadableFileIsReportedAndTheRestContinues_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("error");
        QTest::addColumn<qint64>("pieceBytes");
        QTest::addColumn<bool>("ring");
        QTest::addColumn<bool>("unsized");
        // Tests run as root, who can open a chmod 000 file: these fail to open for anyone.
        const qint64 whole = 8 << 20;
        for (const bool unsized : { false, true }) {
            for (const bool ring : { true, false }) {
                const QByteArray how = QByteArray(ring ? "" : ", plain calls") + (unsized ? ", size unknown" : "");
                QTest::addRow("vanished%s", how.constData())
                    << QStringLiteral("vanished") << ENOENT << whole << ring << unsized;
                QTest::addRow("vanished, pieces of 1000%s", how.constData())
                    << QStringLiteral("vanished") << ENOENT << qint64(1000) << ring << unsized;
                for (const auto &[kind, error] :
                     { std::pair { "fifo", EINVAL }, { "folder", EINVAL }, { "symlink", ELOOP } }) {
                    QTest::addRow("replaced by a %s%s", kind, how.constData())
                        << QString::fromLatin1(kind) << error << whole << ring << unsized;
                    QTest::addRow("replaced by a %s, pieces of 1000%s", kind, how.constData())
                        << QString::fromLatin1(kind) << error << qint64(1000) << ring << unsized;
                }
            }
        }
    }

    void unreadableFileIsReportedAndTheRestContinues()
    {
        QFETCH(QString, kind);
        QFETCH(int, error);
        QFETCH(qint64, pieceBytes);
        QFETCH(bool, ring);
        QFETCH(bool, unsized);
        if (ring && !RingReader::available())
            QSKIP("io_uring is not available to this process (old kernel, seccomp or kernel.io_uring_disabled)");
        QTemporaryDir tmp;
        QRandomGenerator rng(5);
        const QByteArray before = randomBytes(3000, rng);
        const QByteArray after = randomBytes(20000, rng);
        const QByteArray beforePath = QFile::encodeName(tmp.path() + QLatin1String("/before"));
        const QByteArray afterPath = QFile::encodeName(tmp.path() + QLatin1String("/after"));
        const QByteArray bad = QFile::encodeName(tmp.path() + QLatin1String("/bad"));
        QVERIFY(TestUtil::writeFile(QFile::decodeName(beforePath), before));
        QVERIFY(TestUtil::writeFile(QFile::decodeName(afterPath), after));
        if (kind == QLatin1String("fifo"))
            QVERIFY(::mkfifo(bad.constData(), 0644) == 0);
        else if (kind == QLatin1String("folder"))
            QVERIFY(::mkdir(bad.constData(), 0755) == 0);
        else if (kind == QLatin1String("symlink"))
            QVERIFY(::symlink(afterPath.constData(), bad.constData()) == 0);

        const int fds = openFds();
        // Planned larger than a batch: the chunks after the first are not read either.
        const int64_t ringFiles = RingReader::requestsRead();
        const auto batches = batchFiles({ { beforePath, 3000 }, { bad, 50000 }, { afterPath, 20000 } },
                                        { 0, 8192, 1000, pieceBytes, 4, false, ring, unsized });
        // Chunks are read in one piece at least where pieces are as large as batches.
        QVERIFY(ring ? pieceBytes < 8192 || RingReader::requestsRead() > ringFiles
                     : RingReader::requestsRead() == ringFiles);
        QCOMPARE(openFds(), fds);

        std::vector<FileProblem> problems;
        std::map<int, int64_t> owned;
        std::map<int, int64_t> lastSize;
        int badChunks = 0;
        for (const auto &b : batches) {
            problems.insert(problems.end(), b->problems.begin(), b->problems.end());
            for (const BatchFile &f : b->files) {
                if (f.fileIndex == 1) {
                    ++badChunks;
                    QVERIFY(f.failed);
                    QCOMPARE(f.ownEnd, f.ownBegin);
                    continue;
                }
                QVERIFY(!f.failed);
                QVERIFY(holdsBytes(*b, f, f.fileIndex == 0 ? before : after));
                owned[f.fileIndex] += f.ownEnd - f.ownBegin;
                if (f.lastChunk)
                    lastSize[f.fileIndex] = f.fileSize;
            }
            for (const Segment &s : b->segments)
                QVERIFY(b->files[s.batchFile].fileIndex != 1);
        }
        // A file of unknown size is opened before it is planned: one that cannot be is planned into no batch.
        QCOMPARE(badChunks, unsized ? 0 : 1);
        QCOMPARE(problems.size(), size_t(1));
        QCOMPARE(problems[0].path, bad);
        if (error == EINVAL)
            QCOMPARE(problems[0].reason, QStringLiteral("not a regular file"));
        else
            QCOMPARE(problems[0].reason,
                     QStringLiteral("cannot open: ") + QString::fromLocal8Bit(std::strerror(error)));
        QCOMPARE(owned[0], int64_t(3000));
        QCOMPARE(owned[2], int64_t(20000));
        QCOMPARE(lastSize[0], int64_t(3000));
        QCOMPARE(lastSize[2], int64_t(20000));
    }
};

QTEST_GUILESS_MAIN(TestBatcher)
#include "tst_batcher.moc"
