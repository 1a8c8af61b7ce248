// SPDX-License-Identifier: GPL-3.0-or-later
#include "fileentry.h"

#include <QFile>

namespace Hitscope {

QString FileEntry::displayPath() const
{
    return QFile::decodeName(path);
}

QString FileProblem::toString() const
{
    return QFile::decodeName(path) + QLatin1String(": ") + reason;
}

} // namespace Hitscope
