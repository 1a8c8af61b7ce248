// SPDX-License-Identifier: GPL-3.0-or-later
#include "xorscreen.h"

#include <bit>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HITSCOPE_XOR_X86 1
#endif

namespace Hitscope {

namespace {

// The vector loops only screen: recording a start is the one thing in them besides vector instructions, so
// that nothing in the loop is a call that would spill its registers.

int64_t screenScalar(const uint8_t *data, int64_t n, const uint8_t *d, int64_t *out)
{
    int64_t found = 0;
    for (int64_t i = 0; i + 5 <= n; ++i)
        if ((data[i] ^ data[i + 1]) == d[0] && (data[i + 1] ^ data[i + 2]) == d[1]
            && (data[i + 2] ^ data[i + 3]) == d[2] && (data[i + 3] ^ data[i + 4]) == d[3])
            out[found++] = i;
    return found;
}

// What a vector loop left at the end goes to the next narrower one; its starts are relative to `from`.
template<typename Screen>
int64_t finish(const uint8_t *data, int64_t n, int64_t from, const uint8_t *d, int64_t *out, int64_t found,
               Screen narrower)
{
    const int64_t tail = narrower(data + from, n - from, d, out + found);
    for (int64_t k = found; k < found + tail; ++k)
        out[k] += from;
    return found + tail;
}

#ifdef __SSE2__
int64_t screenSse2(const uint8_t *data, int64_t n, const uint8_t *d, int64_t *out)
{
    int64_t found = 0;
    int64_t i = 0;
    const __m128i d0 = _mm_set1_epi8(char(d[0])), d1 = _mm_set1_epi8(char(d[1]));
    const __m128i d2 = _mm_set1_epi8(char(d[2])), d3 = _mm_set1_epi8(char(d[3]));
    auto load = [](const uint8_t *p) { return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)); };
    // Loads reach data[i + 19].
    for (; i + 20 <= n; i += 16) {
        const __m128i b0 = load(data + i), b1 = load(data + i + 1), b2 = load(data + i + 2);
        const __m128i b3 = load(data + i + 3), b4 = load(data + i + 4);
        __m128i m = _mm_cmpeq_epi8(_mm_xor_si128(b0, b1), d0);
        m = _mm_and_si128(m, _mm_cmpeq_epi8(_mm_xor_si128(b1, b2), d1));
        m = _mm_and_si128(m, _mm_cmpeq_epi8(_mm_xor_si128(b2, b3), d2));
        m = _mm_and_si128(m, _mm_cmpeq_epi8(_mm_xor_si128(b3, b4), d3));
        for (unsigned bits = unsigned(_mm_movemask_epi8(m)); bits != 0; bits &= bits - 1)
            out[found++] = i + std::countr_zero(bits);
    }
    return finish(data, n, i, d, out, found, screenScalar);
}
#endif

#ifdef HITSCOPE_XOR_X86
__attribute__((target("avx2"))) int64_t screenAvx2(const uint8_t *data, int64_t n, const uint8_t *d, int64_t *out)
{
    int64_t found = 0;
    int64_t i = 0;
    const __m256i d0 = _mm256_set1_epi8(char(d[0])), d1 = _mm256_set1_epi8(char(d[1]));
    const __m256i d2 = _mm256_set1_epi8(char(d[2])), d3 = _mm256_set1_epi8(char(d[3]));
    // Loads reach data[i + 35]. (No lambda for them: it would not have this function's target.)
    for (; i + 36 <= n; i += 32) {
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(data + i));
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(data + i + 1));
        const __m256i b2 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(data + i + 2));
        const __m256i b3 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(data + i + 3));
        const __m256i b4 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(data + i + 4));
        __m256i m = _mm256_cmpeq_epi8(_mm256_xor_si256(b0, b1), d0);
        m = _mm256_and_si256(m, _mm256_cmpeq_epi8(_mm256_xor_si256(b1, b2), d1));
        m = _mm256_and_si256(m, _mm256_cmpeq_epi8(_mm256_xor_si256(b2, b3), d2));
        m = _mm256_and_si256(m, _mm256_cmpeq_epi8(_mm256_xor_si256(b3, b4), d3));
        for (unsigned bits = unsigned(_mm256_movemask_epi8(m)); bits != 0; bits &= bits - 1)
            out[found++] = i + std::countr_zero(bits);
    }
    return finish(data, n, i, d, out, found, screenSse2);
}

// 64 starts a step: each delta's test is one three-way XOR (bytes, next bytes, delta) that is zero where it
// holds, the four are ORed, and the zero bytes are the starts. About half the AVX2 loop's instructions per byte.
__attribute__((target("avx512f,avx512bw"))) int64_t screenAvx512(const uint8_t *data, int64_t n, const uint8_t *d,
                                                                 int64_t *out)
{
    int64_t found = 0;
    int64_t i = 0;
    const __m512i d0 = _mm512_set1_epi8(char(d[0])), d1 = _mm512_set1_epi8(char(d[1]));
    const __m512i d2 = _mm512_set1_epi8(char(d[2])), d3 = _mm512_set1_epi8(char(d[3]));
    // Loads reach data[i + 67].
    for (; i + 68 <= n; i += 64) {
        const __m512i b0 = _mm512_loadu_si512(data + i), b1 = _mm512_loadu_si512(data + i + 1);
        const __m512i b2 = _mm512_loadu_si512(data + i + 2), b3 = _mm512_loadu_si512(data + i + 3);
        const __m512i b4 = _mm512_loadu_si512(data + i + 4);
        const __m512i x0 = _mm512_ternarylogic_epi32(b0, b1, d0, 0x96);
        const __m512i x1 = _mm512_ternarylogic_epi32(b1, b2, d1, 0x96);
        const __m512i x2 = _mm512_ternarylogic_epi32(b2, b3, d2, 0x96);
        const __m512i x3 = _mm512_ternarylogic_epi32(b3, b4, d3, 0x96);
        const __m512i any = _mm512_or_si512(_mm512_ternarylogic_epi32(x0, x1, x2, 0xfe), x3);
        for (uint64_t bits = _mm512_testn_epi8_mask(any, any); bits != 0; bits &= bits - 1)
            out[found++] = i + std::countr_zero(bits);
    }
    return finish(data, n, i, d, out, found, screenAvx2);
}
#endif

} // namespace

bool XorScreen::supported(Isa isa)
{
    switch (isa) {
    case Isa::Scalar:
        return true;
    case Isa::Sse2:
#ifdef __SSE2__
        return true;
#else
        return false;
#endif
    case Isa::Avx2:
#ifdef HITSCOPE_XOR_X86
        return __builtin_cpu_supports("avx2");
#else
        return false;
#endif
    case Isa::Avx512:
#ifdef HITSCOPE_XOR_X86
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f")
            && __builtin_cpu_supports("avx512bw");
#else
        return false;
#endif
    }
    return false;
}

XorScreen::Isa XorScreen::best()
{
    static const Isa isa = supported(Isa::Avx512) ? Isa::Avx512
        : supported(Isa::Avx2)                     ? Isa::Avx2
        : supported(Isa::Sse2)                     ? Isa::Sse2
                                                   : Isa::Scalar;
    return isa;
}

int64_t XorScreen::screen(const uint8_t *data, int64_t n, const uint8_t *d, int64_t *out, Isa isa)
{
    switch (supported(isa) ? isa : Isa::Scalar) {
#ifdef HITSCOPE_XOR_X86
    case Isa::Avx512:
        return screenAvx512(data, n, d, out);
    case Isa::Avx2:
        return screenAvx2(data, n, d, out);
#endif
#ifdef __SSE2__
    case Isa::Sse2:
        return screenSse2(data, n, d, out);
#endif
    default:
        return screenScalar(data, n, d, out);
    }
}

} // namespace Hitscope
