// SPDX-License-Identifier: GPL-3.0-or-later
#include "yaramatchfinder.h"

#include <algorithm>

namespace Hitscope {

YaraMatchFinder::YaraMatchFinder(const StartFinder &starts)
    : m_starts(starts)
{
}

void YaraMatchFinder::find(const YaraString &yara, int pattern, const std::vector<int64_t> &ends, int64_t fileSize,
                           const StartFinder::ByteAt &byteAt, bool verify, std::vector<Hit> &out, size_t limit) const
{
    const size_t full = out.size() + std::min(limit, std::numeric_limits<size_t>::max() - out.size());
    // YARA's fullword: no alphanumeric byte (or wide character) right before or after the match.
    auto isAlnum = [](uint8_t b) { return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z'); };
    auto accept = [&](int64_t start, int64_t length, bool wide) {
        if (yara.fixedOffset >= 0 && start != yara.fixedOffset)
            return;
        if (yara.fullword) {
            const int64_t end = start + length;
            if (wide) {
                if (start >= 2 && byteAt(start - 1) == 0 && isAlnum(byteAt(start - 2)))
                    return;
                if (end + 1 < fileSize && byteAt(end + 1) == 0 && isAlnum(byteAt(end)))
                    return;
            } else {
                if (start >= 1 && isAlnum(byteAt(start - 1)))
                    return;
                if (end < fileSize && isAlnum(byteAt(end)))
                    return;
            }
        }
        out.push_back({ pattern, start, length });
    };
    auto isWide = [&](int64_t length, bool matchedWide) {
        return yara.textLength > 0 ? length == 2 * int64_t(yara.textLength) : matchedWide;
    };
    if (yara.fixedLength > 0 && !verify) {
        for (size_t k = 0; k < ends.size() && out.size() < full; ++k) {
            const int64_t start = ends[k] - yara.fixedLength + 1;
            if (start >= 0)
                accept(start, yara.fixedLength, isWide(yara.fixedLength, yara.matcherIsWide));
        }
        return;
    }
    // Every start of a match ending at e lies between the leftmost one and e - minLength + 1; YARA reports
    // one match per start, the one its matcher prefers.
    // A match that starts further back than kScanLimit from an end ends elsewhere, and is tried from the span
    // of its own end (see lengthLimited()).
    const bool limited = lengthLimited(yara);
    // Starts of the matches earlier slices found, ascending: a start tried again gives the same match.
    std::vector<int64_t> earlier;
    auto trySpans = [&](const std::vector<int64_t> &slice, bool again) {
        std::vector<int64_t> leftmost;
        m_starts.leftmostStarts(pattern, slice, fileSize, byteAt, leftmost, verify);
        std::vector<std::pair<int64_t, int64_t>> spans;
        spans.reserve(slice.size());
        for (size_t k = 0; k < slice.size(); ++k) {
            if (leftmost[k] < 0)
                continue;
            const int64_t lo
                = limited ? std::max(leftmost[k], slice[k] - PriorityMatcher::kScanLimit + 1) : leftmost[k];
            spans.emplace_back(lo, std::max(lo, slice[k] - yara.minLength + 1));
        }
        std::sort(spans.begin(), spans.end());
        int64_t next = 0; // starts below this were tried already, in this slice
        for (const auto &[lo, hi] : spans) {
            for (int64_t s = std::max(lo, next); s <= hi && out.size() < full; ++s) {
                if (again && !earlier.empty() && s <= earlier.back()
                    && std::binary_search(earlier.begin(), earlier.end(), s))
                    continue;
                bool wide = yara.matcherIsWide;
                int64_t length = yara.matcher->match(s, fileSize, byteAt);
                if (length < 0 && yara.wideMatcher) {
                    length = yara.wideMatcher->match(s, fileSize, byteAt);
                    wide = true;
                }
                // YARA drops empty matches.
                if (length > 0)
                    accept(s, length, isWide(length, wide));
            }
            next = std::max(next, hi + 1);
        }
    };
    // Where only the first few matches are wanted, the ends are taken a slice at a time, from the first, so that
    // a string with a hundred thousand ends in a file costs a few slices.
    const size_t slice = limit < ends.size() / 4 ? std::max<size_t>(64, 4 * limit) : ends.size();
    if (slice >= ends.size()) {
        trySpans(ends, false);
        return;
    }
    for (size_t at = 0; at < ends.size() && out.size() < full; at += slice) {
        const auto e = ends.begin() + ptrdiff_t(std::min(ends.size(), at + slice));
        const size_t before = out.size();
        trySpans(std::vector<int64_t>(ends.begin() + ptrdiff_t(at), e), at > 0);
        const size_t sorted = earlier.size();
        for (size_t k = before; k < out.size(); ++k)
            earlier.push_back(out[k].offset);
        std::sort(earlier.begin() + ptrdiff_t(sorted), earlier.end());
        std::inplace_merge(earlier.begin(), earlier.begin() + ptrdiff_t(sorted), earlier.end());
    }
}

bool YaraMatchFinder::lengthLimited(const YaraString &yara)
{
    return yara.matcher->lengthLimited() && (!yara.wideMatcher || yara.wideMatcher->lengthLimited());
}

} // namespace Hitscope
