// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <map>

#include <QByteArray>
#include <QString>

namespace Hitscope {

/**
 * Where the loaders read rule files from: the disk, except for the paths given a text here (an editor's unsaved
 * buffer). A path keeps its meaning with a text of its own: includes resolve relative to its folder, errors name
 * it and its lines, and its suffix decides its format, so the text is loaded as if it had been saved there.
 * The path need not exist (a new file not saved yet). Paths are compared absolute and cleaned, not resolved
 * through symbolic links (a file that does not exist has no canonical path).
 */
class RuleSources
{
public:
    /// Loads `text` instead of the file at `path` (replacing a text given before for it).
    void setText(const QString &path, const QByteArray &text);
    bool hasText(const QString &path) const;
    bool isEmpty() const { return m_texts.empty(); }

    /// The text given for `path`, else up to `maxBytes` (all when negative) of the file on disk. False, with the
    /// reason in `error`, when the file cannot be read.
    bool read(const QString &path, QByteArray *data, QString *error = nullptr, qint64 maxBytes = -1) const;

private:
    static QString key(const QString &path);

    std::map<QString, QByteArray> m_texts;
};

} // namespace Hitscope
