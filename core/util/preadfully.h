// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cerrno>
#include <cstdint>

#include <unistd.h>

namespace Hitscope {

/// Reads exactly `size` bytes at `offset` unless the file ends first (pread may return fewer); returns the bytes
/// read, or -1 with errno set.
inline int64_t preadFully(int fd, uint8_t *dst, int64_t size, int64_t offset)
{
    int64_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(fd, dst + done, size_t(size - done), offset + done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            break;
        done += n;
    }
    return done;
}

} // namespace Hitscope
