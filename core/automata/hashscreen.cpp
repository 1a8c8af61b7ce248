// SPDX-License-Identifier: GPL-3.0-or-later
#include "hashscreen.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace Hitscope {

namespace {

/// How much a position tells: the bits of its set, less for the bytes that fill files (zeros, spaces, 0xFF,
/// padding and the letters of text), so that keys avoid them.
double positionBits(const ByteSet &set, size_t count, const ByteSet *before)
{
    double bits = 8 - std::log2(double(std::max<size_t>(count, 1)));
    if (count == 1) {
        const size_t b = set._Find_first();
        if (b == 0x00 || b == 0xff || b == 0x20 || b == 0xcc || b == 0x90)
            bits -= 5;
        else if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z'))
            bits -= 2;
        if (before && *before == set)
            bits -= 4; // runs of one byte fill data
    }
    return bits;
}

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
    Key best;
    for (int keyLength = std::min(4, len); keyLength >= 2 && best.offset < 0; --keyLength) {
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
            if (sum > best.bits)
                best = { o, keyLength, sum };
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

bool HashScreen::add(const Sequence &sequence, uint32_t tag)
{
    const Key key = chooseKey(sequence);
    if (key.offset < 0)
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
        if (t.keys.empty()) {
            t.bitmap.clear();
            continue;
        }
        // About 32 bits per key, so that one position in 32 or fewer is a false candidate; between 64 Kib and
        // 4 Mib (512 KiB).
        const int log2Bits = std::clamp(int(std::bit_width(t.keys.size() * 32 - 1)), 16, 22);
        t.shift = 32 - log2Bits;
        t.bitmap.assign(size_t(1) << (log2Bits - 6), 0);
        for (uint32_t key : t.keys) {
            const uint32_t h = hash(key) >> t.shift;
            t.bitmap[h >> 6] |= uint64_t(1) << (h & 63);
        }
    }
}

size_t HashScreen::bytes() const
{
    size_t sum = 0;
    for (const Table &t : m_tables)
        sum += t.bitmap.size() * 8 + t.keys.size() * 4 + t.firstEntry.size() * 4 + t.entries.size() * 4;
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
    const auto it = std::lower_bound(t.keys.begin(), t.keys.end(), key);
    if (it == t.keys.end() || *it != key)
        return;
    const size_t k = size_t(it - t.keys.begin());
    for (uint32_t i = t.firstEntry[k]; i < t.firstEntry[k + 1]; ++i) {
        const Entry &e = m_sequences[t.entries[i]];
        const int64_t start = p - e.keyOffset;
        const int64_t end = start + e.length - 1;
        if (start < 0 || end >= n || end < from || end >= to)
            continue;
        if (verify(e, data + start))
            out.push_back({ e.tag, end });
    }
}

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
    // Four readable bytes at p: the main loop. The tail pads with zeros, and shorter keys still see theirs.
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
