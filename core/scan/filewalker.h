// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <functional>

#include <QByteArrayList>
#include <QStringList>

#include "engine/fileentry.h"

namespace Hitscope {

struct WalkOptions
{
    QStringList include;        ///< glob patterns on the file name; empty: every file
    QStringList exclude;        ///< glob patterns on the file name or any path component
    int64_t maxFileSize = -1;   ///< larger files are reported as skipped; -1: no limit
    bool followSymlinks = false;
    /// Regular files of at least this many bytes are opened to report one that cannot be read as a problem of
    /// the walk. A caller that opens the files itself right after (the scanner's reader) reports the others
    /// there, and asks only for large files to be tested (they would take a batch's room unread): the walk
    /// then costs an lstat() per small file, not an open(), fstat() and close() more.
    int64_t testReadableFrom = 0;
    /// Threads that list folders (and lstat their entries) ahead of the walk; 0: the walk's own thread does.
    /// Entries come in the same order either way.
    int listThreads = 0;
    /// Nice levels the listing threads run below the walk.
    int listNice = 0;
    /// Off: a folder entry that the file system types as a regular file (dirent's d_type) is reported without an
    /// lstat(), of size FileEntry::kUnknownSize, and not tested for readability; a caller that opens every file
    /// anyway (the scanner's batcher) learns the size there. In a 2-core VM the lstat() per file was 6% of a
    /// scan's CPU time. Ignored with a --max-file-size (maxFileSize >= 0): the limit needs every size.
    bool statRegularFiles = true;
    /// Only the files of this part of `shardCount` parts (FileWalker::shardOf), 0-based; problems with folders are
    /// every part's. One part (the default) is every file.
    int shardIndex = 0;
    int shardCount = 1;
};

/**
 * Walks files and folders recursively with POSIX calls (names stay byte strings). Only regular files are
 * reported; FIFOs, sockets and devices are skipped without being opened, so the walk never blocks. Symlinks
 * are not followed unless asked; when followed, directory loops are detected by (device, inode).
 * Entries come in a stable order: sorted by name within each folder, roots in the order given.
 */
class FileWalker
{
public:
    using FileCallback = std::function<void(const FileEntry &)>;
    using ProblemCallback = std::function<void(const FileProblem &)>;

    explicit FileWalker(WalkOptions options = {});

    /// Called for every entry looked at, also those filtered out: a caller that hands work on only from its
    /// callbacks gets the chance while a walk passes thousands of files that --include leaves out.
    void setOnEntry(std::function<void()> onEntry);

    /// Walks `roots` (files or folders), calling onFile for each regular file and onProblem for each
    /// path skipped with a reason. Returns early when `cancelled` becomes true.
    void walk(const QByteArrayList &roots, const FileCallback &onFile, const ProblemCallback &onProblem,
              const std::atomic_bool *cancelled = nullptr) const;

    /// The part (0-based, of `count`) a path belongs to: FNV-1a (64 bits) of the path's bytes, modulo `count`.
    /// Stable across runs and machines for the same path as walked, so that reruns pick the same files.
    static int shardOf(const QByteArray &path, int count);

private:
    WalkOptions m_options;
    std::function<void()> m_onEntry;
};

} // namespace Hitscope
