// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QString>

namespace Hitscope {

/// Writes one file of a cache folder and keeps, of the files matching `glob` there, the `keep` most recently
/// written or used ones, and of those only as many as fit in `maxBytes` (this one always). QSaveFile: two scans
/// writing at once never leave half a file.
inline void writeCacheFile(const QString &path, const QByteArray &data, const QString &glob, qsizetype keep,
                           qint64 maxBytes = -1)
{
    const QString dir = QFileInfo(path).absolutePath();
    if (!QDir().mkpath(dir))
        return;
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(data) != data.size() || !file.commit())
        return; // nothing new: nothing to make room for
    const QFileInfoList files = QDir(dir).entryInfoList({ glob }, QDir::Files, QDir::Time);
    const QString self = QFileInfo(path).absoluteFilePath();
    qint64 bytes = data.size();
    qsizetype kept = 1;
    for (const QFileInfo &f : files) {
        if (f.absoluteFilePath() == self)
            continue;
        bytes += f.size();
        if (kept < keep && (maxBytes < 0 || bytes <= maxBytes))
            ++kept;
        else
            QFile::remove(f.absoluteFilePath());
    }
}

} // namespace Hitscope
