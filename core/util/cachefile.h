// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QString>

namespace Hitscope {

/// Writes one file of a cache folder and keeps, of the files matching `glob` there, the `keep` most recently
/// written or used ones (this one always). QSaveFile: two scans writing at once never leave half a file.
inline void writeCacheFile(const QString &path, const QByteArray &data, const QString &glob, qsizetype keep)
{
    const QString dir = QFileInfo(path).absolutePath();
    if (!QDir().mkpath(dir))
        return;
    QSaveFile file(path);
    if (file.open(QIODevice::WriteOnly) && file.write(data) == data.size())
        file.commit();
    const QFileInfoList files = QDir(dir).entryInfoList({ glob }, QDir::Files, QDir::Time);
    for (qsizetype i = keep; i < files.size(); ++i)
        if (files[i].absoluteFilePath() != QFileInfo(path).absoluteFilePath())
            QFile::remove(files[i].absoluteFilePath());
}

} // namespace Hitscope
