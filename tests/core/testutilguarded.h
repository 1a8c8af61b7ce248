// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

#include <QByteArray>
#include <QtGlobal>

namespace TestUtil {

/// A copy of `data` that ends where an unreadable page begins: a read past its end crashes the test.
class Guarded
{
public:
    explicit Guarded(const QByteArray &data)
    {
        const size_t page = size_t(sysconf(_SC_PAGESIZE));
        m_size = (size_t(data.size()) + page - 1) / page * page + page;
        m_base = static_cast<uint8_t *>(
            mmap(nullptr, m_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (m_base == MAP_FAILED || mprotect(m_base + m_size - page, page, PROT_NONE) != 0)
            qFatal("no guarded buffer");
        m_data = m_base + m_size - page - size_t(data.size());
        std::memcpy(m_data, data.constData(), size_t(data.size()));
    }
    ~Guarded() { munmap(m_base, m_size); }
    Guarded(const Guarded &) = delete;
    Guarded &operator=(const Guarded &) = delete;
    const uint8_t *data() const { return m_data; }

private:
    uint8_t *m_base = nullptr;
    uint8_t *m_data = nullptr;
    size_t m_size = 0;
};

} // namespace TestUtil
