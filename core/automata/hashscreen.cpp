// SPDX-License-Identifier: GPL-3.0-or-later
#include "hashscreen.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include <immintrin.h>

#include "automata/bytefrequency.h"

namespace Hitscope {

namespace {

struct Key
{
    int offset = -1;
    int length = 0;
    double bits = -1e9;
};

/// The best key of a sequence: the longest length first (2 to 4 positions), then the most bits, with at most
/// kMaxVariants exact strings.
Key chooseKey(const HashScreen::Sequence &seq)
{
    const int len = int(seq.size());
    std::vector<size_t> counts(seq.size());
    std::vector<double> bits(seq.size());
    for (int i = 0; i < len; ++i) {
        counts[size_t(i)] = seq[size_t(i)].count();
        bits[size_t(i)] = positionBits(seq[size_t(i)], counts[size_t(i)], i > 0 ? &seq[size_t(i - 1)] : nullptr);
    }
    // The most bits, a shorter key only where it tells clearly more (each shorter key length costs every byte
    // a look-up; a weak key costs every occurrence a check): "C4 09" rather than four of the zero bytes before it.
    Key best;
    double bestScore = -1e9;
    for (int keyLength = std::min(4, len); keyLength >= 2; --keyLength) {
        for (int o = 0; o + keyLength <= len; ++o) {
            size_t variants = 1;
            double sum = 0;
            for (int j = 0; j < keyLength; ++j) {
                variants *= counts[size_t(o + j)];
                // The first position of a key does not repeat a byte within it.
                sum += j == 0 && o > 0 ? positionBits(seq[size_t(o)], counts[size_t(o)], nullptr) : bits[size_t(o + j)];
            }
            if (variants == 0 || variants > size_t(HashScreen::kMaxVariants))
                continue;
            const double score = sum + 3 * (keyLength - 2);
            if (score > bestScore) {
                best = { o, keyLength, sum };
                bestScore = score;
            }
        }
    }
    return best;
}

template<typename F>
void forEachByte(const ByteSet &set, F &&f)
{
    for (size_t b = set._Find_first(); b < 256; b = set._Find_next(b))
        f(int(b));
}

uint32_t load32(const uint8_t *p)
{
    uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
}

} // namespace

bool HashScreen::suits(const Sequence &sequence)
{
    return chooseKey(sequence).offset >= 0;
}

bool HashScreen::add(const Sequence &sequence, uint32_t tag, int minKeyLength)
{
    const Key key = chooseKey(sequence);
    if (key.offset < 0 || key.length < minKeyLength)
        return false;
    Entry e;
    e.tag = tag;
    e.length = int(sequence.size());
    e.keyOffset = key.offset;
    e.keyLength = key.length;
    for (const ByteSet &set : sequence) {
        std::array<uint64_t, 4> w {};
        forEachByte(set, [&](int b) { w[size_t(b >> 6)] |= uint64_t(1) << (b & 63); });
        e.bits.push_back(w);
    }
    if (e.length >= 8) {
        int best = -1;
        for (int o = 0; o + 8 <= e.length; ++o) {
            int single = 0;
            for (int j = o; j < o + 8; ++j)
                single += sequence[size_t(j)].count() == 1 && (j < key.offset || j >= key.offset + key.length) ? 1 : 0;
            if (single > best) {
                best = single;
                e.quickOffset = o;
            }
        }
        for (int j = 0; j < 8; ++j) {
            const ByteSet &set = sequence[size_t(e.quickOffset + j)];
            if (set.count() == 1) {
                e.quickMask |= uint64_t(0xff) << (8 * j);
                e.quickValue |= uint64_t(set._Find_first()) << (8 * j);
            }
        }
    }
    // Every exact string of the key, little-endian as the scan loads it.
    std::vector<uint32_t> values { 0 };
    for (int j = 0; j < key.length; ++j) {
        std::vector<uint32_t> grown;
        const ByteSet &set = sequence[size_t(key.offset + j)];
        for (uint32_t v : values)
            forEachByte(set, [&](int b) { grown.push_back(v | uint32_t(b) << (8 * j)); });
        values = std::move(grown);
    }
    Table &t = m_tables[size_t(key.length - 2)];
    for (uint32_t v : values)
        t.pending.emplace_back(v, uint32_t(m_sequences.size()));
    m_maxLength = std::max(m_maxLength, e.length);
    m_sequences.push_back(std::move(e));
    return true;
}

void HashScreen::build()
{
    for (size_t k = 0; k < m_tables.size(); ++k) {
        Table &t = m_tables[k];
        t.keyLength = int(k) + 2;
        std::sort(t.pending.begin(), t.pending.end());
        t.pending.erase(std::unique(t.pending.begin(), t.pending.end()), t.pending.end());
        t.keys.clear();
        t.firstEntry.clear();
        t.entries.clear();
        for (const auto &[key, seq] : t.pending) {
            if (t.keys.empty() || t.keys.back() != key) {
                t.keys.push_back(key);
                t.firstEntry.push_back(uint32_t(t.entries.size()));
            }
            t.entries.push_back(seq);
        }
        t.firstEntry.push_back(uint32_t(t.entries.size()));
        t.pending = {};
        t.quick.clear();
        for (uint32_t i : t.entries) {
            const Entry &e = m_sequences[i];
            t.quick.push_back({ e.quickMask, e.quickValue, -e.keyOffset, e.quickOffset, e.length });
        }
        if (t.keys.empty()) {
            t.bitmap.clear();
            continue;
        }
        // About 64 bits per key, so that one position in 64 or fewer is a false candidate; between 64 Kib and
        // 2 Mib (256 KiB, in L2).
        const int log2Bits = std::clamp(int(std::bit_width(t.keys.size() * 64 - 1)), 16, 21);
        t.shift = 32 - log2Bits;
        t.bitmap.assign(size_t(1) << (log2Bits - 6), 0);
        for (uint32_t key : t.keys) {
            const uint32_t h = hash(key) >> t.shift;
            t.bitmap[h >> 6] |= uint64_t(1) << (h & 63);
        }
        // A candidate's key is found in a table at most half full, by another part of the same hash.
        const size_t slots = std::bit_ceil(t.keys.size() * 2);
        t.slots.assign(slots, 0);
        t.slotMask = uint32_t(slots - 1);
        for (uint32_t k = 0; k < t.keys.size(); ++k) {
            uint32_t s = hash(t.keys[k]) & t.slotMask;
            while (t.slots[s])
                s = (s + 1) & t.slotMask;
            t.slots[s] = uint64_t(t.keys[k]) << 32 | (k + 1);
        }
    }
}

size_t HashScreen::bytes() const
{
    size_t sum = 0;
    for (const Table &t : m_tables)
        sum += t.bitmap.size() * 8 + t.keys.size() * 4 + t.slots.size() * 8 + t.firstEntry.size() * 4
            + t.entries.size() * 4 + t.quick.size() * sizeof(Table::Quick);
    for (const Entry &e : m_sequences)
        sum += e.bits.size() * 32 + sizeof(Entry);
    return sum;
}

bool HashScreen::verify(const Entry &e, const uint8_t *p) const
{
    for (int k = 0; k < e.length; ++k)
        if (!(e.bits[size_t(k)][p[k] >> 6] >> (p[k] & 63) & 1))
            return false;
    return true;
}

void HashScreen::probe(const Table &t, uint32_t key, const uint8_t *data, int64_t n, int64_t p, int64_t from,
                       int64_t to, std::vector<Match> &out) const
{
    size_t k = 0;
    for (uint32_t s = hash(key) & t.slotMask;; s = (s + 1) & t.slotMask) {
        const uint64_t slot = t.slots[s];
        if (!slot)
            return;
        if (uint32_t(slot >> 32) == key) {
            k = uint32_t(slot) - 1;
            break;
        }
    }
    for (uint32_t i = t.firstEntry[k]; i < t.firstEntry[k + 1]; ++i) {
        const Table::Quick &q = t.quick[i];
        const int64_t start = p + q.start;
        const int64_t end = start + q.length - 1;
        if (start < 0 || end >= n || end < from || end >= to)
            continue;
        if (q.mask) {
            uint64_t w;
            std::memcpy(&w, data + start + q.offset, 8);
            if ((w & q.mask) != q.value)
                continue;
        }
        const Entry &e = m_sequences[t.entries[i]];
        if (verify(e, data + start))
            out.push_back({ e.tag, end });
    }
}

namespace {

/// The positions p .. p + 15 whose four bytes' hash has its bit set in `bitmap` (32-bit words), a bit each:
/// sixteen positions with one gather. Needs data[p, p + 19) readable. (The masked forms of the intrinsics: GCC 12
/// warns of the unmasked ones' undefined source operand.)
__attribute__((target("avx512f"))) unsigned candidates16(const uint8_t *data, int64_t p, const uint32_t *bitmap,
                                                        int shift)
{
    constexpr __mmask16 all = 0xffff;
    const __m512i b0 = _mm512_maskz_cvtepu8_epi32(all, _mm_loadu_si128(reinterpret_cast<const __m128i *>(data + p)));
    const __m512i b1 = _mm512_maskz_cvtepu8_epi32(all, _mm_loadu_si128(reinterpret_cast<const __m128i *>(data + p + 1)));
    const __m512i b2 = _mm512_maskz_cvtepu8_epi32(all, _mm_loadu_si128(reinterpret_cast<const __m128i *>(data + p + 2)));
    const __m512i b3 = _mm512_maskz_cvtepu8_epi32(all, _mm_loadu_si128(reinterpret_cast<const __m128i *>(data + p + 3)));
    const __m512i w = _mm512_or_si512(_mm512_or_si512(b0, _mm512_maskz_slli_epi32(all, b1, 8)),
                                      _mm512_or_si512(_mm512_maskz_slli_epi32(all, b2, 16),
                                                      _mm512_maskz_slli_epi32(all, b3, 24)));
    const __m512i h = _mm512_maskz_srl_epi32(all, _mm512_mullo_epi32(w, _mm512_set1_epi32(int(0x9E3779B1u))),
                                             _mm_cvtsi32_si128(shift));
    const __m512i words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), all,
                                                      _mm512_maskz_srli_epi32(all, h, 5), bitmap, 4);
    const __m512i bits = _mm512_maskz_srlv_epi32(all, words, _mm512_and_si512(h, _mm512_set1_epi32(31)));
    return _mm512_test_epi32_mask(bits, _mm512_set1_epi32(1));
}

bool hasAvx512()
{
    static const bool has = __builtin_cpu_supports("avx512f");
    return has;
}

} // namespace

void HashScreen::scan(const uint8_t *data, int64_t n, int64_t from, int64_t to, std::vector<Match> &out) const
{
    if (m_sequences.empty() || n <= 0)
        return;
    // Keys start at most m_maxLength - 1 bytes before the first end wanted, and before the last.
    const int64_t first = std::max<int64_t>(0, from - m_maxLength + 1);
    const int64_t last = std::min(n, to);
    const Table &t2 = m_tables[0], &t3 = m_tables[1], &t4 = m_tables[2];
    const bool has2 = !t2.keys.empty(), has3 = !t3.keys.empty(), has4 = !t4.keys.empty();
    auto test = [](const Table &t, uint32_t key) {
        const uint32_t h = hash(key) >> t.shift;
        return (t.bitmap[h >> 6] >> (h & 63)) & 1;
    };
    int64_t p = first;
    // Four readable bytes at p: the main loop, eight positions at a time without a branch per position (a
    // candidate is one position in tens). The tail pads with zeros, and shorter keys still see theirs.
    const uint64_t *bitmap4 = has4 ? t4.bitmap.data() : nullptr;
    const int shift4 = t4.shift;
    if (has4 && !has3 && !has2 && hasAvx512()) {
        // The bitmap's 64-bit words as 32-bit ones, little-endian: bit h is bit h & 31 of word h >> 5.
        const uint32_t *words = reinterpret_cast<const uint32_t *>(bitmap4);
        for (; p + 19 <= n && p + 16 <= last; p += 16) {
            unsigned mask = candidates16(data, p, words, shift4);
            while (mask) [[unlikely]] {
                const int k = std::countr_zero(mask);
                mask &= mask - 1;
                probe(t4, load32(data + p + k), data, n, p + k, from, to, out);
            }
        }
    }
    if (has4 && !has3 && !has2) {
        for (; p + 12 <= n && p + 8 <= last; p += 8) {
            uint64_t bytes;
            std::memcpy(&bytes, data + p, 8);
            const uint32_t tail = load32(data + p + 8);
            unsigned mask = 0;
#pragma GCC unroll 8
            for (int k = 0; k < 8; ++k) {
                const uint32_t w = k < 5 ? uint32_t(bytes >> (8 * k)) : uint32_t((bytes >> (8 * k)) | uint64_t(tail) << (64 - 8 * k));
                const uint32_t h = hash(w) >> shift4;
                mask |= unsigned((bitmap4[h >> 6] >> (h & 63)) & 1) << k;
            }
            while (mask) [[unlikely]] {
                const int k = std::countr_zero(mask);
                mask &= mask - 1;
                probe(t4, load32(data + p + k), data, n, p + k, from, to, out);
            }
        }
    }
    for (; p + 4 <= n && p < last; ++p) {
        const uint32_t w = load32(data + p);
        if (has4 && test(t4, w)) [[unlikely]]
            probe(t4, w, data, n, p, from, to, out);
        if (has3 && test(t3, w & 0xffffffu)) [[unlikely]]
            probe(t3, w & 0xffffffu, data, n, p, from, to, out);
        if (has2 && test(t2, w & 0xffffu)) [[unlikely]]
            probe(t2, w & 0xffffu, data, n, p, from, to, out);
    }
    for (; p < last; ++p) {
        uint8_t buf[4] = {};
        std::memcpy(buf, data + p, size_t(std::min<int64_t>(4, n - p)));
        const uint32_t w = load32(buf);
        if (has3 && p + 3 <= n && test(t3, w & 0xffffffu))
            probe(t3, w & 0xffffffu, data, n, p, from, to, out);
        if (has2 && p + 2 <= n && test(t2, w & 0xffffu))
            probe(t2, w & 0xffffu, data, n, p, from, to, out);
    }
}

} // namespace Hitscope
