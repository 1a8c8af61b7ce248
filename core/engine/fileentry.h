// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QByteArray>
#include <QMetaType>
#include <QString>

namespace Hitscope {

/// A regular file found by the walker. The path is kept as the bytes the file system gave (names need not
/// be UTF-8); displayPath() is for people.
struct FileEntry
{
    /// A size the walk did not learn (WalkOptions::statRegularFiles off): whoever opens the file does.
    static constexpr int64_t kUnknownSize = -1;

    QByteArray path;
    int64_t size = 0; ///< or kUnknownSize
    bool viaLink = false; ///< reached through a symbolic link the user asked to follow (-L)

    QString displayPath() const;
};

/// A path that was not scanned, and why ("permission denied", "vanished", "is a FIFO", ...).
struct FileProblem
{
    QByteArray path;
    QString reason;

    QString toString() const;
};

} // namespace Hitscope

Q_DECLARE_METATYPE(Hitscope::FileEntry)
Q_DECLARE_METATYPE(Hitscope::FileProblem)
