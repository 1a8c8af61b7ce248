// SPDX-License-Identifier: GPL-3.0-or-later
// The batcher's promises: every byte of every file is owned by exactly one chunk and one segment, each
// chunk holds the overlap and context its matches need, and the held bytes are the file's bytes.
#include <map>

#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "scan/batcher.h"
#include "testutil.h"

using namespace Hitscope;

class TestBatcher : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void ownershipAndOverlap_data()
    {
        QTest::addColumn<int>("overlap");
        QTest::addColumn<qint64>("batchBytes");
        QTest::addColumn<qint64>("segmentBytes");
        QTest::addRow("no overlap, small batches") << 0 << qint64(10000) << qint64(1000);
        QTest::addRow("overlap 63") << 63 << qint64(20000) << qint64(777);
        QTest::addRow("overlap larger than segments") << 300 << qint64(50000) << qint64(100);
        QTest::addRow("one big batch") << 16 << qint64(64 << 20) << qint64(256 << 10);
    }

    void ownershipAndOverlap()
    {
        QFETCH(int, overlap);
        QFETCH(qint64, batchBytes);
        QFETCH(qint64, segmentBytes);
        QTemporaryDir tmp;
        QRandomGenerator rng(7);
        std::vector<QByteArray> contents;
        std::vector<FileEntry> entries;
        for (int size : { 0, 1, 5, 999, 1000, 1001, 9999, 10000, 25000, 123457 }) {
            QByteArray data(size, Qt::Uninitialized);
            for (char &c : data)
                c = char(rng.bounded(256));
            const QString path = tmp.path() + QStringLiteral("/f%1").arg(size);
            QVERIFY(TestUtil::writeFile(path, data));
            contents.push_back(data);
            entries.push_back({ QFile::encodeName(path), size });
        }

        std::vector<std::unique_ptr<FileBatch>> batches;
        Batcher batcher(
            overlap, [] { return std::make_unique<FileBatch>(); },
            [&](std::unique_ptr<FileBatch> b) { batches.push_back(std::move(b)); });
        batcher.setSizes(batchBytes, segmentBytes);
        for (const FileEntry &e : entries)
            batcher.addFile(e);
        batcher.finish();

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
                QVERIFY(std::equal(b->haystack.get() + f.dataOffset,
                                   b->haystack.get() + f.dataOffset + (f.holdEnd - f.holdBegin),
                                   reinterpret_cast<const uint8_t *>(data.constData()) + f.holdBegin));
                auto &own = ownedByChunk[f.fileIndex];
                own.resize(size_t(f.fileSize));
                for (int64_t i = f.ownBegin; i < f.ownEnd; ++i)
                    ++own[size_t(i)];
                owned += f.ownEnd - f.ownBegin;
                QCOMPARE(f.lastChunk, f.ownEnd == f.fileSize);
                QCOMPARE(f.firstChunk, f.ownBegin == 0);
            }
            QCOMPARE(b->ownedBytes, owned);
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

    void fileThatShrankIsScannedAsFarAsItGoes()
    {
        QTemporaryDir tmp;
        const QString path = tmp.path() + QLatin1String("/shrank");
        QVERIFY(TestUtil::writeFile(path, QByteArray(5000, 'x')));
        std::vector<std::unique_ptr<FileBatch>> batches;
        Batcher batcher(
            8, [] { return std::make_unique<FileBatch>(); },
            [&](std::unique_ptr<FileBatch> b) { batches.push_back(std::move(b)); });
        batcher.setSizes(8192, 1000);
        // The walker saw 50,000 bytes; only 5,000 are there when the batch is read.
        batcher.addFile({ QFile::encodeName(path), 50000 });
        batcher.finish();
        QCOMPARE(batches.size(), size_t(1));
        const BatchFile &f = batches[0]->files[0];
        QCOMPARE(f.fileSize, int64_t(5000));
        QCOMPARE(f.ownEnd, int64_t(5000));
        QVERIFY(f.lastChunk);
        QCOMPARE(batches[0]->ownedBytes, int64_t(5000));
        int64_t owned = 0;
        for (const Segment &s : batches[0]->segments) {
            QVERIFY(s.ownEnd <= 5000 && s.scanEnd <= 5000);
            owned += s.ownEnd - s.ownBegin;
        }
        QCOMPARE(owned, int64_t(5000));
    }

    void unreadableFileIsReportedAndTheRestContinues()
    {
        QTemporaryDir tmp;
        const QString good = tmp.path() + QLatin1String("/good");
        QVERIFY(TestUtil::writeFile(good, "data"));
        std::vector<std::unique_ptr<FileBatch>> batches;
        Batcher batcher(
            0, [] { return std::make_unique<FileBatch>(); },
            [&](std::unique_ptr<FileBatch> b) { batches.push_back(std::move(b)); });
        batcher.addFile({ QFile::encodeName(tmp.path() + QLatin1String("/gone")), 10 });
        batcher.addFile({ QFile::encodeName(good), 4 });
        batcher.finish();
        QCOMPARE(batches.size(), size_t(1));
        QCOMPARE(batches[0]->problems.size(), size_t(1));
        QVERIFY(batches[0]->problems[0].path.endsWith("/gone"));
        QVERIFY(batches[0]->problems[0].reason.contains(QLatin1String("No such file")));
        QCOMPARE(batches[0]->files.size(), size_t(2));
        QVERIFY(batches[0]->files[0].failed);
        QVERIFY(batches[0]->segments.size() >= 1);
        for (const Segment &s : batches[0]->segments)
            QCOMPARE(s.batchFile, uint32_t(1));
        QVERIFY(!batches[0]->files[1].failed);
        QCOMPARE(batches[0]->files[1].fileSize, int64_t(4));
        QCOMPARE(batches[0]->ownedBytes, int64_t(4));
    }
};

QTEST_GUILESS_MAIN(TestBatcher)
#include "tst_batcher.moc"
