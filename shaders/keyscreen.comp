// SPDX-License-Identifier: GPL-3.0-or-later
// Hitscope's key screen (core/automata/keyfilter.h): marks every 64-byte block of the haystack in which a key of
// the atom prefilter's sequences starts. Each invocation takes 16 bytes at a time, grid-stride; the tables of
// one- and two-byte keys and the bitmap of the three- and four-byte keys' hashes are copied to shared memory
// once per workgroup, and only a set bitmap bit costs a probe of the exact hash table in global memory.
//
// Keys words (KeyFilter::words()): [0] flags (1 bytes, 2 pairs, 4 triples, 8 quads), [1] quad slots' offset,
// [2] their shift, [3] their free-slot value, [4] triple slots' offset, [5] their shift; from word 8 the byte
// table (8 words), the pair table (2048 words), the bitmap (4096 words); then the slots.
//
// Every invocation that ran its whole loop adds one to the completion counter (word 0 of Blocks), so the host
// knows that no block was left unscreened (Mesa's software drivers cut long loops; the host keeps each
// invocation's loop short there).
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
// [0] invocations completed, then one bit per 64-byte block.
layout(std430, binding = 3) buffer Blocks { uint blocks[]; };

const uint HEADER = 8u;
const uint SHARED_WORDS = 8u + 2048u + 4096u;
const uint PAIRS = 8u;
const uint BITMAP = 8u + 2048u;
const uint BITMAP_SHIFT = 15u; // 32 - KeyFilter::kBitmapLog2

shared uint table[SHARED_WORDS];

bool tableBit(uint at, uint i)
{
    return ((table[at + (i >> 5u)] >> (i & 31u)) & 1u) != 0u;
}

bool probe(uint key, uint at, uint shift, uint freeSlot, uint slot)
{
    uint mask = 0xffffffffu >> shift;
    for (uint i = slot, n = 0u; n <= mask; i = (i + 1u) & mask, ++n) {
        uint v = keys[at + i];
        if (v == key)
            return true;
        if (v == freeSlot)
            return false;
    }
    return false;
}

void main()
{
    for (uint i = gl_LocalInvocationID.x; i < SHARED_WORDS; i += gl_WorkGroupSize.x)
        table[i] = keys[HEADER + i];
    barrier();
    uint flags = keys[0];
    uint quadAt = keys[1], quadShift = keys[2], quadFree = keys[3];
    uint tripleAt = keys[4], tripleShift = keys[5];
    uint lanes = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint lane = gl_GlobalInvocationID.x;
    uint steps = (chunks + lanes - 1u) / lanes;
    uint done = 0u;
    for (uint s = 0u; s < steps; ++s) {
        uint c = lane + s * lanes;
        ++done;
        if (c >= chunks)
            continue;
        uvec4 v = hay16[c];
        uint w[5] = uint[5](v.x, v.y, v.z, v.w, c + 1u < chunks ? hay16[c + 1u].x : 0u);
        uint base = c * 16u;
        bool hit = false;
        for (uint k = 0u; k < 16u && !hit; ++k) {
            uint p = base + k;
            if (p >= usedBytes)
                break;
            uint available = usedBytes - p;
            uint q = k & 3u;
            uint word = q == 0u ? w[k >> 2u] : (w[k >> 2u] >> (8u * q)) | (w[(k >> 2u) + 1u] << (32u - 8u * q));
            if ((flags & 1u) != 0u && tableBit(0u, word & 0xffu))
                hit = true;
            else if ((flags & 2u) != 0u && available >= 2u && tableBit(PAIRS, word & 0xffffu))
                hit = true;
            if (!hit && (flags & 4u) != 0u && available >= 3u) {
                uint t = word & 0xffffffu;
                hit = tableBit(BITMAP, (t * 0xC2B2AE35u) >> BITMAP_SHIFT)
                    && probe(t, tripleAt, tripleShift, 0xffffffffu, (t * 0x27D4EB2Fu) >> tripleShift);
            }
            if (!hit && (flags & 8u) != 0u && available >= 4u) {
                hit = tableBit(BITMAP, (word * 0x9E3779B1u) >> BITMAP_SHIFT)
                    && probe(word, quadAt, quadShift, quadFree, (word * 0x85EBCA6Bu) >> quadShift);
            }
        }
        if (hit) {
            uint block = c >> 2u;
            uint bit = 1u << (block & 31u);
            if ((blocks[1u + (block >> 5u)] & bit) == 0u)
                atomicOr(blocks[1u + (block >> 5u)], bit);
        }
    }
    if (done == steps)
        atomicAdd(blocks[0], 1u);
}
