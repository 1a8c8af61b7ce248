// SPDX-License-Identifier: GPL-3.0-or-later
// The sizes the CLI's and the bench's options take ("512M"): a bench that read "512M" as 0 bytes made one batch
// per file and seemed to hang.
#include <QTest>

#include "util/bytesize.h"

class TestByteSize : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sizes_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<qint64>("bytes");
        QTest::newRow("plain") << QByteArray("4096") << true << qint64(4096);
        QTest::newRow("k") << QByteArray("256k") << true << qint64(256) * 1024;
        QTest::newRow("M") << QByteArray("512M") << true << (qint64(512) << 20);
        QTest::newRow("GiB") << QByteArray("1GiB") << true << (qint64(1) << 30);
        QTest::newRow("GB") << QByteArray("2GB") << true << (qint64(2) << 30);
        QTest::newRow("unknown suffix") << QByteArray("12x") << false << qint64(0);
        QTest::newRow("trailing text") << QByteArray("8Mx") << false << qint64(0);
        QTest::newRow("negative") << QByteArray("-1") << false << qint64(0);
        QTest::newRow("empty") << QByteArray("") << false << qint64(0);
    }

    void sizes()
    {
        QFETCH(QByteArray, text);
        QFETCH(bool, ok);
        QFETCH(qint64, bytes);
        int64_t got = -7;
        QCOMPARE(Hitscope::parseByteSize(text.constData(), &got), ok);
        if (ok)
            QCOMPARE(qint64(got), bytes);
        else
            QCOMPARE(qint64(got), qint64(-7)); // left alone
    }
};

QTEST_GUILESS_MAIN(TestByteSize)

#include "tst_bytesize.moc"
