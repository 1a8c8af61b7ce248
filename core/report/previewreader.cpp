// SPDX-License-Identifier: GPL-3.0-or-later
#include "previewreader.h"

#include <algorithm>

#include <fcntl.h>
#include <unistd.h>

#include "util/preadfully.h"

namespace Hitscope {

PreviewReader::PreviewReader(const QByteArray &path)
    : m_fd(::open(path.constData(), O_RDONLY | O_CLOEXEC))
{
}

PreviewReader::~PreviewReader()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

QByteArray PreviewReader::read(int64_t offset, int64_t length, int maxBytes) const
{
    if (m_fd < 0 || length <= 0 || maxBytes <= 0)
        return {};
    const int64_t want = std::min<int64_t>(length, maxBytes);
    const int64_t blockEnd = m_blockAt + m_block.size();
    // A block that ended short ended at the file's end: what it lacks, the file lacks too.
    const bool inBlock = m_blockAt >= 0 && offset >= m_blockAt
                         && (offset + want <= blockEnd || (m_block.size() < kBlock && offset <= blockEnd));
    if (!inBlock) {
        m_block.resize(int(std::max(kBlock, want)));
        const int64_t got = preadFully(m_fd, reinterpret_cast<uint8_t *>(m_block.data()), m_block.size(), offset);
        m_block.resize(int(std::max<int64_t>(0, got)));
        m_blockAt = offset;
    }
    const int64_t from = offset - m_blockAt;
    const int64_t n = std::max<int64_t>(0, std::min<int64_t>(want, m_block.size() - from));
    return m_block.mid(qsizetype(from), qsizetype(n));
}

} // namespace Hitscope
