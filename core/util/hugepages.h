// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstddef>
#include <new>

#include <sys/mman.h>

namespace Hitscope {

/// Maps `bytes` of fresh memory for a large buffer, in transparent huge pages where the kernel offers them (a
/// fault per 2 MiB instead of per 4 KiB); with `populate`, every page is made present by this one call. Throws
/// std::bad_alloc; free with munmap(p, bytes).
inline void *mapHugePages(size_t bytes, bool populate)
{
    void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(p, bytes, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
    if (populate)
        ::madvise(p, bytes, MADV_POPULATE_WRITE); // Linux 5.14; before it, pages fault in as they are written
#else
    (void)populate;
#endif
    return p;
}

} // namespace Hitscope
