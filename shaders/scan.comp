// SPDX-License-Identifier: GPL-3.0-or-later
// Hitscope's DFA scan kernel: persistent workers claim work items (streams) with an atomic add on a per-round
// head counter and walk each stream's bytes through its group's byte-class compressed DFA (the layout of
// core/automata/dfa.h). Every attempted hit is counted, even when the ring is full, so the host can re-run.
//
// A stream may be longer than one piece: round r scans piece r of every stream that has one, starting from
// the state round r-1 left. Mesa's software drivers stop an invocation after 65,535 loop iterations, so there
// each invocation takes a bounded number of pieces per dispatch (budget) and the host dispatches waves.
#version 440

#ifndef WG_SIZE
#define WG_SIZE 64
#endif
layout(local_size_x = WG_SIZE) in;

layout(std140, binding = 0) uniform Params
{
    uint round;       // piece index scanned by this dispatch
    uint queueLen;    // streams that have piece `round` (they come first)
    uint budget;      // pieces one invocation may take per dispatch; 0: no limit (drain the queue)
    uint pieceBytes;  // bytes per piece
    uint hitCapacity; // entries in the hit ring
    uint numGroups;   // DFA groups in the tables
    uint pad1;
    uint pad2;
};

layout(std430, binding = 1) readonly buffer Haystack { uint hay[]; };
layout(std430, binding = 2) readonly buffer Transitions { uint trans[]; };
// Group descriptors (8 words each), byte classes (256 words per group), accept indices and entries.
layout(std430, binding = 3) readonly buffer Aux { uint aux[]; };
// Per stream, 12 words: data start (haystack byte), length, own begin, own end (relative), group,
// initial state (premultiplied), flags (bit 0: the stream ends at the end of its file), exit position, entry
// position (where the state is recorded: state after the byte before it), 3 unused.
layout(std430, binding = 4) readonly buffer Streams { uint streams[]; };
// Per stream, 4 words: state, bytes done, state at the exit position, state at the entry position.
layout(std430, binding = 5) buffer StreamState { uint sstate[]; };
// [0] hit attempts, [1] streams completed, [2 + r] head of round r.
layout(std430, binding = 6) buffer Queue { uint queue[]; };
// Per hit, 3 words: stream, pattern, end (relative to the stream's data start).
layout(std430, binding = 7) buffer Hits { uint hits[]; };
// The haystack again, 16 bytes at a time: one load feeds sixteen transitions.
layout(std430, binding = 8) readonly buffer Haystack16 { uvec4 hay16[]; };

// Byte classes of the first SHARED_GROUPS groups, four per word, in shared memory: the class look-up is on
// every byte's path, the transition look-up cannot be shared.
const uint SHARED_GROUPS = 16u;
shared uint sharedClasses[SHARED_GROUPS * 64u];

const uint ACCEPT_FLAG = 0x80000000u;
const uint STATE_MASK = 0x7fffffffu;
const uint PATTERN_MASK = 0x3fffffffu;

void emitHit(uint sid, uint pattern, uint end)
{
    uint slot = atomicAdd(queue[0], 1u);
    if (slot < hitCapacity) {
        hits[slot * 3u] = sid;
        hits[slot * 3u + 1u] = pattern;
        hits[slot * 3u + 2u] = end;
    }
}

// Reports the accept entries of `state` reached on the byte at `pos`: kind 0 ends at pos, kind 1 at pos - 1,
// kind 2 only at the end of the file.
void emitAccepts(uint sid, uint state, uint pos, uint numClasses, uint aiBase, uint aeBase, uint ownBegin,
                 uint ownEnd, bool atEof)
{
    uint st = state / numClasses;
    uint first = aux[aiBase + st];
    uint last = aux[aiBase + st + 1u];
    for (uint k = first; k < last; ++k) {
        uint e = aux[aeBase + k];
        uint kind = e >> 30;
        uint end;
        if (atEof) {
            if (kind != 2u)
                continue;
            end = pos;
        } else {
            if (kind == 2u || (kind == 1u && pos == 0u))
                continue;
            end = kind == 0u ? pos : pos - 1u;
        }
        if (end >= ownBegin && end < ownEnd)
            emitHit(sid, e & PATTERN_MASK, end);
    }
}

uint classOf(uint g, uint cBase, uint byteValue)
{
    if (g < SHARED_GROUPS)
        return (sharedClasses[g * 64u + (byteValue >> 2)] >> ((byteValue & 3u) << 3)) & 0xffu;
    return aux[cBase + byteValue];
}

void scanPiece(uint sid)
{
    uint b = sid * 12u;
    uint dataStart = streams[b];
    uint len = streams[b + 1u];
    uint ownBegin = streams[b + 2u];
    uint ownEnd = streams[b + 3u];
    uint group = streams[b + 4u];
    uint g = group * 8u;
    uint flags = streams[b + 6u];
    uint carryPos = streams[b + 7u];
    uint entryPos = streams[b + 8u];
    uint tBase = aux[g];
    uint numClasses = aux[g + 1u];
    uint cBase = aux[g + 2u];
    uint aiBase = aux[g + 3u];
    uint aeBase = aux[g + 4u];

    uint begin = round * pieceBytes;
    uint end = min(len, begin + pieceBytes);
    uint s = round == 0u ? streams[b + 5u] : sstate[sid * 4u];
    uint i = begin;
    // Bytes one at a time up to a 16-byte boundary of the haystack, then 16 at a time, then the tail.
    uint alignedStart = min(end, begin + ((16u - ((dataStart + begin) & 15u)) & 15u));
    uint vectorEnd = alignedStart + ((end - alignedStart) & ~15u);
    for (; i < alignedStart; ++i) {
        if (i == carryPos)
            sstate[sid * 4u + 2u] = s;
        if (i == entryPos)
            sstate[sid * 4u + 3u] = s;
        uint p = dataStart + i;
        uint e = trans[tBase + s + classOf(group, cBase, (hay[p >> 2] >> ((p & 3u) << 3)) & 0xffu)];
        s = e & STATE_MASK;
        if ((e & ACCEPT_FLAG) != 0u)
            emitAccepts(sid, s, i, numClasses, aiBase, aeBase, ownBegin, ownEnd, false);
    }
    for (; i < vectorEnd; i += 16u) {
        uvec4 block = hay16[(dataStart + i) >> 4];
        for (uint w = 0u; w < 4u; ++w) {
            uint word = block[w];
            for (uint k = 0u; k < 4u; ++k) {
                uint pos = i + w * 4u + k;
                if (pos == carryPos)
                    sstate[sid * 4u + 2u] = s;
                if (pos == entryPos)
                    sstate[sid * 4u + 3u] = s;
                uint e = trans[tBase + s + classOf(group, cBase, (word >> (k * 8u)) & 0xffu)];
                s = e & STATE_MASK;
                if ((e & ACCEPT_FLAG) != 0u)
                    emitAccepts(sid, s, pos, numClasses, aiBase, aeBase, ownBegin, ownEnd, false);
            }
        }
    }
    for (; i < end; ++i) {
        if (i == carryPos)
            sstate[sid * 4u + 2u] = s;
        if (i == entryPos)
            sstate[sid * 4u + 3u] = s;
        uint p = dataStart + i;
        uint e = trans[tBase + s + classOf(group, cBase, (hay[p >> 2] >> ((p & 3u) << 3)) & 0xffu)];
        s = e & STATE_MASK;
        if ((e & ACCEPT_FLAG) != 0u)
            emitAccepts(sid, s, i, numClasses, aiBase, aeBase, ownBegin, ownEnd, false);
    }
    sstate[sid * 4u] = s;
    sstate[sid * 4u + 1u] = end;
    if (end == len) {
        if (carryPos == len)
            sstate[sid * 4u + 2u] = s;
        if ((flags & 1u) != 0u && len > 0u)
            emitAccepts(sid, s, len - 1u, numClasses, aiBase, aeBase, ownBegin, ownEnd, true);
        atomicAdd(queue[1], 1u);
    }
}

void main()
{
    // Byte classes of the first groups into shared memory, packed four to a word.
    uint sharedGroups = min(numGroups, SHARED_GROUPS);
    for (uint k = gl_LocalInvocationID.x; k < sharedGroups * 64u; k += gl_WorkGroupSize.x) {
        uint g = k / 64u;
        uint cBase = aux[g * 8u + 2u] + (k % 64u) * 4u;
        sharedClasses[k] = aux[cBase] | (aux[cBase + 1u] << 8) | (aux[cBase + 2u] << 16) | (aux[cBase + 3u] << 24);
    }
    barrier();

    uint taken = 0u;
    for (;;) {
        if (budget != 0u && taken >= budget)
            break;
        uint idx = atomicAdd(queue[2u + round], 1u);
        if (idx >= queueLen)
            break;
        scanPiece(idx);
        ++taken;
    }
}
