// SPDX-License-Identifier: GPL-3.0-or-later
// Hitscope's key screen (core/automata/keyfilter.h): marks every 64-byte block of the haystack in which a sequence
// of the atom prefilter may end, from the keys that start in the bytes before, with the length classes of those
// sequences (how far back the host's screens must look). Each invocation takes 16 bytes at a
// time, grid-stride (neighbouring lanes read neighbouring bytes); the tables of one- and two-byte keys and the
// bitmap of the longer keys' hashes are copied to shared memory once per workgroup, and only a set bitmap bit
// costs a probe of an exact hash table in global memory. The sixteen positions are written out (no loop): an
// array indexed by a loop variable would live in local memory.
//
// Keys words (KeyFilter::words()): [0] flags (1 bytes, 2 pairs, 4 triples, 8 quads and longer), [1] quad slots'
// offset, [2] their shift, [3] their free-slot value, [4] triple slots' offset, [5] their shift, [6] and [7] the
// span of ends of the one- and two-byte keys; from word 8 the byte table (8 words), the pair table (2048 words),
// the bitmap (4096 words, two bits per key); then the slots: triples of 2 words (key, span), quads of 4 (first four bytes, the
// next four, their mask, span). A span is the first and last end from the key's start (11 bits each) and the
// sequences' length classes (4 bits).
//
// Every invocation whose loops all ended on their own conditions adds one to the completion counter (word 0 of
// Blocks), so the host knows that no block was left unmarked: Mesa's software drivers stop an invocation's loops
// once they ran 65,535 iterations in all (each then runs at most once more), and the host keeps the work per
// invocation well below that there (KeyFilter::longestProbe()).
#version 440

layout(local_size_x = 256) in;

layout(std140, binding = 0) uniform Params
{
    uint usedBytes; // haystack bytes
    uint chunks;    // 16-byte chunks: (usedBytes + 15) / 16
    uint pad0;
    uint pad1;
};

layout(std430, binding = 1) readonly buffer Haystack16 { uvec4 hay16[]; };
layout(std430, binding = 2) readonly buffer Keys { uint keys[]; };
// [0] invocations completed, then 4 bits per 64-byte block (its length classes; 0: unmarked), 8 blocks a word.
layout(std430, binding = 3) buffer Blocks { uint blocks[]; };

const uint HEADER = 8u;
const uint SHARED_WORDS = 8u + 2048u + 4096u;
const uint PAIRS = 8u;
const uint BITMAP = 8u + 2048u;
const uint BITMAP_SHIFT = 15u; // 32 - KeyFilter::kBitmapLog2
const uint NO_END = 0xffffffffu;

shared uint table[SHARED_WORDS];

uint flags, quadAt, quadShift, quadFree, tripleAt, tripleShift, byteSpan, pairSpan;
bool complete = true; // every loop so far ended on its own condition

bool tableBit(uint at, uint i)
{
    return ((table[at + (i >> 5u)] >> (i & 31u)) & 1u) != 0u;
}

// Bytes p .. p + 3 of a word pair a, b where p is q bytes into a.
uint funnel(uint a, uint b, uint q)
{
    return q == 0u ? a : (a >> (8u * q)) | (b << (32u - 8u * q));
}

void take(uint s, inout uint lo, inout uint hi, inout uint classes)
{
    lo = min(lo, s & 0x7ffu);
    hi = max(hi, (s >> 11u) & 0x7ffu);
    classes |= s >> 22u;
}

// Word j of a chunk and the two after it (selects, not an array: an array indexed at run time lives in local memory).
uint wordOf(uvec4 v, uvec2 n, uint j)
{
    return j == 0u ? v.x : j == 1u ? v.y : j == 2u ? v.z : j == 3u ? v.w : j == 4u ? n.x : n.y;
}

// The tables in shared memory at position p (word: bytes p .. p + 3): the spans of one- and two-byte keys are taken
// at once; a position whose three- or four-byte hash has both its bits set becomes a candidate (bit k of
// `triples` or `quads`), probed after all sixteen, so that a warp's lanes wait for global memory together.
void position(uint k, uint p, uint word, inout uint first, inout uint last, inout uint classes,
              inout uint triples, inout uint quads)
{
    if (p >= usedBytes)
        return;
    uint available = usedBytes - p;
    uint lo = 0xffffffffu, hi = 0u;
    if ((flags & 1u) != 0u && tableBit(0u, word & 0xffu))
        take(byteSpan, lo, hi, classes);
    if ((flags & 2u) != 0u && available >= 2u && tableBit(PAIRS, word & 0xffffu))
        take(pairSpan, lo, hi, classes);
    if (hi >= lo && lo != 0xffffffffu) {
        first = min(first, p + lo);
        last = max(last, min(p + hi, usedBytes - 1u));
    }
    uint t = word & 0xffffffu;
    if ((flags & 4u) != 0u && available >= 3u && tableBit(BITMAP, (t * 0xC2B2AE35u) >> BITMAP_SHIFT)
        && tableBit(BITMAP, (t * 0x165667B1u) >> BITMAP_SHIFT))
        triples |= 1u << k;
    if ((flags & 8u) != 0u && available >= 4u && tableBit(BITMAP, (word * 0x9E3779B1u) >> BITMAP_SHIFT)
        && tableBit(BITMAP, (word * 0x2545F491u) >> BITMAP_SHIFT))
        quads |= 1u << k;
}

// The exact tables for a candidate at p.
void probe(uint p, uint word, uint next, bool triple, bool quad, inout uint first, inout uint last,
           inout uint classes)
{
    uint available = usedBytes - p;
    uint lo = 0xffffffffu, hi = 0u;
    if (triple) {
        uint t = word & 0xffffffu;
        uint mask = 0xffffffffu >> tripleShift;
        uint i = (t * 0x27D4EB2Fu) >> tripleShift;
        bool ended = false;
        for (uint n = 0u; n <= mask; ++n, i = (i + 1u) & mask) {
            uint v = keys[tripleAt + 2u * i];
            if (v == 0xffffffffu) {
                ended = true;
                break;
            }
            if (v == t)
                take(keys[tripleAt + 2u * i + 1u], lo, hi, classes);
        }
        complete = complete && ended;
    }
    if (quad) {
        uint mask = 0xffffffffu >> quadShift;
        uint i = (word * 0x85EBCA6Bu) >> quadShift;
        bool ended = false;
        for (uint n = 0u; n <= mask; ++n, i = (i + 1u) & mask) {
            uint at = quadAt + 4u * i;
            uint v = keys[at];
            if (v == quadFree) {
                ended = true;
                break;
            }
            uint restMask = keys[at + 2u];
            if (v == word && (next & restMask) == keys[at + 1u] && available >= 4u + uint(bitCount(restMask)) / 8u)
                take(keys[at + 3u], lo, hi, classes);
        }
        complete = complete && ended;
    }
    if (hi >= lo && lo != 0xffffffffu) {
        first = min(first, p + lo);
        last = max(last, min(p + hi, usedBytes - 1u));
    }
}

void main()
{
    uint i = gl_LocalInvocationID.x;
    for (; i < SHARED_WORDS; i += gl_WorkGroupSize.x)
        table[i] = keys[HEADER + i];
    complete = i >= SHARED_WORDS;
    barrier();
    flags = keys[0];
    quadAt = keys[1];
    quadShift = keys[2];
    quadFree = keys[3];
    tripleAt = keys[4];
    tripleShift = keys[5];
    byteSpan = keys[6];
    pairSpan = keys[7];
    uint lanes = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint lane = gl_GlobalInvocationID.x;
    uint steps = (chunks + lanes - 1u) / lanes;
    uint done = 0u;
    for (uint s = 0u; s < steps; ++s) {
        uint c = lane + s * lanes;
        if (c >= chunks) {
            ++done;
            continue;
        }
        uvec4 v = hay16[c];
        uvec2 n = c + 1u < chunks ? hay16[c + 1u].xy : uvec2(0u);
        uint p = c * 16u;
        uint first = NO_END, last = 0u, classes = 0u, triples = 0u, quads = 0u;
        position(0u, p + 0u, v.x, first, last, classes, triples, quads);
        position(1u, p + 1u, funnel(v.x, v.y, 1u), first, last, classes, triples, quads);
        position(2u, p + 2u, funnel(v.x, v.y, 2u), first, last, classes, triples, quads);
        position(3u, p + 3u, funnel(v.x, v.y, 3u), first, last, classes, triples, quads);
        position(4u, p + 4u, v.y, first, last, classes, triples, quads);
        position(5u, p + 5u, funnel(v.y, v.z, 1u), first, last, classes, triples, quads);
        position(6u, p + 6u, funnel(v.y, v.z, 2u), first, last, classes, triples, quads);
        position(7u, p + 7u, funnel(v.y, v.z, 3u), first, last, classes, triples, quads);
        position(8u, p + 8u, v.z, first, last, classes, triples, quads);
        position(9u, p + 9u, funnel(v.z, v.w, 1u), first, last, classes, triples, quads);
        position(10u, p + 10u, funnel(v.z, v.w, 2u), first, last, classes, triples, quads);
        position(11u, p + 11u, funnel(v.z, v.w, 3u), first, last, classes, triples, quads);
        position(12u, p + 12u, v.w, first, last, classes, triples, quads);
        position(13u, p + 13u, funnel(v.w, n.x, 1u), first, last, classes, triples, quads);
        position(14u, p + 14u, funnel(v.w, n.x, 2u), first, last, classes, triples, quads);
        position(15u, p + 15u, funnel(v.w, n.x, 3u), first, last, classes, triples, quads);
        uint cand = triples | quads;
        for (; cand != 0u; cand &= cand - 1u) {
            uint k = uint(findLSB(cand));
            uint j = k >> 2u, q = k & 3u;
            uint word = funnel(wordOf(v, n, j), wordOf(v, n, j + 1u), q);
            uint next = funnel(wordOf(v, n, j + 1u), wordOf(v, n, j + 2u), q);
            probe(p + k, word, next, (triples & (1u << k)) != 0u, (quads & (1u << k)) != 0u, first, last, classes);
        }
        complete = complete && cand == 0u;
        if (first == NO_END) {
            ++done;
            continue;
        }
        // The blocks of every end the keys allow (a run of them where a key's sequences are long).
        uint b = first >> 6u;
        for (; b <= (last >> 6u); ++b) {
            uint bits = classes << (4u * (b & 7u));
            if ((blocks[1u + (b >> 3u)] & bits) != bits)
                atomicOr(blocks[1u + (b >> 3u)], bits);
        }
        complete = complete && b > (last >> 6u);
        ++done;
    }
    if (complete && done == steps)
        atomicAdd(blocks[0], 1u);
}
