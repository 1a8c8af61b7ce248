// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include <fcntl.h>
#include <fnmatch.h>
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "scan/filewalker.h"
#include "scan/folderlister.h"
#include "scan/walkahead.h"

using namespace Hitscope;

namespace {

struct WalkResult
{
    QByteArrayList files; ///< relative to the temporary folder
    QList<int64_t> sizes;
    QStringList problems; ///< "relative path: reason"
};

/// Root normally reads everything; clearing the DAC override capabilities of this thread makes file modes
/// count again, so that permission errors can be tested under root too. Restored on destruction.
class DacOverrideDrop
{
public:
    DacOverrideDrop()
    {
        if (::syscall(SYS_capget, &m_header, m_saved) != 0)
            return;
        __user_cap_data_struct dropped[2] = { m_saved[0], m_saved[1] };
        dropped[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
        m_active = ::syscall(SYS_capset, &m_header, dropped) == 0;
    }
    ~DacOverrideDrop()
    {
        if (m_active)
            ::syscall(SYS_capset, &m_header, m_saved);
    }
    bool isActive() const { return m_active; }

private:
    __user_cap_header_struct m_header { _LINUX_CAPABILITY_VERSION_3, 0 };
    __user_cap_data_struct m_saved[2] {};
    bool m_active = false;
};

} // namespace

class TestFileWalker : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void pathsJoinedLikeYara();
    void sortedOrderAndSizes();
    void rootsInGivenOrder();
    void globs_data();
    void globs();
    void maxFileSize_data();
    void maxFileSize();
    void specialFilesNeverBlock();
    void symlinks_data();
    void symlinks();
    void unreadable_data();
    void unreadable();
    void nonUtf8Name();
    void missingRoot();
    void vanishedEntry();
    void cancellation();
    void foldersListedAheadGiveTheSameWalk_data();
    void foldersListedAheadGiveTheSameWalk();
    void cancellationWhileFoldersAreListedAhead();
    void listerWithinItsLimitsListsEveryFolder();
    void walkAheadKeepsOrderAndCountsBytesLeft();
    void regularFilesLeftUnsizedWhenAsked();
    void problemToString();

private:
    QByteArray path(const QByteArray &relative) const { return m_base + '/' + relative; }
    void makeDir(const QByteArray &relative);
    void makeFile(const QByteArray &relative, const QByteArray &data = {});
    void makeLink(const QByteArray &relative, const QByteArray &target);
    WalkResult walk(const QByteArrayList &relativeRoots, const WalkOptions &options = {},
                    const std::atomic_bool *cancelled = nullptr) const;

    std::unique_ptr<QTemporaryDir> m_dir;
    QByteArray m_base;
    QByteArrayList m_restoreModes; ///< folders made unreadable by a test, given back 0755 in cleanup()
};

void TestFileWalker::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_base = QFile::encodeName(m_dir->path());
}

void TestFileWalker::cleanup()
{
    for (const QByteArray &p : std::as_const(m_restoreModes))
        ::chmod(p.constData(), 0755);
    m_restoreModes.clear();
    m_dir.reset();
}

void TestFileWalker::makeDir(const QByteArray &relative)
{
    QVERIFY2(::mkdir(path(relative).constData(), 0755) == 0, relative.constData());
}

void TestFileWalker::makeFile(const QByteArray &relative, const QByteArray &data)
{
    const int fd = ::open(path(relative).constData(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    QVERIFY2(fd >= 0, relative.constData());
    const bool written = ::write(fd, data.constData(), size_t(data.size())) == data.size();
    ::close(fd);
    QVERIFY(written);
}

void TestFileWalker::makeLink(const QByteArray &relative, const QByteArray &target)
{
    QVERIFY2(::symlink(target.constData(), path(relative).constData()) == 0, relative.constData());
}

WalkResult TestFileWalker::walk(const QByteArrayList &relativeRoots, const WalkOptions &options,
                                const std::atomic_bool *cancelled) const
{
    const QByteArray prefix = m_base + '/';
    // A root given as "dir/" yields "dir//name", as yara -r prints it; compare relative names here.
    const auto relative = [&](const QByteArray &p) {
        QByteArray r = p.startsWith(prefix) ? p.mid(prefix.size()) : p;
        while (r.startsWith('/') && p.startsWith(prefix))
            r.remove(0, 1);
        return r;
    };
    QByteArrayList roots;
    for (const QByteArray &r : relativeRoots)
        roots << (r.startsWith('/') ? r : path(r));
    WalkResult result;
    FileWalker(options).walk(
        roots,
        [&](const FileEntry &e) {
            result.files << relative(e.path);
            result.sizes << e.size;
        },
        [&](const FileProblem &p) {
            result.problems << QFile::decodeName(relative(p.path)) + QLatin1String(": ") + p.reason;
        },
        cancelled);
    return result;
}

void TestFileWalker::pathsJoinedLikeYara()
{
    makeDir("d");
    makeFile("d/f", "x");
    QByteArrayList seen;
    FileWalker().walk({ path("d/"), path("d") }, [&](const FileEntry &e) { seen << e.path; }, [](const FileProblem &) {});
    QCOMPARE(seen, QByteArrayList({ path("d//f"), path("d/f") }));
}

void TestFileWalker::sortedOrderAndSizes()
{
    makeFile("b.txt", "bbb");
    makeDir("a");
    makeFile("a/z.bin", "z");
    makeFile("a/empty.txt");
    makeDir("a/sub");
    makeFile("a/sub/deep", "12345");
    makeFile("A.txt", "AA");
    makeFile("c", "c");

    const WalkResult r = walk({ "" });
    // Byte order: upper case before lower case, folders in place among files, depth first.
    QCOMPARE(r.files, QByteArrayList({ "A.txt", "a/empty.txt", "a/sub/deep", "a/z.bin", "b.txt", "c" }));
    QCOMPARE(r.sizes, QList<int64_t>({ 2, 0, 5, 1, 3, 1 }));
    QVERIFY2(r.problems.isEmpty(), qPrintable(r.problems.join(QLatin1Char('\n'))));
}

void TestFileWalker::rootsInGivenOrder()
{
    makeDir("one");
    makeFile("one/x", "x");
    makeDir("two");
    makeFile("two/y", "y");
    makeFile("single", "s");

    const WalkResult r = walk({ "two", "single", "one" });
    QCOMPARE(r.files, QByteArrayList({ "two/y", "single", "one/x" }));
}

void TestFileWalker::globs_data()
{
    QTest::addColumn<QStringList>("include");
    QTest::addColumn<QStringList>("exclude");
    QTest::addColumn<QByteArrayList>("expected");

    const QByteArrayList all { "keep/a.log", "keep/a.txt", "node_modules/m.txt", "top.TXT", "top.txt" };
    QTest::addRow("no globs: every file") << QStringList() << QStringList() << all;
    QTest::addRow("include by suffix, case matters")
        << QStringList { QStringLiteral("*.txt") } << QStringList()
        << QByteArrayList { "keep/a.txt", "node_modules/m.txt", "top.txt" };
    QTest::addRow("several includes") << QStringList { QStringLiteral("*.txt"), QStringLiteral("*.TXT") }
                                      << QStringList()
                                      << QByteArrayList { "keep/a.txt", "node_modules/m.txt", "top.TXT", "top.txt" };
    QTest::addRow("exclude files") << QStringList() << QStringList { QStringLiteral("*.log") }
                                   << QByteArrayList { "keep/a.txt", "node_modules/m.txt", "top.TXT", "top.txt" };
    QTest::addRow("exclude prunes a folder") << QStringList() << QStringList { QStringLiteral("node_modules") }
                                             << QByteArrayList { "keep/a.log", "keep/a.txt", "top.TXT", "top.txt" };
    QTest::addRow("exclude wins over include")
        << QStringList { QStringLiteral("*.txt") } << QStringList { QStringLiteral("top.*"), QStringLiteral("node_*") }
        << QByteArrayList { "keep/a.txt" };
    QTest::addRow("include does not filter folders")
        << QStringList { QStringLiteral("a.*") } << QStringList() << QByteArrayList { "keep/a.log", "keep/a.txt" };
    QTest::addRow("character class") << QStringList { QStringLiteral("top.[T]*") } << QStringList()
                                     << QByteArrayList { "top.TXT" };
}

void TestFileWalker::globs()
{
    QFETCH(QStringList, include);
    QFETCH(QStringList, exclude);
    QFETCH(QByteArrayList, expected);

    makeDir("keep");
    makeFile("keep/a.txt", "1");
    makeFile("keep/a.log", "2");
    makeDir("node_modules");
    makeFile("node_modules/m.txt", "3");
    makeFile("top.txt", "4");
    makeFile("top.TXT", "5");

    WalkOptions options;
    options.include = include;
    options.exclude = exclude;
    const WalkResult r = walk({ "" }, options);
    QCOMPARE(r.files, expected);
    QVERIFY(r.problems.isEmpty());

    // Every entry is seen, also those the globs leave out (Scanner hands on read batches meanwhile).
    int entries = 0;
    FileWalker walker(options);
    walker.setOnEntry([&] { ++entries; });
    walker.walk({ m_base }, [](const FileEntry &) {}, [](const FileProblem &) {});
    // keep, its two files, node_modules and its file unless excluded (a pruned folder is not entered), top.txt
    // and top.TXT.
    const bool pruned = std::any_of(exclude.begin(), exclude.end(), [](const QString &g) {
        return fnmatch(QFile::encodeName(g).constData(), "node_modules", 0) == 0;
    });
    QCOMPARE(entries, pruned ? 6 : 7);
}

void TestFileWalker::maxFileSize_data()
{
    QTest::addColumn<qint64>("limit");
    QTest::addColumn<QByteArrayList>("expected");
    QTest::addColumn<QStringList>("problems");

    QTest::addRow("no limit") << qint64(-1) << QByteArrayList { "empty", "four", "three" } << QStringList();
    QTest::addRow("limit is inclusive") << qint64(3) << QByteArrayList { "empty", "three" }
                                        << QStringList { QStringLiteral(
                                               "four: larger than --max-file-size (3 bytes)") };
    QTest::addRow("zero keeps empty files")
        << qint64(0) << QByteArrayList { "empty" }
        << QStringList { QStringLiteral("four: larger than --max-file-size (0 bytes)"),
                         QStringLiteral("three: larger than --max-file-size (0 bytes)") };
}

void TestFileWalker::maxFileSize()
{
    QFETCH(qint64, limit);
    QFETCH(QByteArrayList, expected);
    QFETCH(QStringList, problems);

    makeFile("empty");
    makeFile("three", "123");
    makeFile("four", "1234");

    WalkOptions options;
    options.maxFileSize = limit;
    const WalkResult r = walk({ "" }, options);
    QCOMPARE(r.files, expected);
    QCOMPARE(r.problems, problems);
}

void TestFileWalker::specialFilesNeverBlock()
{
    makeFile("a.txt", "a");
    QVERIFY(::mkfifo(path("fifo").constData(), 0644) == 0);
    makeFile("z.txt", "z");

    const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
    QVERIFY(sock >= 0);
    sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    const QByteArray sockPath = path("sock");
    QVERIFY(size_t(sockPath.size()) < sizeof(addr.sun_path));
    std::memcpy(addr.sun_path, sockPath.constData(), size_t(sockPath.size()));
    const bool bound = ::bind(sock, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr)) == 0;
    ::close(sock);
    QVERIFY(bound);

    // Opening a FIFO for reading blocks until a writer comes: run the walk aside and, should it hang,
    // release it by opening the FIFO ourselves, so that the test fails instead of hanging.
    std::packaged_task<WalkResult()> task([&] { return walk({ "", "/dev/null" }); });
    std::future<WalkResult> done = task.get_future();
    std::thread worker(std::move(task));
    const bool finished = done.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    if (!finished) {
        const int fd = ::open(path("fifo").constData(), O_RDWR | O_NONBLOCK);
        done.wait();
        if (fd >= 0)
            ::close(fd);
    }
    worker.join();
    QVERIFY2(finished, "the walk blocked on a FIFO");

    const WalkResult r = done.get();
    QCOMPARE(r.files, QByteArrayList({ "a.txt", "z.txt" }));
    QCOMPARE(r.problems,
             QStringList({ QStringLiteral("fifo: not a regular file (FIFO)"),
                           QStringLiteral("sock: not a regular file (socket)"),
                           QStringLiteral("/dev/null: not a regular file (character device)") }));
}

void TestFileWalker::symlinks_data()
{
    QTest::addColumn<bool>("follow");
    QTest::addColumn<QByteArray>("root");
    QTest::addColumn<QByteArrayList>("expected");
    QTest::addColumn<QStringList>("problems");

    QTest::addRow("inside a folder, not followed: skipped quietly")
        << false << QByteArray("tree") << QByteArrayList { "tree/a.txt", "tree/dir/b.txt" } << QStringList();
    QTest::addRow("inside a folder, followed: loops reported")
        << true << QByteArray("tree") << QByteArrayList { "tree/a.txt", "tree/dir/b.txt", "tree/filelink" }
        << QStringList { QStringLiteral("tree/broken: broken symbolic link"),
                         QStringLiteral("tree/dir/self: symlink loop"), QStringLiteral("tree/dir/up: symlink loop") };
    QTest::addRow("as a root, not followed: reported")
        << false << QByteArray("rootlink") << QByteArrayList()
        << QStringList { QStringLiteral("rootlink: symbolic link not followed") };
    QTest::addRow("as a root, followed") << true << QByteArray("rootlink")
                                         << QByteArrayList { "rootlink/a.txt", "rootlink/dir/b.txt",
                                                             "rootlink/filelink" }
                                         << QStringList { QStringLiteral("rootlink/broken: broken symbolic link"),
                                                          QStringLiteral("rootlink/dir/self: symlink loop"),
                                                          QStringLiteral("rootlink/dir/up: symlink loop") };
    QTest::addRow("file link as a root, followed")
        << true << QByteArray("tree/filelink") << QByteArrayList { "tree/filelink" } << QStringList();
}

void TestFileWalker::symlinks()
{
    QFETCH(bool, follow);
    QFETCH(QByteArray, root);
    QFETCH(QByteArrayList, expected);
    QFETCH(QStringList, problems);

    makeDir("tree");
    makeFile("tree/a.txt", "a");
    makeDir("tree/dir");
    makeFile("tree/dir/b.txt", "bb");
    makeLink("tree/dir/up", "..");
    makeLink("tree/dir/self", ".");
    makeLink("tree/filelink", "a.txt");
    makeLink("tree/broken", "nowhere");
    makeLink("rootlink", "tree");

    WalkOptions options;
    options.followSymlinks = follow;
    const WalkResult r = walk({ root }, options);
    QCOMPARE(r.files, expected);
    QCOMPARE(r.problems, problems);
}

void TestFileWalker::unreadable_data()
{
    QTest::addColumn<QByteArray>("locked");
    QTest::addRow("file") << QByteArray("locked.txt");
    QTest::addRow("folder") << QByteArray("locked");
}

void TestFileWalker::unreadable()
{
    QFETCH(QByteArray, locked);

    makeFile("a.txt", "a");
    if (locked.endsWith(".txt")) {
        makeFile(locked, "secret");
    } else {
        makeDir(locked);
        makeFile(locked + "/inside.txt", "secret");
    }
    makeFile("z.txt", "z");
    QVERIFY(::chmod(path(locked).constData(), 0) == 0);
    m_restoreModes << path(locked);

    // Under root the mode bits alone deny nothing; without the override capabilities they do.
    std::unique_ptr<DacOverrideDrop> drop;
    if (::geteuid() == 0) {
        drop = std::make_unique<DacOverrideDrop>();
        if (!drop->isActive())
            QSKIP("running as root and CAP_DAC_OVERRIDE cannot be dropped here: modes deny nothing");
    }
    if (const int probe = ::open(path(locked).constData(), O_RDONLY); probe >= 0) {
        ::close(probe);
        QSKIP("this process can open a path with mode 000 here, so no permission error can be produced");
    }

    const WalkResult r = walk({ "" });
    drop.reset();
    QCOMPARE(r.files, QByteArrayList({ "a.txt", "z.txt" }));
    QCOMPARE(r.problems, QStringList { QFile::decodeName(locked) + QLatin1String(": permission denied") });
}

void TestFileWalker::nonUtf8Name()
{
    const QByteArray name("caf\xe9.txt");
    makeFile(name, "latin-1 name");
    makeFile("plain.txt", "p");

    WalkOptions options;
    options.include = QStringList { QStringLiteral("*.txt") };
    const WalkResult r = walk({ "" }, options);
    QCOMPARE(r.files, QByteArrayList({ name, "plain.txt" }));
    QCOMPARE(r.sizes.first(), int64_t(12));

    // The reported bytes name the very file, so a scanner can open it.
    const QByteArray reported = path(r.files.first());
    QVERIFY(::access(reported.constData(), R_OK) == 0);
    const FileEntry entry { reported, 0 };
    QVERIFY(entry.displayPath().endsWith(QStringLiteral("/caf\uFFFD.txt")));
    // QTemporaryDir removes through QString names, which cannot spell this one.
    QVERIFY(::unlink(reported.constData()) == 0);
}

void TestFileWalker::missingRoot()
{
    makeFile("here.txt", "h");
    const WalkResult r = walk({ "nothing", "here.txt", "here.txt/below" });
    QCOMPARE(r.files, QByteArrayList({ "here.txt" }));
    QCOMPARE(
        r.problems,
        QStringList({ QStringLiteral("nothing: does not exist"), QStringLiteral("here.txt/below: does not exist") }));
}

void TestFileWalker::vanishedEntry()
{
    makeFile("a", "a");
    makeFile("b", "b");
    makeFile("c", "c");

    // Names are listed before they are examined: deleting "b" while "a" is reported makes it vanish mid-walk.
    QByteArrayList files;
    QStringList problems;
    const QByteArray victim = path("b");
    FileWalker().walk(
        { m_base },
        [&](const FileEntry &e) {
            files << e.path;
            if (e.path.endsWith("/a"))
                ::unlink(victim.constData());
        },
        [&](const FileProblem &p) { problems << p.toString(); });
    QCOMPARE(files, QByteArrayList({ path("a"), path("c") }));
    QCOMPARE(problems, QStringList { QFile::decodeName(victim) + QLatin1String(": vanished during the walk") });
}

void TestFileWalker::cancellation()
{
    makeDir("d");
    makeFile("d/1", "1");
    makeFile("d/2", "2");
    makeFile("e", "e");

    std::atomic_bool cancelled = false;
    int seen = 0;
    FileWalker().walk(
        { path("d"), path("e") },
        [&](const FileEntry &) {
            ++seen;
            cancelled = true;
        },
        [](const FileProblem &) {}, &cancelled);
    QCOMPARE(seen, 1);
}

void TestFileWalker::foldersListedAheadGiveTheSameWalk_data()
{
    QTest::addColumn<bool>("follow");
    QTest::addColumn<QStringList>("include");
    QTest::addColumn<QStringList>("exclude");
    QTest::addRow("plain") << false << QStringList() << QStringList();
    QTest::addRow("links followed") << true << QStringList() << QStringList();
    QTest::addRow("globs") << false << QStringList { QStringLiteral("*.txt") } << QStringList { QStringLiteral("x*") };
}

void TestFileWalker::foldersListedAheadGiveTheSameWalk()
{
    QFETCH(bool, follow);
    QFETCH(QStringList, include);
    QFETCH(QStringList, exclude);
    // A random tree, wide and deep, with links to files and folders (a loop among them) and a FIFO.
    QRandomGenerator rng(77);
    QByteArrayList folders { "t" };
    makeDir("t");
    for (int i = 0; i < 400; ++i) {
        const QByteArray parent = folders[int(rng.bounded(folders.size()))];
        const QByteArray name = (rng.bounded(5) == 0 ? "x" : "d") + QByteArray::number(i);
        folders << parent + '/' + name;
        makeDir(folders.back());
    }
    for (int i = 0; i < 3000; ++i) {
        const QByteArray parent = folders[int(rng.bounded(folders.size()))];
        makeFile(parent + "/f" + QByteArray::number(i) + (i % 3 == 0 ? ".txt" : ".bin"),
                 QByteArray(int(rng.bounded(100)), 'a'));
    }
    makeLink("t/up", ".");
    makeLink(folders[7] + "/loop", "../..");
    makeLink(folders[9] + "/file", path(folders[3]) + "/nothing-here");
    makeLink(folders[11] + "/dirlink", path(folders[12]));
    QVERIFY(::mkfifo(path(folders[5] + "/fifo").constData(), 0644) == 0);

    WalkOptions options;
    options.followSymlinks = follow;
    options.include = include;
    options.exclude = exclude;
    const WalkResult inline_ = walk({ "t" }, options);
    QVERIFY2(inline_.files.size() > 100, QByteArray::number(inline_.files.size()).constData());
    QVERIFY(!inline_.problems.isEmpty() || !include.isEmpty()); // the FIFO, unless filtered out
    for (int threads : { 1, 4 }) {
        options.listThreads = threads;
        const WalkResult ahead = walk({ "t" }, options);
        QCOMPARE(ahead.files, inline_.files);
        QCOMPARE(ahead.sizes, inline_.sizes);
        QCOMPARE(ahead.problems, inline_.problems);
    }
}

void TestFileWalker::cancellationWhileFoldersAreListedAhead()
{
    for (int i = 0; i < 50; ++i) {
        const QByteArray d = "d" + QByteArray::number(i);
        makeDir(d);
        for (int k = 0; k < 20; ++k)
            makeFile(d + "/f" + QByteArray::number(k), "x");
    }
    WalkOptions options;
    options.listThreads = 4;
    std::atomic_bool cancelled = false;
    int seen = 0;
    FileWalker(options).walk(
        { path("") },
        [&](const FileEntry &) {
            if (++seen == 30)
                cancelled = true;
        },
        [](const FileProblem &) {}, &cancelled);
    QCOMPARE(seen, 30);
}

void TestFileWalker::listerWithinItsLimitsListsEveryFolder()
{
    // Workers that may hold only two folders or five entries ahead still hand over every folder whole, in
    // whatever order the walk takes them.
    QByteArrayList folders { "r" };
    makeDir("r");
    for (int i = 0; i < 30; ++i) {
        folders << folders[i / 3] + "/s" + QByteArray::number(i);
        makeDir(folders.back());
        for (int k = 0; k < i % 7; ++k)
            makeFile(folders.back() + "/f" + QByteArray::number(k), "x");
    }
    FolderLister lister(3, {}, nullptr, 0, 2, 5);
    std::vector<std::pair<dev_t, ino_t>> ancestors;
    int taken = 0;
    std::function<void(const QByteArray &, const struct stat &)> walkFolder = [&](const QByteArray &p,
                                                                                 const struct stat &st) {
        const FolderListing ahead = lister.take(p, { st.st_dev, st.st_ino }, ancestors);
        const FolderListing here = FolderLister::list(p);
        ++taken;
        QCOMPARE(ahead.error, 0);
        QCOMPARE(ahead.entries.size(), here.entries.size());
        ancestors.push_back({ st.st_dev, st.st_ino });
        for (size_t i = 0; i < ahead.entries.size(); ++i) {
            QCOMPARE(ahead.entries[i].name, here.entries[i].name);
            QCOMPARE(ahead.entries[i].st.st_ino, here.entries[i].st.st_ino);
            if (S_ISDIR(ahead.entries[i].st.st_mode))
                walkFolder(p + '/' + ahead.entries[i].name, ahead.entries[i].st);
        }
        ancestors.pop_back();
    };
    struct stat root;
    QVERIFY(::lstat(path("r").constData(), &root) == 0);
    walkFolder(path("r"), root);
    QCOMPARE(taken, 31);
}

void TestFileWalker::walkAheadKeepsOrderAndCountsBytesLeft()
{
    makeDir("d");
    makeFile("d/1", "1");
    makeFile("d/22", "22");
    makeDir("d/sub");
    makeFile("d/sub/333", "333");
    makeFile("e4", "eeee");
    const WalkResult plain = walk({ "d", "missing", "e4" });
    QCOMPARE(plain.problems.size(), 1);

    // At most two items wait: the walk pauses for the taker, and every item still comes once, in order.
    std::atomic_bool cancelled = false;
    WalkAhead ahead({ path("d"), path("missing"), path("e4") }, WalkOptions {}, &cancelled, 2);
    QByteArrayList files;
    QList<int64_t> left;
    int problems = 0;
    WalkAhead::Item item;
    for (;;) {
        const WalkAhead::Next n = ahead.next(item, 30000);
        QVERIFY(n != WalkAhead::Next::Waiting);
        if (n == WalkAhead::Next::End)
            break;
        if (!item.file) {
            QVERIFY(item.problem.path.endsWith("missing"));
            ++problems;
            continue;
        }
        files << item.file->path.mid(m_base.size() + 1);
        // With the third file taken, the rest (a problem and a file) fits in two: the walk can end, and the
        // bytes after each file are exact from then on.
        QTRY_VERIFY(ahead.bytesAhead() >= 0 || files.size() < 3);
        left << ahead.bytesAhead();
    }
    QCOMPARE(files, plain.files);
    QCOMPARE(problems, 1);
    QCOMPARE(ahead.bytesAhead(), 0);
    // The last files are taken after the walk ended: what they leave is what follows them.
    QCOMPARE(left.back(), 0);
    QCOMPARE(left[left.size() - 2], 4);

    // Cancelled, the walk stops early and the taker sees its end.
    makeDir("many");
    for (int i = 0; i < 200; ++i)
        makeFile("many/" + QByteArray::number(i), "x");
    std::atomic_bool stop = false;
    WalkAhead cut({ path("many") }, WalkOptions {}, &stop, 4);
    // Four items wait and the walk pauses: it cannot have ended.
    QTest::qWait(50);
    QCOMPARE(cut.bytesAhead(), int64_t(-1));
    QCOMPARE(cut.next(item, 30000), WalkAhead::Next::Item);
    stop = true;
    int more = 0;
    while (cut.next(item, 30000) == WalkAhead::Next::Item)
        ++more;
    QVERIFY2(more < 199, "the walk went on after the cancel");
}

void TestFileWalker::regularFilesLeftUnsizedWhenAsked()
{
    // Without an lstat() per regular file the walk finds the same files and problems, in the same order; only the
    // sizes are left to whoever opens the files. Everything else is still statted: folders (for loops), links,
    // FIFOs and sockets.
    makeDir("d");
    makeFile("d/a", "aaa");
    makeFile("d/big", QByteArray(5000, 'b'));
    makeFile("d/empty");
    makeDir("d/sub");
    makeFile("d/sub/z", "zz");
    QVERIFY(::mkfifo(path("d/fifo").constData(), 0644) == 0);
    makeLink("d/link", "a");
    makeLink("d/sublink", "sub");
    makeFile("e", "eeee");

    for (const bool follow : { false, true }) {
        for (const int threads : { 0, 3 }) {
            WalkOptions options;
            options.followSymlinks = follow;
            options.listThreads = threads;
            options.testReadableFrom = 1000; // big would be opened to test it; an unsized file is not
            const WalkResult sized = walk({ "d", "e" }, options);
            options.statRegularFiles = false;
            const WalkResult unsized = walk({ "d", "e" }, options);
            QCOMPARE(unsized.files, sized.files);
            QCOMPARE(unsized.problems, sized.problems);
            QCOMPARE(unsized.problems, QStringList { QStringLiteral("d/fifo: not a regular file (FIFO)") });
            for (qsizetype i = 0; i < unsized.files.size(); ++i) {
                const QByteArray &f = unsized.files[i];
                // Roots are statted as given, and so are links (not the files in a folder reached through one).
                const bool known = f == "e" || f == "d/link";
                QCOMPARE(unsized.sizes[i], known ? sized.sizes[i] : FileEntry::kUnknownSize);
            }
            // A size limit needs the sizes.
            options.maxFileSize = 4000;
            const WalkResult limited = walk({ "d", "e" }, options);
            QVERIFY(!limited.sizes.contains(FileEntry::kUnknownSize));
            QVERIFY(limited.problems.contains(QStringLiteral("d/big: larger than --max-file-size (4000 bytes)")));
        }
    }

    // The walk ahead counts files of unknown size apart from the bytes it knows.
    WalkOptions options;
    options.statRegularFiles = false;
    std::atomic_bool cancelled = false;
    WalkAhead ahead({ path("d"), path("e") }, options, &cancelled);
    QTRY_VERIFY(ahead.unsizedAhead() >= 0);
    QCOMPARE(ahead.unsizedAhead(), 4); // a, big, empty, sub/z
    QCOMPARE(ahead.bytesAhead(), 4);   // e
    WalkAhead::Item item;
    int64_t unsized = 4;
    while (ahead.next(item, 30000) == WalkAhead::Next::Item) {
        if (item.file && item.file->size == FileEntry::kUnknownSize)
            --unsized;
        QCOMPARE(ahead.unsizedAhead(), unsized);
    }
    QCOMPARE(unsized, 0);
    QCOMPARE(ahead.bytesAhead(), 0);
}

void TestFileWalker::problemToString()
{
    const FileProblem p { QByteArray("/data/caf\xc3\xa9"), QStringLiteral("permission denied") };
    QCOMPARE(p.toString(), QStringLiteral("/data/caf\u00e9: permission denied"));
}

QTEST_GUILESS_MAIN(TestFileWalker)
#include "tst_filewalker.moc"
