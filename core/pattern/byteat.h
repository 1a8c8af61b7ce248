// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

namespace Hitscope {

/**
 * Reads the byte at a file offset (0 <= offset < the file's size) for start finding and YARA's match lengths,
 * which read a byte at a time: the bytes held in memory (a chunk in its batch) directly, others through a
 * function (from the file). A std::function call per byte was 1-2% of a cached scan on 2 cores.
 */
class ByteAt
{
public:
    using Read = std::function<uint8_t(int64_t offset)>;

    ByteAt() = default;
    /// Every byte through `read`.
    template<typename F>
        requires(!std::same_as<std::decay_t<F>, ByteAt> && std::invocable<F &, int64_t>)
    ByteAt(F &&read)
        : m_read(std::forward<F>(read))
    {
    }
    /// The bytes at [begin, end) from `data` (the byte at `begin` first), the others through `read`.
    ByteAt(const uint8_t *data, int64_t begin, int64_t end, Read read)
        : m_data(data)
        , m_begin(begin)
        , m_end(end)
        , m_read(std::move(read))
    {
    }

    uint8_t operator()(int64_t offset) const
    {
        if (offset >= m_begin && offset < m_end) [[likely]]
            return m_data[offset - m_begin];
        return m_read(offset);
    }

private:
    const uint8_t *m_data = nullptr;
    int64_t m_begin = 0;
    int64_t m_end = 0;
    Read m_read;
};

} // namespace Hitscope
