// SPDX-License-Identifier: GPL-3.0-or-later
// Hitscope's DFA scan kernel. The host uploads one segment table per batch; work items are derived here:
// main item i scans segment i % numSegments with group i / numSegments (a bounded group over the segment and
// its overlap, an unbounded group from a warm-up before the bytes it owns). Persistent workers claim items
// with an atomic add on a head counter and walk each item's bytes through its group's byte-class compressed
// DFA (the layout of core/automata/dfa.h). Every attempted hit is counted, even when the ring is full, so the
// host can re-run.
//
// Unbounded items start speculatively; fix-up passes (mode 1) compare each one's state where it starts owning
// bytes with the state its predecessor ended in and scan it again from the true state where they differ, with
// a new generation for its hits. A pass with no re-scan proves every chain consistent.
//
// An item may be longer than one piece: round r scans piece r, from the state round r-1 left. Mesa's software
// drivers stop an invocation's loops after 65,535 iterations in total (each loop then runs at most once more),
// so there each invocation takes a bounded number of items per dispatch (budget) and every loop checks that it
// reached its bound: an item counts as completed only when all of its loops did.
//
// Counted patterns (accept entries with COUNTED_BIT) are not written one hit each: an invocation sums their ends
// per pattern, or per state (see pendingState), and writes each sum as one count entry (COUNT_FLAG, and
// STATE_FLAG for a state, on the key in the pattern word, the number in the end word) when its slot is needed
// for another key and when the piece ends. Ownership is checked per end before it is counted; count entries
// carry the item and generation like hits and take their place in the ring (and its attempt counter), so the
// host filters generations and re-runs full rings for both alike. Runs of `{ 00 00 00 00 }` in zeroed pages
// then cost a handful of entries per piece instead of one per byte.
#version 440

#ifndef WG_SIZE
#define WG_SIZE 64
#endif
// 0 for tables with no counted pattern: the pending sums then take no registers (on the H200's driver
// 63 registers -> 42: more invocations per multiprocessor, and this kernel waits on memory).
#ifndef COUNTING
#define COUNTING 1
#endif
layout(local_size_x = WG_SIZE) in;

layout(std140, binding = 0) uniform Params
{
    uint mode;          // 0: main items; 1: a fix-up pass over the unbounded items
    uint round;         // piece index scanned by this dispatch
    uint headSlot;      // queue word this dispatch claims items from
    uint counterSlot;   // queue words: items completed, items scanned again (fix-up)
    uint numItems;      // items of this mode
    uint budget;        // items one invocation may take per dispatch; 0: no limit (drain the queue)
    uint pieceBytes;    // bytes per piece
    uint hitCapacity;   // entries in the hit ring
    uint numGroups;     // DFA groups in the tables
    uint numSegments;
    uint numUnbounded;
    uint unboundedBase; // word offset of the unbounded items' arrays in ItemState
    uint carryBase;     // word offset of the carried states in Segments
    uint generation;    // fix-up: the generation this pass gives the items it scans again
    uint pad0;
    uint pad1;
};

layout(std430, binding = 1) readonly buffer Haystack { uint hay[]; };
layout(std430, binding = 2) readonly buffer Transitions { uint trans[]; };
// Group descriptors (12 words each: transitions base, classes, class base, accept index base, accept entry
// base, start states for the three contexts, unbounded index or ~0), the unbounded groups' indices, byte
// classes (256 words per group), accept indices and entries.
layout(std430, binding = 3) readonly buffer Aux { uint aux[]; };
// Per segment, 8 words: haystack offset of the bounded scan's start, its length, own begin, own end (relative
// to that start), flags, haystack offset of the unbounded scan's start, carry slot, unused. Then the carried
// states, numUnbounded per slot. Flags: bit 0 the segment ends its file; bits 1-2 and 3-4 the context before
// the bounded and the unbounded scan (0 file start, 1 after a non-word byte, 2 after a word byte); bit 5 the
// segment starts its chunk; bit 6 that chunk is the file's first.
layout(std430, binding = 4) readonly buffer Segments { uint segs[]; };
// Per main item, 2 words: state after its last piece, bytes done (~0 once a loop was cut). From unboundedBase,
// per unbounded item (u * numSegments + segment): entry states, exit states, generations, active passes.
layout(std430, binding = 5) buffer ItemState { uint istate[]; };
// [0] hit attempts, then heads and counters at the slots the host gives each dispatch.
layout(std430, binding = 6) buffer Queue { uint queue[]; };
// Per hit: main item, pattern, end relative to the item's own begin, generation.
layout(std430, binding = 7) buffer Hits { uvec4 hits[]; };
// The haystack again, 16 bytes at a time: one load feeds sixteen transitions.
layout(std430, binding = 8) readonly buffer Haystack16 { uvec4 hay16[]; };

const uint GROUP_WORDS = 12u;
const uint NONE = 0xffffffffu;
// Byte classes of the first SHARED_GROUPS groups, four per word, in shared memory: the class look-up is on
// every byte's path, the transition look-up cannot be shared.
const uint SHARED_GROUPS = 16u;
shared uint sharedClasses[SHARED_GROUPS * 64u];

const uint ACCEPT_FLAG = 0x80000000u;
const uint STATE_MASK = 0x7fffffffu;
const uint PATTERN_MASK = 0x1fffffffu;
const uint COUNTED_BIT = 0x20000000u;
const uint COUNT_FLAG = 0x80000000u;
const uint STATE_FLAG = 0x40000000u;
const uint COUNTED_STATE = 0x80000000u;
const uint INDEX_MASK = 0x7fffffffu;

// What one scan of one item looks like; positions are relative to its first byte.
struct Run
{
    uint hitId;
    uint group;
    uint dataStart;
    uint len;
    uint ownBegin;
    uint ownEnd;
    uint entryPos;
    uint exitPos;
    uint initState;
    bool eof;
    uint generation;
    uint slot;   // main item whose ItemState words carry the state between rounds
    uint uItem;  // unbounded item whose entry and exit states are recorded, or NONE
};

void emitHit(Run r, uint pattern, uint end)
{
    uint slot = atomicAdd(queue[0], 1u);
    if (slot < hitCapacity)
        hits[slot] = uvec4(r.hitId, pattern, end - r.ownBegin, r.generation);
}

// Counted ends not yet written, for the piece being scanned, summed in four slots per kind of key. A run of zeros
// keeps the DFA in one state whose accept entries are all counted ends at the byte itself (COUNTED_STATE in its
// accept index): visits to such a state are summed per state, with no look at its entries, and written as one
// state entry (STATE_FLAG) that the host expands into the state's patterns. The counted ends of other states are
// summed per pattern. A slot's sum is written when the slot is needed for another key and when the piece ends.
// Unrolled by hand, with no loop: loops would count against Mesa's limit (and a loop here, inlined into the byte
// loops, keeps the compiler from unrolling them).
uvec4 pendingState;
uvec4 pendingVisits;
uint pendingStateNext;
uvec4 pendingPattern;
uvec4 pendingCount;
uint pendingPatternNext;

void clearCounts()
{
#if COUNTING
    pendingState = uvec4(NONE);
    pendingVisits = uvec4(0u);
    pendingStateNext = 0u;
    pendingPattern = uvec4(NONE);
    pendingCount = uvec4(0u);
    pendingPatternNext = 0u;
#endif
}

void emitCount(Run r, uint key, uint count)
{
    if (count == 0u)
        return;
    uint slot = atomicAdd(queue[0], 1u);
    if (slot < hitCapacity)
        hits[slot] = uvec4(r.hitId, key, count, r.generation);
}

// Adds n to key's slot. Empty slots first; once all are taken only the last one changes hands, so that five or
// more keys taking turns still leave three summed in place (round-robin would write every one out).
void accumulate(Run r, inout uvec4 keys, inout uvec4 counts, inout uint next, uint key, uint n)
{
    if (keys.x == key) {
        counts.x += n;
    } else if (keys.y == key) {
        counts.y += n;
    } else if (keys.z == key) {
        counts.z += n;
    } else if (keys.w == key) {
        counts.w += n;
    } else {
        emitCount(r, keys[next], counts[next]);
        keys[next] = key;
        counts[next] = n;
        next = min(next + 1u, 3u);
    }
}

// Everything pending written to the ring: at the end of every piece.
void flushCounts(Run r)
{
#if COUNTING
    emitCount(r, pendingState.x, pendingVisits.x);
    emitCount(r, pendingState.y, pendingVisits.y);
    emitCount(r, pendingState.z, pendingVisits.z);
    emitCount(r, pendingState.w, pendingVisits.w);
    emitCount(r, pendingPattern.x, pendingCount.x);
    emitCount(r, pendingPattern.y, pendingCount.y);
    emitCount(r, pendingPattern.z, pendingCount.z);
    emitCount(r, pendingPattern.w, pendingCount.w);
    clearCounts();
#endif
}

// Reports the accept entries of `state` reached on the byte at `pos`: kind 0 ends at pos, kind 1 at pos - 1,
// kind 2 only at the end of the file. False when the loop was cut.
bool emitAccepts(Run r, uint state, uint pos, uint numClasses, uint aiBase, uint aeBase, bool atEof)
{
    uint st = state / numClasses;
    uint firstWord = aux[aiBase + st];
    if (COUNTING != 0 && !atEof && (firstWord & COUNTED_STATE) != 0u) {
        // Every end is at pos: owned or not as a whole.
        if (pos >= r.ownBegin && pos < r.ownEnd)
            accumulate(r, pendingState, pendingVisits, pendingStateNext, st | COUNT_FLAG | STATE_FLAG, 1u);
        return true;
    }
    uint first = firstWord & INDEX_MASK;
    uint last = aux[aiBase + st + 1u] & INDEX_MASK;
    uint k = first;
    for (; k < last; ++k) {
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
        if (end >= r.ownBegin && end < r.ownEnd) {
            if (COUNTING != 0 && (e & COUNTED_BIT) != 0u)
                accumulate(r, pendingPattern, pendingCount, pendingPatternNext, (e & PATTERN_MASK) | COUNT_FLAG, 1u);
            else
                emitHit(r, e & PATTERN_MASK, end);
        }
    }
    return k == last;
}

uint classOf(uint g, uint cBase, uint byteValue)
{
    if (g < SHARED_GROUPS)
        return (sharedClasses[g * 64u + (byteValue >> 2)] >> ((byteValue & 3u) << 3)) & 0xffu;
    return aux[cBase + byteValue];
}

void recordAt(Run r, uint pos, uint s)
{
    if (pos == r.exitPos)
        istate[unboundedBase + numUnbounded * numSegments + r.uItem] = s;
    if (pos == r.entryPos)
        istate[unboundedBase + r.uItem] = s;
}

// Scans piece `round` of the run; true when the run ended with this piece and every loop ran to its bound.
bool walkPiece(Run r)
{
    uint g = r.group * GROUP_WORDS;
    uint tBase = aux[g];
    uint numClasses = aux[g + 1u];
    uint cBase = aux[g + 2u];
    uint aiBase = aux[g + 3u];
    uint aeBase = aux[g + 4u];

    uint begin = round * pieceBytes;
    if (round > 0u && (begin >= r.len || istate[r.slot * 2u + 1u] != begin))
        return false; // no piece here, or an earlier piece did not complete
    uint end = min(r.len, begin + pieceBytes);
    uint s = round == 0u ? r.initState : istate[r.slot * 2u];
    bool intact = true;
    uint i = begin;
    // Bytes one at a time up to a 16-byte boundary of the haystack, then 16 at a time, then the tail.
    uint alignedStart = min(end, begin + ((16u - ((r.dataStart + begin) & 15u)) & 15u));
    uint vectorEnd = alignedStart + ((end - alignedStart) & ~15u);
    for (; i < alignedStart; ++i) {
        if (r.uItem != NONE)
            recordAt(r, i, s);
        uint p = r.dataStart + i;
        uint e = trans[tBase + s + classOf(r.group, cBase, (hay[p >> 2] >> ((p & 3u) << 3)) & 0xffu)];
        s = e & STATE_MASK;
        if ((e & ACCEPT_FLAG) != 0u)
            intact = emitAccepts(r, s, i, numClasses, aiBase, aeBase, false) && intact;
    }
    intact = intact && i == alignedStart;
    for (; i < vectorEnd; i += 16u) {
        uvec4 block = hay16[(r.dataStart + i) >> 4];
        uint w = 0u;
        for (; w < 4u; ++w) {
            uint word = block[w];
            uint k = 0u;
            for (; k < 4u; ++k) {
                uint pos = i + w * 4u + k;
                if (r.uItem != NONE)
                    recordAt(r, pos, s);
                uint e = trans[tBase + s + classOf(r.group, cBase, (word >> (k * 8u)) & 0xffu)];
                s = e & STATE_MASK;
                if ((e & ACCEPT_FLAG) != 0u)
                    intact = emitAccepts(r, s, pos, numClasses, aiBase, aeBase, false) && intact;
            }
            intact = intact && k == 4u;
        }
        intact = intact && w == 4u;
    }
    intact = intact && i == vectorEnd;
    for (; i < end; ++i) {
        if (r.uItem != NONE)
            recordAt(r, i, s);
        uint p = r.dataStart + i;
        uint e = trans[tBase + s + classOf(r.group, cBase, (hay[p >> 2] >> ((p & 3u) << 3)) & 0xffu)];
        s = e & STATE_MASK;
        if ((e & ACCEPT_FLAG) != 0u)
            intact = emitAccepts(r, s, i, numClasses, aiBase, aeBase, false) && intact;
    }
    intact = intact && i == end;
    istate[r.slot * 2u] = s;
    istate[r.slot * 2u + 1u] = intact ? end : NONE;
    if (!intact || end != r.len)
        return false;
    if (r.uItem != NONE && r.exitPos == r.len)
        recordAt(r, r.len, s);
    if (r.eof && r.len > 0u)
        return emitAccepts(r, s, r.len - 1u, numClasses, aiBase, aeBase, true);
    return true;
}

// Counts pending at the piece's end are written on every path out, whether or not the run ended here.
bool scanPiece(Run r)
{
    bool completed = walkPiece(r);
    flushCounts(r);
    return completed;
}

uint startState(uint g, uint context)
{
    return aux[g * GROUP_WORDS + 5u + context];
}

// Main item `idx`: true when it completed with this round.
bool runMain(uint idx)
{
    uint group = idx / numSegments;
    uint seg = idx % numSegments;
    uint b = seg * 8u;
    uint flags = segs[b + 4u];
    Run r;
    r.hitId = idx;
    r.group = group;
    r.eof = (flags & 1u) != 0u;
    r.generation = 0u;
    r.slot = idx;
    uint u = aux[group * GROUP_WORDS + 8u];
    if (u == NONE) {
        r.dataStart = segs[b];
        r.len = segs[b + 1u];
        r.ownBegin = segs[b + 2u];
        r.ownEnd = segs[b + 3u];
        r.entryPos = NONE;
        r.exitPos = NONE;
        r.initState = startState(group, (flags >> 1) & 3u);
        r.uItem = NONE;
    } else {
        uint uStart = segs[b + 5u];
        uint skip = uStart - segs[b]; // the bounded scan's start minus the unbounded's, wrapping when negative
        r.dataStart = uStart;
        r.len = segs[b + 1u] - skip;
        r.ownBegin = segs[b + 2u] - skip;
        r.ownEnd = segs[b + 3u] - skip;
        r.exitPos = r.ownEnd;
        r.uItem = u * numSegments + seg;
        if (round == 0u) {
            // Words of an earlier batch: nothing has scanned this item again yet.
            istate[unboundedBase + 2u * numUnbounded * numSegments + r.uItem] = 0u;
            istate[unboundedBase + 3u * numUnbounded * numSegments + r.uItem] = 0u;
        }
        if ((flags & 32u) != 0u) {
            r.entryPos = NONE;
            r.initState = (flags & 64u) != 0u ? startState(group, 0u) : segs[carryBase + segs[b + 6u] * numUnbounded + u];
        } else {
            r.entryPos = r.ownBegin;
            r.initState = startState(group, (flags >> 3) & 3u);
        }
    }
    return scanPiece(r);
}

// Fix-up of unbounded item `idx` (u * numSegments + segment): true when it completed with this round.
bool runFixup(uint idx)
{
    uint u = idx / numSegments;
    uint seg = idx % numSegments;
    uint b = seg * 8u;
    uint flags = segs[b + 4u];
    uint activeAt = unboundedBase + 3u * numUnbounded * numSegments + idx;
    if (round == 0u) {
        if ((flags & 32u) != 0u)
            return true; // a chunk's first segment started from the true state
        uint previousExit = istate[unboundedBase + numUnbounded * numSegments + idx - 1u];
        if (istate[unboundedBase + idx] == previousExit)
            return true;
        istate[unboundedBase + idx] = previousExit;
        istate[unboundedBase + 2u * numUnbounded * numSegments + idx] = generation;
        istate[activeAt] = generation;
        atomicAdd(queue[counterSlot + 1u], 1u);
    } else if (istate[activeAt] != generation) {
        return false; // not scanned again in this pass: it completed in round 0
    }
    uint group = aux[numGroups * GROUP_WORDS + u];
    Run r;
    r.hitId = group * numSegments + seg;
    r.group = group;
    r.dataStart = segs[b] + segs[b + 2u];
    r.len = segs[b + 1u] - segs[b + 2u];
    r.ownBegin = 0u;
    r.ownEnd = segs[b + 3u] - segs[b + 2u];
    r.entryPos = NONE;
    r.exitPos = r.ownEnd;
    r.initState = istate[unboundedBase + idx];
    r.eof = (flags & 1u) != 0u;
    r.generation = generation;
    r.slot = r.hitId;
    r.uItem = idx;
    return scanPiece(r);
}

void main()
{
    // Byte classes of the first groups into shared memory, packed four to a word.
    uint sharedGroups = min(numGroups, SHARED_GROUPS);
    for (uint k = gl_LocalInvocationID.x; k < sharedGroups * 64u; k += gl_WorkGroupSize.x) {
        uint g = k / 64u;
        uint cBase = aux[g * GROUP_WORDS + 2u] + (k % 64u) * 4u;
        sharedClasses[k] = aux[cBase] | (aux[cBase + 1u] << 8) | (aux[cBase + 2u] << 16) | (aux[cBase + 3u] << 24);
    }
    barrier();

    clearCounts();
    uint taken = 0u;
    for (;;) {
        if (budget != 0u && taken >= budget)
            break;
        uint idx = atomicAdd(queue[headSlot], 1u);
        if (idx >= numItems)
            break;
        bool completed = mode == 0u ? runMain(idx) : runFixup(idx);
        if (completed)
            atomicAdd(queue[counterSlot], 1u);
        ++taken;
    }
}
