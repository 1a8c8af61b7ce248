// SPDX-License-Identifier: GPL-3.0-or-later
#include "previewreader.h"

#include <algorithm>

#include <fcntl.h>
#include <unistd.h>

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
    QByteArray data(int(std::min<int64_t>(length, maxBytes)), Qt::Uninitialized);
    const ssize_t n = ::pread(m_fd, data.data(), size_t(data.size()), off_t(offset));
    data.resize(n > 0 ? int(n) : 0);
    return data;
}

} // namespace Hitscope
