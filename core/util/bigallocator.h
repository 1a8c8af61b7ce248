// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include <sys/mman.h>

#include "util/hugepages.h"

namespace Hitscope {

/**
 * An allocator for tables of a megabyte or more (DFA transitions): their memory comes mapped on its own, in
 * transparent huge pages where the kernel offers them, and is populated by one call instead of a fault per
 * 4 KiB page. The CLI read 5.6 MiB of cached tables at every start, and in a 2-core VM each fault cost about 12
 * us: about 1,400 faults, a tenth of the start-up. Smaller tables come from the heap as with std::allocator.
 */
template<typename T>
struct BigAllocator
{
    using value_type = T;
    static constexpr size_t kBigBytes = size_t(1) << 20;
    static constexpr size_t kHugePage = size_t(2) << 20;

    BigAllocator() noexcept = default;
    template<typename U>
    BigAllocator(const BigAllocator<U> &) noexcept
    {
    }

    static size_t mappedBytes(size_t n) { return (n * sizeof(T) + kHugePage - 1) & ~(kHugePage - 1); }

    T *allocate(size_t n)
    {
        if (n > size_t(-1) / sizeof(T))
            throw std::bad_alloc();
        if (n * sizeof(T) < kBigBytes)
            return static_cast<T *>(::operator new(n * sizeof(T)));
        return static_cast<T *>(mapHugePages(mappedBytes(n), true));
    }

    void deallocate(T *p, size_t n) noexcept
    {
        if (n * sizeof(T) < kBigBytes)
            ::operator delete(p);
        else
            ::munmap(p, mappedBytes(n));
    }

    template<typename U>
    bool operator==(const BigAllocator<U> &) const noexcept
    {
        return true;
    }
};

/// A table of 32-bit entries in BigAllocator memory.
using BigTable = std::vector<uint32_t, BigAllocator<uint32_t>>;

} // namespace Hitscope
