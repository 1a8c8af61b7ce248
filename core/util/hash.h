// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace Hitscope {

/// A 64-bit hash over whole words, for cache keys and table fingerprints (tables are tens of MiB: byte-wise FNV
/// would cost a noticeable share of the compile time).
inline uint64_t hashBytes(uint64_t h, const void *data, size_t size)
{
    const auto *p = static_cast<const uint8_t *>(data);
    auto mix = [&h](uint64_t w) {
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 32;
    };
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        mix(w);
    }
    uint64_t tail = 0;
    if (size > i) // an empty vector's data() may be null
        std::memcpy(&tail, p + i, size - i);
    mix(tail ^ (uint64_t(size) << 56));
    return h;
}

template<typename T, typename A>
uint64_t hashVector(uint64_t h, const std::vector<T, A> &v)
{
    return hashBytes(h, v.data(), v.size() * sizeof(T));
}

constexpr uint64_t kHashSeed = 0xcbf29ce484222325ull;

} // namespace Hitscope
