// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QByteArray>

namespace Hitscope {

/// Reads the bytes of matches from one file, for previews: by the time a file's hits are delivered the batch
/// that held its bytes is gone. One open per file; bytes are read a block at a time, since hits come in offset
/// order and a pread per hit made the GUI's scans of files with many hits system-call bound.
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
    static constexpr int64_t kBlock = 64 << 10;

    int m_fd;
    mutable QByteArray m_block;     ///< the file's bytes from m_blockAt (fewer than asked for at its end)
    mutable int64_t m_blockAt = -1;
};

} // namespace Hitscope
