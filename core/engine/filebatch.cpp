// SPDX-License-Identifier: GPL-3.0-or-later
#include "filebatch.h"

#include <sys/mman.h>

#include "util/hugepages.h"

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
    // Not populated: a batch buffer is written by the reads, and the engine may keep it for several batches.
    const size_t size = size_t(bytes);
    return Haystack(static_cast<uint8_t *>(mapHugePages(size, false)), HaystackFree { size, {} });
}

} // namespace Hitscope
