// SPDX-License-Identifier: GPL-3.0-or-later
// RingReader reads a group of files as open(), fstat(), pread() and close() would: the same bytes, the same
// errors, nothing read from what is not a regular file, and every descriptor closed.
#include <cerrno>
#include <thread>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "scan/ringreader.h"
#include "testutil.h"

using namespace Hitscope;

namespace {

int openFds()
{
    return int(QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).size());
}

QByteArray randomBytes(int size, QRandomGenerator &rng)
{
    QByteArray data(size, Qt::Uninitialized);
    for (char &c : data)
        c = char(rng.bounded(256));
    return data;
}

// What one request should come back with.
struct Expected
{
    bool opened = true;
    int error = 0;
    QByteArray bytes; // what lands in the buffer (its size is `got`)
};

} // namespace

class TestRingReader : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        if (!RingReader::available())
            QSKIP("io_uring is not available to this process (old kernel, seccomp or kernel.io_uring_disabled)");
    }

    void groupOfFilesAndNonFiles()
    {
        QTemporaryDir tmp;
        QRandomGenerator rng(3);
        const QString dir = tmp.path();
        auto path = [&](const char *name) { return QFile::encodeName(dir + QLatin1Char('/') + QLatin1String(name)); };

        const QByteArray big = randomBytes(300000, rng);
        const QByteArray small = randomBytes(5000, rng);
        QVERIFY(TestUtil::writeFile(dir + QLatin1String("/big"), big));
        QVERIFY(TestUtil::writeFile(dir + QLatin1String("/small"), small));
        QVERIFY(TestUtil::writeFile(dir + QLatin1String("/empty"), QByteArray()));
        QVERIFY(::mkfifo(path("fifo").constData(), 0644) == 0);
        QVERIFY(::mkdir(path("folder").constData(), 0755) == 0);
        QVERIFY(::symlink(path("small").constData(), path("link").constData()) == 0);

        struct Case
        {
            QByteArray path;
            int flags;
            int64_t size;
            int64_t offset;
            Expected expected;
        };
        const int plain = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW;
        std::vector<Case> cases = {
            { path("big"), plain, 300000, 0, { true, 0, big } },
            { path("big"), plain, 1000, 123456, { true, 0, big.mid(123456, 1000) } },
            // Planned larger than the file is now: read up to its end.
            { path("small"), plain, 9000, 0, { true, 0, small } },
            { path("small"), plain, 100, 4950, { true, 0, small.mid(4950) } },
            { path("small"), plain, 100, 7000, { true, 0, QByteArray() } },
            { path("empty"), plain, 0, 0, { true, 0, QByteArray() } },
            { path("empty"), plain, 10, 0, { true, 0, QByteArray() } },
            { path("missing"), plain, 10, 0, { false, ENOENT, QByteArray() } },
            { path("fifo"), plain, 10, 0, { false, EINVAL, QByteArray() } },
            { path("folder"), plain, 10, 0, { false, EINVAL, QByteArray() } },
            { path("link"), plain, 10, 0, { false, ELOOP, QByteArray() } },
            { path("link"), plain & ~O_NOFOLLOW, 5000, 0, { true, 0, small } },
        };
        // A full group: the cases again, up to kGroup requests.
        while (cases.size() < size_t(RingReader::kGroup))
            cases.push_back(cases[cases.size() % 12]);

        std::vector<QByteArray> buffers;
        std::vector<RingReader::Request> requests;
        for (const Case &c : cases) {
            buffers.emplace_back(int(c.size), '\xee');
            RingReader::Request r;
            r.path = c.path.constData();
            r.openFlags = c.flags;
            r.dst = reinterpret_cast<uint8_t *>(buffers.back().data());
            r.size = c.size;
            r.offset = c.offset;
            requests.push_back(r);
        }
        RingReader *reader = RingReader::forThisThread(); // its ring is a descriptor of its own, kept
        QVERIFY(reader);
        const int fds = openFds();
        const int64_t before = RingReader::requestsRead();
        reader->read(requests);
        QCOMPARE(RingReader::requestsRead() - before, int64_t(requests.size()));
        QCOMPARE(openFds(), fds);

        for (size_t i = 0; i < cases.size(); ++i) {
            const Case &c = cases[i];
            const RingReader::Request &r = requests[i];
            const QByteArray what = QByteArray(c.path + " at " + QByteArray::number(c.offset));
            QVERIFY2(r.opened == c.expected.opened, what.constData());
            QVERIFY2(r.error == c.expected.error, QByteArray(what + ": " + QByteArray::number(r.error)).constData());
            if (!r.opened)
                continue;
            QVERIFY2(r.got == c.expected.bytes.size(), what.constData());
            QVERIFY2(buffers[i].left(int(r.got)) == c.expected.bytes, what.constData());
            // Nothing is written past what the file had.
            QVERIFY(std::all_of(buffers[i].begin() + r.got, buffers[i].end(), [](char ch) { return ch == '\xee'; }));
        }
    }

    void openThenReadFromTheDescriptors_data()
    {
        QTest::addColumn<bool>("ring");
        QTest::newRow("ring") << true;
        QTest::newRow("plain calls") << false;
    }

    void openThenReadFromTheDescriptors()
    {
        // open() sizes files the walk did not stat and keeps them open; read() then reads those descriptors, not
        // the paths (which may name other files by then), and closes them.
        QFETCH(bool, ring);
        QTemporaryDir tmp;
        QRandomGenerator rng(4);
        const QString dir = tmp.path();
        auto path = [&](const char *name) { return QFile::encodeName(dir + QLatin1Char('/') + QLatin1String(name)); };
        const QByteArray small = randomBytes(7000, rng);
        const QByteArray big = randomBytes(250000, rng);
        QVERIFY(TestUtil::writeFile(dir + QLatin1String("/small"), small));
        QVERIFY(TestUtil::writeFile(dir + QLatin1String("/big"), big));
        QVERIFY(TestUtil::writeFile(dir + QLatin1String("/empty"), QByteArray()));
        QVERIFY(::mkfifo(path("fifo").constData(), 0644) == 0);
        QVERIFY(::mkdir(path("folder").constData(), 0755) == 0);
        QVERIFY(::symlink(path("small").constData(), path("link").constData()) == 0);

        const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW;
        struct Case
        {
            QByteArray path;
            int error;
            QByteArray bytes;
        };
        std::vector<Case> cases = {
            { path("small"), 0, small },   { path("big"), 0, big },        { path("empty"), 0, QByteArray() },
            { path("missing"), ENOENT, {} }, { path("fifo"), EINVAL, {} }, { path("folder"), EINVAL, {} },
            { path("link"), ELOOP, {} },
        };
        // More than a group: open() takes them kGroup at a time.
        while (cases.size() < size_t(RingReader::kGroup) + 5)
            cases.push_back(cases[cases.size() % 7]);
        std::vector<RingReader::Opening> openings;
        for (const Case &c : cases) {
            RingReader::Opening o;
            o.path = c.path.constData();
            o.openFlags = flags;
            openings.push_back(o);
        }
        RingReader *reader = RingReader::forThisThread();
        QVERIFY(reader);
        const int fds = openFds();
        const int64_t before = RingReader::requestsRead();
        if (ring)
            reader->open(openings);
        else
            RingReader::openPlain(openings);
        QCOMPARE(RingReader::requestsRead() - before, ring ? int64_t(cases.size()) : 0);

        int opened = 0;
        for (size_t i = 0; i < cases.size(); ++i) {
            const QByteArray what = cases[i].path + ": " + QByteArray::number(openings[i].error);
            QVERIFY2(openings[i].error == cases[i].error, what.constData());
            QVERIFY2((openings[i].fd >= 0) == (cases[i].error == 0), what.constData());
            if (openings[i].fd < 0)
                continue;
            ++opened;
            QCOMPARE(openings[i].size, int64_t(cases[i].bytes.size()));
        }
        // The regular files, and nothing else, are held open.
        QCOMPARE(openFds(), fds + opened);

        // Their paths now name other files: the reads still get the bytes that were opened.
        QVERIFY(QFile::remove(dir + QLatin1String("/small")));
        QVERIFY(TestUtil::writeFile(dir + QLatin1String("/small"), QByteArray(7000, 'x')));
        std::vector<QByteArray> buffers;
        std::vector<RingReader::Request> requests;
        std::vector<size_t> caseOf;
        for (size_t i = 0; i < cases.size(); ++i) {
            if (openings[i].fd < 0)
                continue;
            buffers.emplace_back(int(openings[i].size) + 16, '\xee');
            RingReader::Request r;
            r.path = cases[i].path.constData();
            r.openFlags = flags;
            r.fd = openings[i].fd;
            r.dst = reinterpret_cast<uint8_t *>(buffers.back().data());
            r.size = openings[i].size;
            requests.push_back(r);
            caseOf.push_back(i);
        }
        reader->read(requests);
        QCOMPARE(openFds(), fds);
        for (size_t k = 0; k < requests.size(); ++k) {
            const RingReader::Request &r = requests[k];
            QVERIFY(r.opened);
            QCOMPARE(r.error, 0);
            QCOMPARE(r.got, int64_t(cases[caseOf[k]].bytes.size()));
            QVERIFY(buffers[k].left(int(r.got)) == cases[caseOf[k]].bytes);
        }
    }

    void filesNotInThePageCache()
    {
        // Files read from the disk, not the page cache: a kernel may leave part of them unread for a file opened
        // O_NONBLOCK (6.18 does not), and the rest must still arrive; the reads that stop short at a file's end
        // (groupOfFilesAndNonFiles) take the same plain-call path. Dropping the cache needs a file system that
        // has one to drop (not tmpfs).
        QTemporaryDir tmp(QDir::currentPath() + QLatin1String("/ringreader-XXXXXX"));
        QVERIFY(tmp.isValid());
        QRandomGenerator rng(9);
        std::vector<QByteArray> contents;
        std::vector<QByteArray> paths;
        for (int i = 0; i < RingReader::kGroup; ++i) {
            contents.push_back(randomBytes(1 + int(rng.bounded(200000)), rng));
            paths.push_back(QFile::encodeName(tmp.path() + QStringLiteral("/f%1").arg(i)));
            QVERIFY(TestUtil::writeFile(QFile::decodeName(paths.back()), contents.back()));
        }
        ::sync();
        for (const QByteArray &p : paths) {
            const int fd = ::open(p.constData(), O_RDONLY | O_CLOEXEC);
            QVERIFY(fd >= 0);
            QCOMPARE(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
            ::close(fd);
        }
        std::vector<QByteArray> buffers;
        std::vector<RingReader::Request> requests;
        for (size_t i = 0; i < paths.size(); ++i) {
            buffers.emplace_back(contents[i].size(), '\0');
            RingReader::Request r;
            r.path = paths[i].constData();
            r.openFlags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW;
            r.dst = reinterpret_cast<uint8_t *>(buffers.back().data());
            r.size = contents[i].size();
            requests.push_back(r);
        }
        RingReader::forThisThread()->read(requests);
        for (size_t i = 0; i < paths.size(); ++i) {
            QVERIFY(requests[i].opened);
            QCOMPARE(requests[i].got, int64_t(contents[i].size()));
            QVERIFY(buffers[i] == contents[i]);
        }
    }

    void failedSetUpClosesNothing()
    {
        // A thread whose ring cannot be set up (here: no descriptor left) gets no reader, and closes nothing:
        // a failed set-up leaves liburing's descriptor field at 0, which is some file's number.
        if (::fcntl(0, F_GETFD) < 0)
            QVERIFY(::open("/dev/null", O_RDONLY) == 0);
        const QStringList before = QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::Files | QDir::System);
        struct rlimit saved;
        QVERIFY(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
        RingReader *reader = reinterpret_cast<RingReader *>(1);
        std::thread([&] {
            struct rlimit none = saved;
            none.rlim_cur = 0;
            ::setrlimit(RLIMIT_NOFILE, &none);
            reader = RingReader::forThisThread();
            ::setrlimit(RLIMIT_NOFILE, &saved);
        }).join();
        QVERIFY(reader == nullptr);
        QCOMPARE(::fcntl(0, F_GETFD) >= 0, true);
        QCOMPARE(QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::Files | QDir::System), before);
    }

    void moreThanAGroupAndReusedRequests()
    {
        QTemporaryDir tmp;
        QRandomGenerator rng(5);
        std::vector<QByteArray> contents;
        std::vector<QByteArray> paths;
        const int count = 3 * RingReader::kGroup + 5;
        for (int i = 0; i < count; ++i) {
            contents.push_back(randomBytes(int(rng.bounded(3000)), rng));
            paths.push_back(QFile::encodeName(tmp.path() + QStringLiteral("/f%1").arg(i)));
            QVERIFY(TestUtil::writeFile(QFile::decodeName(paths.back()), contents.back()));
        }
        std::vector<QByteArray> buffers;
        std::vector<RingReader::Request> requests(size_t(count), RingReader::Request {});
        for (int i = 0; i < count; ++i) {
            buffers.emplace_back(4000, '\0');
            RingReader::Request &r = requests[size_t(i)];
            r.path = paths[size_t(i)].constData();
            r.openFlags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW;
            r.dst = reinterpret_cast<uint8_t *>(buffers.back().data());
            r.size = 4000;
        }
        RingReader *reader = RingReader::forThisThread();
        const int fds = openFds();
        reader->read(requests);
        QCOMPARE(openFds(), fds);
        for (int i = 0; i < count; ++i) {
            QVERIFY(requests[size_t(i)].opened);
            QCOMPARE(requests[size_t(i)].got, int64_t(contents[size_t(i)].size()));
            QVERIFY(buffers[size_t(i)].left(contents[size_t(i)].size()) == contents[size_t(i)]);
        }
        // The same requests again after every other file went away: nothing of the first read is left over.
        for (int i = 0; i < count; i += 2)
            QVERIFY(QFile::remove(QFile::decodeName(paths[size_t(i)])));
        reader->read(requests);
        QCOMPARE(openFds(), fds);
        for (int i = 0; i < count; ++i) {
            const RingReader::Request &r = requests[size_t(i)];
            QCOMPARE(r.opened, i % 2 == 1);
            QCOMPARE(r.error, i % 2 == 1 ? 0 : ENOENT);
            QCOMPARE(r.got, i % 2 == 1 ? int64_t(contents[size_t(i)].size()) : int64_t(0));
        }
    }

    void oneReaderPerThread()
    {
        RingReader *mine = RingReader::forThisThread();
        QVERIFY(mine);
        QCOMPARE(RingReader::forThisThread(), mine);
        RingReader *theirs = nullptr;
        std::thread([&] { theirs = RingReader::forThisThread(); }).join();
        QVERIFY(theirs);
        QVERIFY(theirs != mine);
    }
};

QTEST_GUILESS_MAIN(TestRingReader)
#include "tst_ringreader.moc"
