// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QByteArray>

namespace Hitscope {

/// Reads the bytes of matches from one file, for previews: by the time a file's hits are delivered the batch
/// that held its bytes is gone. One open per file, one pread per match.
class PreviewReader
{
public:
    explicit PreviewReader(const QByteArray &path);
    ~PreviewReader();
    PreviewReader(const PreviewReader &) = delete;
    PreviewReader &operator=(const PreviewReader &) = delete;

    /// At most `maxBytes` of the `length` bytes at `offset`; empty when the file cannot be read.
    QByteArray read(int64_t offset, int64_t length, int maxBytes) const;

private:
    int m_fd;
};

} // namespace Hitscope
