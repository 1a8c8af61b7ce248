// SPDX-License-Identifier: GPL-3.0-or-later
#include "filebatch.h"

#include <new>

#include <sys/mman.h>

namespace Hitscope {

void HaystackFree::operator()(uint8_t *p) const
{
    if (!p)
        return;
    if (release)
        release(p, bytes);
    else
        ::munmap(p, bytes);
}

Haystack allocateHaystack(int64_t bytes)
{
    const size_t size = size_t(bytes);
    void *p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(p, size, MADV_HUGEPAGE);
#endif
    return Haystack(static_cast<uint8_t *>(p), HaystackFree { size, {} });
}

} // namespace Hitscope
