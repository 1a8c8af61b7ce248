// SPDX-License-Identifier: GPL-3.0-or-later
// The GUI's match previews: the bytes at each offset, cut at the preview size and at the file's end, in offset
// order (as hits come) and in any other, from a file larger than a read block; nothing from a missing file.
#include <algorithm>
#include <random>
#include <vector>

#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "report/previewreader.h"
#include "testutil.h"

using namespace Hitscope;

class TestPreviewReader : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsWhatTheFileHolds()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QRandomGenerator rng(7);
        QByteArray content(300 * 1024 + 123, Qt::Uninitialized);
        for (char &c : content)
            c = char(rng.bounded(256));
        const QString path = dir.filePath(QStringLiteral("f.bin"));
        QVERIFY(TestUtil::writeFile(path, content));

        struct Ask
        {
            int64_t offset, length;
            int max;
        };
        std::vector<Ask> asks;
        for (int k = 0; k < 3000; ++k)
            asks.push_back({ int64_t(rng.bounded(content.size() + 100)), int64_t(1 + rng.bounded(200)),
                             1 + int(rng.bounded(64)) });
        // Reads longer than a block, at the end, past the end, and right at block edges.
        asks.push_back({ 0, 200 * 1024, 200 * 1024 });
        asks.push_back({ 10, 100 * 1024, 90 * 1024 });
        asks.push_back({ content.size() - 5, 64, 64 });
        asks.push_back({ content.size(), 8, 8 });
        asks.push_back({ content.size() + 10, 8, 8 });
        asks.push_back({ 64 * 1024 - 3, 16, 16 });
        asks.push_back({ 128 * 1024 - 1, 2, 2 });
        for (int order = 0; order < 2; ++order) {
            if (order == 0)
                std::sort(asks.begin(), asks.end(), [](const Ask &a, const Ask &b) { return a.offset < b.offset; });
            else
                std::shuffle(asks.begin(), asks.end(), std::mt19937(3));
            const PreviewReader reader(QFile::encodeName(path));
            for (const Ask &a : asks) {
                const QByteArray want = a.offset >= content.size()
                                            ? QByteArray()
                                            : content.mid(a.offset, std::min<int64_t>(a.length, a.max));
                const QByteArray got = reader.read(a.offset, a.length, a.max);
                QVERIFY2(got == want, qPrintable(QStringLiteral("offset %1 length %2 max %3 order %4")
                                                      .arg(a.offset)
                                                      .arg(a.length)
                                                      .arg(a.max)
                                                      .arg(order)));
            }
        }
    }

    void missingFileGivesNothing()
    {
        const PreviewReader reader(QByteArrayLiteral("/nonexistent/hitscope/preview"));
        QVERIFY(reader.read(0, 16, 16).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestPreviewReader)
#include "tst_previewreader.moc"
