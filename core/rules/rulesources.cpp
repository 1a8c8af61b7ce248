// SPDX-License-Identifier: GPL-3.0-or-later
#include "rulesources.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace Hitscope {

QString RuleSources::key(const QString &path)
{
    return QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

void RuleSources::setText(const QString &path, const QByteArray &text)
{
    m_texts[key(path)] = text;
}

bool RuleSources::hasText(const QString &path) const
{
    return !m_texts.empty() && m_texts.count(key(path)) > 0;
}

bool RuleSources::read(const QString &path, QByteArray *data, QString *error, qint64 maxBytes) const
{
    if (!m_texts.empty()) {
        const auto it = m_texts.find(key(path));
        if (it != m_texts.end()) {
            *data = maxBytes < 0 ? it->second : it->second.left(maxBytes);
            return true;
        }
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = file.errorString();
        return false;
    }
    *data = maxBytes < 0 ? file.readAll() : file.read(maxBytes);
    return true;
}

} // namespace Hitscope
