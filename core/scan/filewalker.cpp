// SPDX-License-Identifier: GPL-3.0-or-later
#include "filewalker.h"

#include <algorithm>
#include <memory>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QFile>

#include "scan/folderlister.h"

namespace Hitscope {

namespace {

using FolderId = std::pair<dev_t, ino_t>;

QString errnoReason(int error)
{
    switch (error) {
    case EACCES:
    case EPERM:
        return QStringLiteral("permission denied");
    case ENOENT:
        return QStringLiteral("vanished during the walk");
    case ELOOP:
        return QStringLiteral("symlink loop");
    default:
        return QString::fromLocal8Bit(std::strerror(error));
    }
}

QString notRegularReason(mode_t mode)
{
    const char *kind = S_ISFIFO(mode) ? "FIFO"
        : S_ISSOCK(mode)              ? "socket"
        : S_ISCHR(mode)               ? "character device"
        : S_ISBLK(mode)               ? "block device"
                                      : "unknown type";
    return QLatin1String("not a regular file (") + QLatin1String(kind) + QLatin1Char(')');
}

std::vector<QByteArray> encodeGlobs(const QStringList &globs)
{
    std::vector<QByteArray> out;
    out.reserve(size_t(globs.size()));
    for (const QString &g : globs)
        out.push_back(QFile::encodeName(g));
    return out;
}

bool matchesAny(const std::vector<QByteArray> &globs, const QByteArray &name)
{
    return std::any_of(globs.begin(), globs.end(),
                       [&](const QByteArray &g) { return fnmatch(g.constData(), name.constData(), 0) == 0; });
}

// Joined as yara -r joins them ("dir/" gives "dir//name"), so scripts can compare our paths with yara's.
QByteArray joinPath(const QByteArray &folder, const QByteArray &name)
{
    return folder + '/' + name;
}

/// State of one walk() call; the recursion follows the folder tree.
class Walk
{
public:
    Walk(const WalkOptions &options, const FileWalker::FileCallback &onFile,
         const FileWalker::ProblemCallback &onProblem, const std::function<void()> &onEntry,
         const std::atomic_bool *cancelled)
        : m_options(options)
        , m_include(encodeGlobs(options.include))
        , m_exclude(encodeGlobs(options.exclude))
        , m_onFile(onFile)
        , m_onProblem(onProblem)
        , m_onEntry(onEntry)
        , m_cancelled(cancelled)
        , m_statRegularFiles(options.statRegularFiles || options.maxFileSize >= 0)
    {
        if (options.listThreads > 0)
            m_lister = std::make_unique<FolderLister>(options.listThreads, m_exclude, cancelled, options.listNice,
                                                      size_t(4096), size_t(1) << 18, m_statRegularFiles);
    }

    bool cancelled() const { return m_cancelled && m_cancelled->load(std::memory_order_relaxed); }

    void root(const QByteArray &path)
    {
        struct stat st;
        if (::lstat(path.constData(), &st) != 0) {
            const int error = errno;
            problem(path, error == ENOENT || error == ENOTDIR ? QStringLiteral("does not exist") : errnoReason(error));
            return;
        }
        const bool isLink = S_ISLNK(st.st_mode);
        if (isLink) {
            if (!m_options.followSymlinks) {
                problem(path, QStringLiteral("symbolic link not followed"));
                return;
            }
            if (!followLink(path, &st))
                return;
        }
        // Files named explicitly are scanned whatever the include/exclude globs say: the user asked for them.
        if (S_ISDIR(st.st_mode))
            folder(path, st);
        else
            nonFolder(path, st, isLink);
    }

private:
    void problem(const QByteArray &path, const QString &reason) { m_onProblem(FileProblem { path, reason }); }

    bool followLink(const QByteArray &path, struct stat *st)
    {
        if (::stat(path.constData(), st) == 0)
            return true;
        const int error = errno;
        problem(path, error == ENOENT ? QStringLiteral("broken symbolic link") : errnoReason(error));
        return false;
    }

    void folder(const QByteArray &path, const struct stat &st)
    {
        const FolderId id { st.st_dev, st.st_ino };
        // Only folders on the current path make a loop; the same folder reached twice side by side is not one.
        if (std::find(m_ancestors.begin(), m_ancestors.end(), id) != m_ancestors.end()) {
            problem(path, QStringLiteral("symlink loop"));
            return;
        }

        FolderListing listing
            = m_lister ? m_lister->take(path, id, m_ancestors)
                       : FolderLister::list(path, m_cancelled, m_statRegularFiles);
        if (cancelled())
            return;
        // A folder that cannot be opened, or read to its end: what was read of it is still walked.
        if (listing.error != 0)
            problem(path, errnoReason(listing.error));

        m_ancestors.push_back(id);
        for (const FolderListing::Entry &e : listing.entries) {
            if (cancelled())
                break;
            entry(joinPath(path, e.name), e);
        }
        m_ancestors.pop_back();
    }

    void entry(const QByteArray &path, const FolderListing::Entry &e)
    {
        if (m_onEntry)
            m_onEntry();
        if (e.error != 0) {
            problem(path, errnoReason(e.error));
            return;
        }
        struct stat st = e.st;
        const bool isLink = S_ISLNK(st.st_mode);
        if (isLink) {
            // As grep -r does: links met inside folders are skipped quietly unless following was asked for.
            if (!m_options.followSymlinks || !followLink(path, &st))
                return;
        }
        if (S_ISDIR(st.st_mode)) {
            if (!matchesAny(m_exclude, e.name))
                folder(path, st);
            return;
        }
        // Globs come before the type so that a FIFO the user filtered out raises no problem either.
        if (matchesAny(m_exclude, e.name) || (!m_include.empty() && !matchesAny(m_include, e.name)))
            return;
        nonFolder(path, st, isLink);
    }

    void nonFolder(const QByteArray &path, const struct stat &st, bool viaLink)
    {
        // Before anything is reported of it: a path's problems are its own part's.
        if (m_options.shardCount > 1 && FileWalker::shardOf(path, m_options.shardCount) != m_options.shardIndex)
            return;
        if (!S_ISREG(st.st_mode)) {
            problem(path, notRegularReason(st.st_mode));
            return;
        }
        if (m_options.maxFileSize >= 0 && st.st_size > m_options.maxFileSize) {
            problem(path,
                    QLatin1String("larger than --max-file-size (") + QString::number(m_options.maxFileSize)
                        + QLatin1String(" bytes)"));
            return;
        }
        if (st.st_size == FileEntry::kUnknownSize || st.st_size < m_options.testReadableFrom) {
            m_onFile(FileEntry { path, int64_t(st.st_size), viaLink });
            return;
        }
        // Opening is the only reliable readability test (access() uses the real uid and ignores ACLs
        // and capabilities). O_NONBLOCK keeps a file swapped for a FIFO since lstat() from blocking us.
        const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (viaLink ? 0 : O_NOFOLLOW);
        const int fd = ::open(path.constData(), flags);
        if (fd < 0) {
            problem(path, errnoReason(errno));
            return;
        }
        struct stat now;
        const bool statted = ::fstat(fd, &now) == 0;
        const int error = errno;
        ::close(fd);
        if (!statted) {
            problem(path, errnoReason(error));
            return;
        }
        if (!S_ISREG(now.st_mode)) {
            problem(path, notRegularReason(now.st_mode));
            return;
        }
        m_onFile(FileEntry { path, int64_t(now.st_size), viaLink });
    }

    const WalkOptions &m_options;
    const std::vector<QByteArray> m_include;
    const std::vector<QByteArray> m_exclude;
    const FileWalker::FileCallback &m_onFile;
    const FileWalker::ProblemCallback &m_onProblem;
    const std::function<void()> &m_onEntry;
    const std::atomic_bool *m_cancelled;
    const bool m_statRegularFiles;
    std::vector<FolderId> m_ancestors;
    std::unique_ptr<FolderLister> m_lister; // null: folders listed on the walk's thread
};

} // namespace

FileWalker::FileWalker(WalkOptions options)
    : m_options(std::move(options))
{
}

void FileWalker::setOnEntry(std::function<void()> onEntry)
{
    m_onEntry = std::move(onEntry);
}

int FileWalker::shardOf(const QByteArray &path, int count)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char c : path)
        h = (h ^ uint8_t(c)) * 0x100000001b3ull;
    return count > 1 ? int(h % uint64_t(count)) : 0;
}

void FileWalker::walk(const QByteArrayList &roots, const FileCallback &onFile, const ProblemCallback &onProblem,
                      const std::atomic_bool *cancelled) const
{
    Walk walk(m_options, onFile, onProblem, m_onEntry, cancelled);
    for (const QByteArray &root : roots) {
        if (walk.cancelled())
            return;
        walk.root(root);
    }
}

} // namespace Hitscope
