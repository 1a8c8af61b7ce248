// SPDX-License-Identifier: GPL-3.0-or-later
#include "sparsescreen.h"

#include <algorithm>
#include <cstring>

#include "automata/bytefrequency.h"

namespace Hitscope {

namespace {

/// The single-byte positions of a sequence, rarest byte first.
std::vector<int> singles(const SparseScreen::Sequence &sequence)
{
    std::vector<int> out;
    for (size_t i = 0; i < sequence.size(); ++i)
        if (sequence[i].count() == 1)
            out.push_back(int(i));
    std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
        return byteFrequency(int(sequence[size_t(a)]._Find_first()))
            < byteFrequency(int(sequence[size_t(b)]._Find_first()));
    });
    return out;
}

} // namespace

bool SparseScreen::suits(const Sequence &sequence)
{
    return singles(sequence).size() >= 2;
}

bool SparseScreen::add(const Sequence &sequence, uint32_t tag)
{
    const std::vector<int> s = singles(sequence);
    if (s.size() < 2 || sequence.size() > size_t(INT32_MAX))
        return false;
    Entry e;
    e.tag = tag;
    e.length = int(sequence.size());
    e.first = s[0];
    e.second = s[1];
    e.secondByte = uint8_t(sequence[size_t(e.second)]._Find_first());
    for (const ByteSet &set : sequence) {
        std::array<uint64_t, 4> w {};
        for (size_t b = set._Find_first(); b < 256; b = set._Find_next(b))
            w[b >> 6] |= uint64_t(1) << (b & 63);
        e.bits.push_back(w);
    }
    const uint8_t firstByte = uint8_t(sequence[size_t(e.first)]._Find_first());
    if (m_byFirst[firstByte].empty())
        m_firstBytes.push_back(firstByte);
    m_byFirst[firstByte].push_back(uint32_t(m_entries.size()));
    m_maxLength = std::max(m_maxLength, e.length);
    m_entries.push_back(std::move(e));
    return true;
}

void SparseScreen::scan(const uint8_t *data, int64_t n, int64_t from, int64_t to, std::vector<Match> &out) const
{
    if (m_entries.empty() || n <= 0)
        return;
    // A match that ends in [from, to) holds its rarest byte within the longest sequence before its end.
    const int64_t begin = std::max<int64_t>(0, from - m_maxLength + 1);
    const int64_t end = std::min(n, to);
    for (const uint8_t byte : m_firstBytes) {
        const std::vector<uint32_t> &entries = m_byFirst[byte];
        for (int64_t q = begin; q < end;) {
            const void *hit = std::memchr(data + q, byte, size_t(end - q));
            if (!hit)
                break;
            const int64_t at = static_cast<const uint8_t *>(hit) - data;
            q = at + 1;
            for (uint32_t i : entries) {
                const Entry &e = m_entries[i];
                const int64_t start = at - e.first;
                const int64_t last = start + e.length - 1;
                if (start < 0 || last >= n || last < from || last >= to || data[start + e.second] != e.secondByte)
                    continue;
                bool all = true;
                for (int k = 0; k < e.length && all; ++k)
                    all = (e.bits[size_t(k)][data[start + k] >> 6] >> (data[start + k] & 63)) & 1;
                if (all)
                    out.push_back({ e.tag, last });
            }
        }
    }
}

} // namespace Hitscope
