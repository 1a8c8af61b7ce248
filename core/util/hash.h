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
    auto mix = [](uint64_t &x, uint64_t w) {
        x = (x ^ w) * 0x9E3779B97F4A7C15ull;
        x ^= x >> 32;
    };
    auto word = [p](size_t at) {
        uint64_t w;
        std::memcpy(&w, p + at, 8);
        return w;
    };
    size_t i = 0;
    if (size >= 32) {
        // Four chains side by side: one chain waits on its multiply at every word, and the cached DFA tables are
        // checked at every start-up.
        uint64_t lanes[4] = { h, h + 1, h + 2, h + 3 };
        for (; i + 32 <= size; i += 32)
            for (size_t k = 0; k < 4; ++k)
                mix(lanes[k], word(i + 8 * k));
        for (uint64_t lane : lanes)
            mix(h, lane);
    }
    for (; i + 8 <= size; i += 8)
        mix(h, word(i));
    uint64_t tail = 0;
    if (size > i) // an empty vector's data() may be null
        std::memcpy(&tail, p + i, size - i);
    mix(h, tail ^ (uint64_t(size) << 56));
    return h;
}

template<typename T, typename A>
uint64_t hashVector(uint64_t h, const std::vector<T, A> &v)
{
    return hashBytes(h, v.data(), v.size() * sizeof(T));
}

constexpr uint64_t kHashSeed = 0xcbf29ce484222325ull;

} // namespace Hitscope
