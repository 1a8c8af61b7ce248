// SPDX-License-Identifier: GPL-3.0-or-later
#include "cpuengine.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <memory>

#include "automata/atomextractor.h"
#include "automata/atomprefilter.h"
#include "automata/lazydfa.h"
#include "automata/patterncatalog.h"
#include "cpu/atommarks.h"
#include "cpu/cpuengineprofile.h"
#include "cpu/lazycaches.h"
#include "cpu/xorscreen.h"
#include "util/elapsed.h"
#include "util/parallel.h"

namespace Hitscope {

namespace {

// Walks interleaved per thread (see DfaWalker::runQueue).
constexpr int kLanes = 8;
constexpr int kMaxSegmentsPerItem = 256;
constexpr int64_t kItemBytes = 4 << 20;

// One DFA walk over file bytes [pos, end) of one batch file, reporting ends in [ownBegin, ownEnd).
struct Walk
{
    const uint8_t *data = nullptr; // byte at file offset `pos`
    int64_t pos = 0;
    int64_t end = 0;
    int64_t ownBegin = 0;
    int64_t ownEnd = 0;
    uint32_t state = 0;
    uint32_t batchFile = 0;
    // A counted pattern's run of ends, reported as one RawCount when another pattern or the walk's end comes.
    uint32_t countedPattern = UINT32_MAX;
    int64_t counted = 0;
    // Where this walk's hits and counts go when not to the walker's (a speculative piece, see scanUnbounded).
    std::vector<RawHit> *hits = nullptr;
    std::vector<RawCount> *counts = nullptr;
};

struct Event
{
    int64_t pos;
    uint32_t state;
};

uint32_t startState(const Dfa &dfa, const BatchFile &f, const uint8_t *haystack, int64_t scanBegin)
{
    if (scanBegin == 0)
        return dfa.start[Dfa::AtFileStart];
    const uint8_t before = *f.at(haystack, scanBegin - 1);
    return dfa.start[isWordByte(before) ? Dfa::AfterWord : Dfa::AfterNonWord];
}

/**
 * Marks where the prefilter's xor atoms occur in data[0, n), which starts at haystack offset `base`: starts are
 * screened by their first four deltas, each candidate is then checked whole. `occurrences` (when profiled) counts
 * them per pattern.
 */
void markXorAtoms(const AtomPrefilter &pre, AtomMarks &marks, const uint8_t *data, int64_t n, int64_t base,
                  int64_t *occurrences)
{
    const XorScreen::Isa isa = XorScreen::best();
    constexpr int64_t kStep = 64 << 10;
    int64_t longest = 0;
    for (const AtomPrefilter::XorAtom &a : pre.xorAtoms)
        longest = std::max(longest, int64_t(a.deltas.size()) + 1);
    // Not a vector: its zeroing cost as much as the screening.
    const std::unique_ptr<int64_t[]> candidates(new int64_t[size_t(std::min(n, kStep + longest))]);
    for (const AtomPrefilter::XorAtom &a : pre.xorAtoms) {
        const int64_t length = int64_t(a.deltas.size()) + 1;
        // Steps overlap by the form's length, so that a start is screened in the step where it is whole.
        for (int64_t at = 0; at + length <= n; at += kStep) {
            const int64_t span = std::min(n - at, kStep + length - 1);
            const int64_t found = XorScreen::screen(data + at, span, a.deltas.data(), candidates.get(), isa);
            for (int64_t c = 0; c < found; ++c) {
                const int64_t s = at + candidates[size_t(c)];
                if (s - at < kStep && s + length <= n && a.occursAt(data + s)) {
                    marks.markAt(a.group, base + s);
                    if (occurrences)
                        ++occurrences[a.pattern];
                }
            }
        }
    }
}

/**
 * Marks where the prefilter's delta-screened xor forms occur in data[0, n), which starts at haystack offset
 * `base`: one HashScreen pass over the XORs of neighbouring bytes finds every form's deltas, and the key of an
 * occurrence (its first byte XOR the form's) must lie in the string's range. `occurrences` as markXorAtoms.
 */
void markDeltaXorAtoms(const AtomPrefilter &pre, AtomMarks &marks, const uint8_t *data, int64_t n, int64_t base,
                       std::vector<uint8_t> &deltas, std::vector<SequenceScreen::Match> &found, int64_t *occurrences)
{
    if (n < 2)
        return;
    deltas.resize(size_t(n - 1));
    for (int64_t i = 0; i + 1 < n; ++i)
        deltas[size_t(i)] = data[i] ^ data[i + 1];
    found.clear();
    pre.xorDeltaScreen.scan(deltas.data(), n - 1, 0, n - 1, found);
    for (const SequenceScreen::Match &m : found) {
        const AtomPrefilter::XorAtom &a = pre.deltaXorAtoms[m.tag];
        const int64_t start = m.end - int64_t(a.deltas.size()) + 1;
        const int key = data[start] ^ a.first;
        if (key >= a.keyLow && key <= a.keyHigh) {
            marks.markAt(a.group, base + start);
            if (occurrences)
                ++occurrences[a.pattern];
        }
    }
}

class DfaWalker
{
public:
    // Patterns `screened` flags (AtomPrefilter::screened) are found by the screen and not reported here.
    DfaWalker(const Dfa &dfa, std::vector<RawHit> &hits, std::vector<RawCount> &counts, const uint8_t *counted,
              const uint8_t *screened)
        : m_dfa(dfa)
        , m_table(dfa.transitions.data())
        , m_classes(dfa.byteClass.data())
        , m_hits(hits)
        , m_counts(counts)
        , m_counted(counted)
        , m_screened(screened)
    {
    }

    // Walks up to `stop` (file offset) and leaves the walk there.
    void run(Walk &w, int64_t stop)
    {
        uint32_t s = w.state;
        const uint8_t *p = w.data;
        const int64_t n = stop - w.pos;
        for (int64_t i = 0; i < n; ++i) {
            s = m_table[s + m_classes[p[i]]];
            if (s & Dfa::kAcceptFlag) [[unlikely]] {
                s &= Dfa::kStateMask;
                report(w, w.pos + i, s);
            }
        }
        w.state = s;
        w.data += n;
        w.pos = stop;
    }

    // Walks `count` items kLanes at a time in lock step: one walk is bound by the latency of its chain of
    // table look-ups, independent walks overlap those latencies. A lane that finishes takes the next walk
    // at once, so short segments (small files) keep every lane busy too; the last few walks go on in 4 or 2
    // lanes rather than one at a time. `finish` runs once per walk.
    template<int kLanes, typename Finish>
    void runQueue(Walk *walks, int count, Finish &&finish)
    {
        runQueue<kLanes>(walks, count, finish, [](Walk &) { return false; });
    }

    // As above; a walk that reaches its end is handed to `resume` first, which may give it more to walk (a new
    // end, or a new position, state and end) and return true.
    template<int kLanes, typename Finish, typename Resume>
    void runQueue(Walk *walks, int count, Finish &&finish, Resume &&resume)
    {
        int lane[kLanes];
        int m = 0; // lanes in use, lane[0, m)
        int next = 0;
        while (m < kLanes && next < count)
            lane[m++] = next++;
        while (m > 0) {
            const int width = m == kLanes ? kLanes : m >= 4 ? 4 : m >= 2 ? 2 : 1;
            int64_t n = INT64_MAX;
            for (int k = 0; k < width; ++k)
                n = std::min(n, walks[lane[k]].end - walks[lane[k]].pos);
            if (width == kLanes)
                lockstep<kLanes>(walks, lane, n);
            else if (width == 4)
                lockstep<4>(walks, lane, n);
            else if (width == 2)
                lockstep<2>(walks, lane, n);
            else
                run(walks[lane[0]], walks[lane[0]].end);
            int kept = 0;
            for (int k = 0; k < m; ++k) {
                Walk &w = walks[lane[k]];
                if (w.pos < w.end || resume(w)) {
                    lane[kept++] = lane[k];
                    continue;
                }
                finish(w);
                flushCount(w);
                if (next < count)
                    lane[kept++] = next++;
            }
            m = kept;
        }
    }

    // GCC's SLP vectorizer packs the states into vector registers and unpacks them on every step; without it
    // they stay in general registers (measured faster end to end).
    template<int kLanes>
    __attribute__((optimize("no-tree-slp-vectorize"))) void lockstep(Walk *walks, const int *lane, int64_t n)
    {
        uint32_t s[kLanes];
        const uint8_t *p[kLanes];
#pragma GCC unroll 16
        for (int k = 0; k < kLanes; ++k) {
            s[k] = walks[lane[k]].state;
            p[k] = walks[lane[k]].data;
        }
        const uint32_t *table = m_table;
        const uint8_t *classes = m_classes;
        for (int64_t i = 0; i < n; ++i) {
            uint32_t any = 0;
#pragma GCC unroll 16
            for (int k = 0; k < kLanes; ++k) {
                s[k] = table[s[k] + classes[p[k][i]]];
                any |= s[k];
            }
            if (any & Dfa::kAcceptFlag) [[unlikely]] {
                for (int k = 0; k < kLanes; ++k)
                    if (s[k] & Dfa::kAcceptFlag) {
                        s[k] &= Dfa::kStateMask;
                        report(walks[lane[k]], walks[lane[k]].pos + i, s[k]);
                    }
            }
        }
        for (int k = 0; k < kLanes; ++k) {
            Walk &w = walks[lane[k]];
            w.state = s[k];
            w.data += n;
            w.pos += n;
        }
    }

    // Matches decided only at the end of the file ($, trailing \b).
    void reportEof(Walk &w, int64_t fileSize)
    {
        const int64_t end = fileSize - 1;
        if (end < w.ownBegin || end >= w.ownEnd)
            return;
        const uint32_t st = w.state / m_dfa.numClasses;
        for (uint32_t i = m_dfa.acceptIndex[st]; i < m_dfa.acceptIndex[st + 1]; ++i) {
            const uint32_t e = m_dfa.acceptEntries[i];
            if (Dfa::entryKind(e) == Dfa::Eof && !(m_screened && m_screened[Dfa::entryPattern(e)]))
                add(w, Dfa::entryPattern(e), end);
        }
    }

    /// Adds hits and counts gathered apart (speculative pieces) to this walker's.
    void take(const std::vector<RawHit> &hits, const std::vector<RawCount> &counts)
    {
        m_hits.insert(m_hits.end(), hits.begin(), hits.end());
        m_counts.insert(m_counts.end(), counts.begin(), counts.end());
    }

    void flushCount(Walk &w)
    {
        if (w.counted > 0)
            (w.counts ? *w.counts : m_counts).push_back({ w.batchFile, w.countedPattern, w.counted });
        w.counted = 0;
        w.countedPattern = UINT32_MAX;
    }

private:
    void add(Walk &w, uint32_t pattern, int64_t end)
    {
        if (!m_counted || !m_counted[pattern]) {
            (w.hits ? *w.hits : m_hits).push_back({ w.batchFile, pattern, end });
            return;
        }
        if (w.countedPattern != pattern) {
            flushCount(w);
            w.countedPattern = pattern;
        }
        ++w.counted;
    }

    void report(Walk &w, int64_t pos, uint32_t premultiplied)
    {
        const uint32_t st = premultiplied / m_dfa.numClasses;
        for (uint32_t i = m_dfa.acceptIndex[st]; i < m_dfa.acceptIndex[st + 1]; ++i) {
            const uint32_t e = m_dfa.acceptEntries[i];
            if (m_screened && m_screened[Dfa::entryPattern(e)])
                continue;
            const Dfa::AcceptKind kind = Dfa::entryKind(e);
            if (kind == Dfa::Eof)
                continue;
            const int64_t end = kind == Dfa::Now ? pos : pos - 1;
            if (end >= w.ownBegin && end < w.ownEnd)
                add(w, Dfa::entryPattern(e), end);
        }
    }

    const Dfa &m_dfa;
    const uint32_t *m_table;
    const uint8_t *m_classes;
    std::vector<RawHit> &m_hits;
    std::vector<RawCount> &m_counts;
    const uint8_t *m_counted; ///< per pattern, or null
    const uint8_t *m_screened; ///< per pattern, or null
};

// A unit of work: a run of segments of one bounded group, or one chunk of an unbounded group.
struct Item
{
    int group;
    int firstSegment; // bounded: index into batch.segments; unbounded: -1
    int count;        // segments (bounded) or consecutive batch files (unbounded) in this item
    uint32_t batchFile; // unbounded: the first batch file
    int unboundedIndex;
    int64_t bytes;
    // Unbounded, one part of a chunk walked by several items (SharedChunk): its index, and the part's pieces.
    int shared = -1;
    size_t firstPiece = 0, pieceCount = 0;
};

constexpr int kAtomPass = -1;

/// What screenSegment keeps from segment to segment of a thread.
struct ScreenScratch
{
    std::vector<SequenceScreen::Match> matches;
    std::vector<SequenceScreen::Run> runs;
    std::vector<std::pair<uint32_t, int64_t>> shared; ///< ends of patterns whose sequences may share them
    std::vector<int64_t> counts;                       ///< per pattern, for counted ones
    std::vector<uint32_t> counting;                    ///< patterns with a count here
    std::vector<uint8_t> xorDeltas;                    ///< a segment's neighbouring bytes XORed
    std::vector<SequenceScreen::Match> xorMatches;
    int64_t *candidates = nullptr; ///< per pattern, when profiled (CpuEngineProfile)
};

/**
 * The prefilter's screen over one segment: screened patterns' ends in the segment's own range become hits (or
 * counts), and atoms marked where they end in it or, in a chunk's first segment, in the context before it
 * (they belong to matches that end inside).
 */
void screenSegment(const AtomPrefilter &pre, AtomMarks &marks, const FileBatch &batch, const Segment &seg,
                   const CpuEngine::KeyBlocks *keyBlocks, const uint8_t *counted, ScreenScratch &scratch,
                   std::vector<RawHit> &hits, std::vector<RawCount> &counts)
{
    const BatchFile &bf = batch.files[seg.batchFile];
    // A chunk's first segment screens all the context the chunk holds (PatternCatalog::chunkContext(), more
    // than the segments' overlap where windows reach further). The others start early enough to see whole
    // every atom that ends in them: the overlap is the longest bounded match, which an unbounded group's atom
    // may exceed (an overlap of 0 where all patterns are unbounded).
    const int64_t begin = seg.ownBegin == bf.ownBegin
        ? bf.holdBegin
        : std::min(seg.scanBegin, std::max(bf.holdBegin, seg.ownBegin - (AtomExtractor::kMaxAtomLength - 1)));
    const int64_t markBegin = seg.ownBegin == bf.ownBegin ? begin : seg.ownBegin;
    scratch.shared.clear();
    if (counted && scratch.counts.size() < pre.screened.size())
        scratch.counts.assign(pre.screened.size(), 0);
    auto add = [&](uint32_t pattern, int64_t firstEnd, int64_t lastEnd) {
        if (pre.screened[pattern] == 2) {
            for (int64_t e = firstEnd; e <= lastEnd; ++e)
                scratch.shared.emplace_back(pattern, e);
        } else if (counted && counted[pattern]) {
            if (scratch.counts[pattern] == 0)
                scratch.counting.push_back(pattern);
            scratch.counts[pattern] += lastEnd - firstEnd + 1;
        } else {
            for (int64_t e = firstEnd; e <= lastEnd; ++e)
                hits.push_back({ seg.batchFile, pattern, e });
        }
    };
    // The ends in [from, to) (file offsets), from data that starts at `dataBegin`.
    auto screenEnds = [&](int64_t dataBegin, int64_t from, int64_t to) {
        scratch.matches.clear();
        scratch.runs.clear();
        const uint8_t *data = bf.at(batch.haystack.get(), dataBegin);
        // All the data the segment holds from there: the screens' vector loops stop short of the data's end (they
        // read ahead), not of `to`.
        const int64_t n = seg.scanEnd - dataBegin;
        pre.screen.scan(data, n, from - dataBegin, to - dataBegin, scratch.matches, scratch.runs);
        pre.hashScreen.scan(data, n, from - dataBegin, to - dataBegin, scratch.matches);
        pre.sparseScreen.scan(data, n, from - dataBegin, to - dataBegin, scratch.matches);
        auto take = [&](uint32_t tag, int64_t firstEnd, int64_t lastEnd) {
            if (scratch.candidates)
                scratch.candidates[tag >= pre.atomBase ? uint32_t(pre.atomPattern[tag - pre.atomBase]) : tag] +=
                    lastEnd - firstEnd + 1;
            firstEnd += dataBegin;
            lastEnd += dataBegin;
            if (tag >= pre.atomBase) {
                marks.mark(seg.batchFile, firstEnd, lastEnd, tag - pre.atomBase);
                return;
            }
            firstEnd = std::max(firstEnd, seg.ownBegin);
            if (firstEnd <= lastEnd)
                add(tag, firstEnd, lastEnd);
        };
        for (const SequenceScreen::Match &m : scratch.matches)
            take(m.tag, m.end, m.end);
        for (const SequenceScreen::Run &r : scratch.runs)
            take(r.tag, r.firstEnd, r.lastEnd);
    };
    if (!keyBlocks) {
        screenEnds(begin, markBegin, seg.ownEnd);
    } else {
        // Only the ends in the blocks the GPU marked (where the keys it found allow a sequence to end), looking
        // back as far as the longest of those sequences; neighbouring blocks are screened as one range.
        auto hayOf = [&](int64_t offset) { return bf.dataOffset + (offset - bf.holdBegin); };
        auto fileOf = [&](int64_t h) { return bf.holdBegin + (h - bf.dataOffset); };
        const int64_t firstBlock = hayOf(markBegin) >> KeyFilter::kBlockShift;
        const int64_t lastBlock = std::min(keyBlocks->blocks - 1, (hayOf(seg.ownEnd) - 1) >> KeyFilter::kBlockShift);
        int64_t openFrom = -1, openTo = -1, openBack = 0;
        auto flush = [&] {
            if (openFrom >= 0)
                screenEnds(std::max(begin, openFrom - openBack), openFrom, openTo);
        };
        for (int64_t b = firstBlock; b <= lastBlock; ++b) {
            if ((b & 7) == 0 && keyBlocks->classes[size_t(b) / 8] == 0) {
                b += 7;
                continue;
            }
            const uint32_t classes = keyBlocks->at(b);
            if (classes == 0)
                continue;
            const int64_t from = std::max(markBegin, fileOf(b << KeyFilter::kBlockShift));
            const int64_t to = std::min(seg.ownEnd, fileOf((b + 1) << KeyFilter::kBlockShift));
            if (from >= to)
                continue;
            const int64_t back = KeyFilter::lengthOfClass(std::bit_width(classes) - 1) - 1;
            if (openFrom >= 0 && from <= openTo + 64) {
                openTo = std::max(openTo, to);
                openBack = std::max(openBack, back - (from - openFrom));
                continue;
            }
            flush();
            openFrom = from;
            openTo = to;
            openBack = back;
        }
        flush();
    }
    if (!scratch.shared.empty()) {
        std::sort(scratch.shared.begin(), scratch.shared.end());
        scratch.shared.erase(std::unique(scratch.shared.begin(), scratch.shared.end()), scratch.shared.end());
        for (const auto &[pattern, end] : scratch.shared) {
            if (counted && counted[pattern]) {
                if (scratch.counts[pattern] == 0)
                    scratch.counting.push_back(pattern);
                ++scratch.counts[pattern];
            } else {
                hits.push_back({ seg.batchFile, pattern, end });
            }
        }
    }
    for (uint32_t pattern : scratch.counting) {
        counts.push_back({ seg.batchFile, pattern, scratch.counts[pattern] });
        scratch.counts[pattern] = 0;
    }
    scratch.counting.clear();
}

/**
 * One walk of a tableless group's LazyDfa over windows [first, last) of one batch file, in order, as DfaWalker
 * walks a group's DFA over them: on past a window's end while a match is in progress, up to the cap, taking in
 * the windows it reaches, and otherwise from the start state of the next. Reports as DfaWalker does.
 */
template<typename Window>
void walkLazyWindows(LazyDfa::Cache &cache, const Window *windows, size_t first, size_t last, const BatchFile &bf,
                     uint32_t batchFile, const uint8_t *haystack, const uint8_t *counted, const uint8_t *screened,
                     std::vector<RawHit> &hits, std::vector<RawCount> &counts)
{
    uint32_t countedPattern = UINT32_MAX;
    int64_t countedEnds = 0;
    auto flushCount = [&] {
        if (countedEnds > 0)
            counts.push_back({ batchFile, countedPattern, countedEnds });
        countedEnds = 0;
        countedPattern = UINT32_MAX;
    };
    auto add = [&](uint32_t pattern, int64_t end) {
        if (end < bf.ownBegin || end >= bf.ownEnd || (screened && screened[pattern]))
            return;
        if (!counted || !counted[pattern]) {
            hits.push_back({ batchFile, pattern, end });
            return;
        }
        if (countedPattern != pattern) {
            flushCount();
            countedPattern = pattern;
        }
        ++countedEnds;
    };
    auto startAt = [&](int64_t pos) {
        if (pos == 0)
            return cache.start(Dfa::AtFileStart);
        return cache.start(isWordByte(*bf.at(haystack, pos - 1)) ? Dfa::AfterWord : Dfa::AfterNonWord);
    };
    size_t next = first;
    const Window *win = &windows[next++];
    int64_t pos = win->begin, end = win->end, cap = win->cap;
    uint32_t s = startAt(pos);
    for (;;) {
        // The chunk holds file offsets [holdBegin, holdEnd) only: pointers from pos on.
        for (const uint8_t *byte = bf.at(haystack, pos); pos < end; ++pos, ++byte) {
            s = cache.step(s, *byte);
            if (s & LazyDfa::Cache::kReports) [[unlikely]] {
                s &= LazyDfa::Cache::kStateMask;
                for (const uint32_t *e = cache.entriesBegin(s); e != cache.entriesEnd(s); ++e) {
                    const Dfa::AcceptKind kind = Dfa::entryKind(*e);
                    if (kind != Dfa::Eof)
                        add(Dfa::entryPattern(*e), kind == Dfa::Now ? pos : pos - 1);
                }
            }
        }
        if (pos < cap && !cache.idle(s)) {
            end = std::min(cap, pos + 64);
            for (; next < last && windows[next].begin <= end; ++next) {
                end = std::max(end, windows[next].end);
                cap = std::max(cap, windows[next].cap);
            }
            continue;
        }
        if (next == last)
            break;
        win = &windows[next++];
        pos = win->begin;
        end = win->end;
        cap = win->cap;
        s = startAt(pos);
    }
    if (end == bf.fileSize)
        for (const uint32_t *e = cache.entriesBegin(s); e != cache.entriesEnd(s); ++e)
            if (Dfa::entryKind(*e) == Dfa::Eof)
                add(Dfa::entryPattern(*e), bf.fileSize - 1);
    flushCount();
}

/// A stretch of one batch file that a prefiltered group's DFA is walked over (scanWindows).
struct Window
{
    int group;
    uint32_t batchFile;
    int64_t begin; // file offsets, end exclusive
    int64_t end;   // walked to here at least
    int64_t cap;   // and on to here while a match is in progress (an unbounded pattern's window)
};

/// Windows that one walk goes through, in order (windowRuns).
struct WindowRun
{
    size_t first, last; // windows [first, last)
};

struct WindowCursor
{
    size_t next, last; // windows still ahead
    int64_t cap;
};

/// The windows of every group the prefilter covers: its marked blocks, widened by the group's longest match.
std::vector<Window> windowsOf(const FileBatch &batch, const PatternCatalog &catalog, const AtomPrefilter &pre,
                              const AtomMarks &marks)
{
    constexpr int64_t kBlock = int64_t(1) << AtomMarks::kBlockShift;
    // Group by group over the batch's marks, file by file in haystack order: windows of one group together
    // (each thread then walks one DFA at a time), of one file together and in order (the runs below).
    std::vector<uint32_t> files;
    for (uint32_t f = 0; f < batch.files.size(); ++f)
        if (!batch.files[f].failed && batch.files[f].holdEnd > batch.files[f].holdBegin)
            files.push_back(f);
    std::stable_sort(files.begin(), files.end(), [&](uint32_t a, uint32_t b) {
        return batch.files[a].dataOffset < batch.files[b].dataOffset;
    });
    std::vector<Window> windows;
    const int64_t lastBlock = files.empty() ? -1 : (batch.used - 1) >> AtomMarks::kBlockShift;
    for (int g = 0; g < int(catalog.groups.size()) && !files.empty(); ++g) {
        if (!pre.covers(g) || pre.groupReach[size_t(g)] <= 0 || !marks.any(g))
            continue;
        const int64_t left = pre.groupLeft[size_t(g)];
        const int64_t right = pre.groupRight[size_t(g)];
        const int64_t reach = pre.groupReach[size_t(g)];
        Window open { g, 0, -1, -1, -1 };
        size_t cursor = 0; // the first file that does not end before the block
        for (int64_t b = marks.nextMarked(g, 0, lastBlock); b >= 0; b = marks.nextMarked(g, b + 1, lastBlock)) {
            const int64_t blockBegin = b * kBlock;
            auto h1Of = [&](const BatchFile &bf) { return bf.dataOffset + (bf.holdEnd - bf.holdBegin); };
            while (cursor < files.size() && h1Of(batch.files[files[cursor]]) <= blockBegin)
                ++cursor;
            // A block may hold the end of one file and the start of the next: each gets its window.
            for (size_t k = cursor; k < files.size() && batch.files[files[k]].dataOffset < blockBegin + kBlock; ++k) {
                const uint32_t f = files[k];
                const BatchFile &bf = batch.files[f];
                const int64_t h0 = bf.dataOffset;
                // Haystack block -> file offsets, widened and kept inside what the chunk holds. A window starts
                // in the context of the byte before it (\b), so it needs that byte held, and ends a byte past
                // its reach (a trailing \b is decided there).
                const int64_t first = bf.holdBegin > 0 ? bf.holdBegin + 1 : 0;
                const int64_t blockEnd = bf.holdBegin + (blockBegin + kBlock - h0);
                const int64_t lo = std::max(first, bf.holdBegin + (blockBegin - h0) - left);
                const int64_t hi = std::min(bf.holdEnd, blockEnd + right + 1);
                const int64_t cap = std::min(bf.holdEnd, blockEnd + reach + 1);
                if (open.begin >= 0 && open.batchFile == f && lo <= open.end) {
                    open.end = std::max(open.end, hi);
                    open.cap = std::max(open.cap, cap);
                    continue;
                }
                if (open.begin >= 0)
                    windows.push_back(open);
                open = { g, f, lo, hi, cap };
            }
        }
        if (open.begin >= 0)
            windows.push_back(open);
    }
    return windows;
}

// Windows that a match in progress could run from one into the next are walked by one walk, in order: a
// walk goes on past a window's end while a match is in progress, up to its cap, through the next window if
// it gets there, and otherwise jumps to the next window.
std::vector<WindowRun> windowRuns(const std::vector<Window> &windows)
{
    std::vector<WindowRun> runs;
    int64_t runCap = 0;
    for (size_t i = 0; i < windows.size(); ++i) {
        const Window &w = windows[i];
        if (i > 0 && w.group == windows[i - 1].group && w.batchFile == windows[i - 1].batchFile && w.begin < runCap) {
            runs.back().last = i + 1;
            runCap = std::max(runCap, w.cap);
        } else {
            runs.push_back({ i, i + 1 });
            runCap = w.cap;
        }
    }
    return runs;
}

/// Walks `count` runs of one group's windows with its table DFA, as the walker walks segments.
void walkTableWindows(DfaWalker &walker, const Dfa &dfa, const FileBatch &batch, const std::vector<Window> &windows,
                      const WindowRun *runs, size_t count, std::vector<Walk> &walks, std::vector<WindowCursor> &cursors)
{
    const uint8_t *haystack = batch.haystack.get();
    walks.clear();
    cursors.clear();
    for (size_t j = 0; j < count; ++j) {
        const Window &win = windows[runs[j].first];
        const BatchFile &bf = batch.files[win.batchFile];
        Walk w;
        w.batchFile = win.batchFile;
        w.ownBegin = bf.ownBegin;
        w.ownEnd = bf.ownEnd;
        w.pos = win.begin;
        w.end = win.end;
        w.state = startState(dfa, bf, haystack, win.begin);
        w.data = bf.at(haystack, win.begin);
        walks.push_back(w);
        cursors.push_back({ runs[j].first + 1, runs[j].last, win.cap });
    }
    auto idle = [&](uint32_t state) {
        return state == dfa.start[Dfa::AfterNonWord] || state == dfa.start[Dfa::AfterWord]
            || state == dfa.start[Dfa::AtFileStart];
    };
    Walk *base = walks.data();
    walker.runQueue<kLanes>(
        walks.data(), int(walks.size()),
        [&](Walk &w) {
            const BatchFile &bf = batch.files[w.batchFile];
            if (w.end == bf.fileSize)
                walker.reportEof(w, bf.fileSize);
        },
        [&](Walk &w) {
            WindowCursor &c = cursors[size_t(&w - base)];
            const BatchFile &bf = batch.files[w.batchFile];
            // A match in progress: a step further, taking in the windows it reaches. A start state
            // has none: what a walk from it reports starts here, beyond every atom of the window.
            if (w.pos < c.cap && !idle(w.state)) {
                w.end = std::min(c.cap, w.pos + 64);
                for (; c.next < c.last && windows[c.next].begin <= w.end; ++c.next) {
                    w.end = std::max(w.end, windows[c.next].end);
                    c.cap = std::max(c.cap, windows[c.next].cap);
                }
                return true;
            }
            if (c.next == c.last)
                return false;
            const Window &win = windows[c.next++];
            w.pos = win.begin;
            w.end = win.end;
            c.cap = win.cap;
            w.state = startState(dfa, bf, haystack, win.begin);
            w.data = bf.at(haystack, win.begin);
            return true;
        });
}

/// The prefiltered groups' DFAs over the marked blocks, widened by each group's longest match.
void scanWindows(const FileBatch &batch, const PatternCatalog &catalog, const AtomPrefilter &pre,
                 const AtomMarks &marks, int threads, const uint8_t *counted, LazyCaches &lazyCaches,
                 std::vector<std::vector<RawHit>> &perThread, std::vector<std::vector<RawCount>> &perThreadCounts,
                 CpuEngineProfile *profile)
{
    const std::vector<Window> windows = windowsOf(batch, catalog, pre, marks);
    if (windows.empty())
        return;
    const std::vector<WindowRun> runs = windowRuns(windows);
    const uint8_t *haystack = batch.haystack.get();
    std::atomic<size_t> next { 0 };
    constexpr size_t kRunsPerTake = 64;
    auto worker = [&](int t) {
        std::vector<Walk> walks;
        std::vector<WindowCursor> cursors;
        for (size_t i = next.fetch_add(kRunsPerTake); i < runs.size(); i = next.fetch_add(kRunsPerTake)) {
            const size_t end = std::min(runs.size(), i + kRunsPerTake);
            for (size_t j = i; j < end;) {
                const int g = windows[runs[j].first].group;
                size_t groupEnd = j;
                while (groupEnd < end && windows[runs[groupEnd].first].group == g)
                    ++groupEnd;
                const auto g0 = profile ? Clock::now() : Clock::time_point {};
                if (const std::shared_ptr<const LazyDfa> &lazy = catalog.groups[size_t(g)].lazy) {
                    LazyDfa::Cache &cache = lazyCaches.get(t, size_t(g), lazy);
                    for (; j < groupEnd; ++j) {
                        const uint32_t f = windows[runs[j].first].batchFile;
                        walkLazyWindows(cache, windows.data(), runs[j].first, runs[j].last, batch.files[f], f,
                                        haystack, counted, pre.screened.data(), perThread[size_t(t)],
                                        perThreadCounts[size_t(t)]);
                    }
                } else {
                    const Dfa &dfa = catalog.groups[size_t(g)].dfa;
                    DfaWalker walker(dfa, perThread[size_t(t)], perThreadCounts[size_t(t)], counted,
                                     pre.screened.data());
                    walkTableWindows(walker, dfa, batch, windows, runs.data() + j, groupEnd - j, walks, cursors);
                    j = groupEnd;
                }
                if (profile)
                    profile->addGroup(t, g, g0);
            }
        }
    };
    runWorkers(runs.size() < 2 ? 1 : threads, worker);
}


/// A piece of an unbounded chunk, walked beside the others from a speculative state (see scanUnbounded).
struct Piece
{
    std::vector<RawHit> hits;
    std::vector<RawCount> counts;
    int64_t begin = 0, end = 0;
    uint32_t specState = 0; // the state it started from
    uint32_t exitState = 0; // the state after its last byte
};

/// A large unbounded chunk whose pieces are walked by several items, on any thread, and settled after them.
struct SharedChunk
{
    uint32_t batchFile = 0;
    int group = 0;
    int unboundedIndex = 0;
    std::vector<Piece> pieces;
};

/// Parts of a large chunk: two per thread where the chunk is large enough, each at most kItemBytes and at
/// least eight pieces (so that each part's walks fill the lanes).
size_t piecesPerPart(const BatchFile &bf, int64_t pieceBytes, int threads)
{
    const int64_t own = bf.ownEnd - bf.ownBegin;
    const int64_t partBytes = std::max(8 * pieceBytes, std::min(kItemBytes, own / (2 * threads)));
    return size_t((partBytes + pieceBytes - 1) / pieceBytes);
}

size_t piecesOf(const BatchFile &bf, int64_t pieceBytes)
{
    return size_t((bf.ownEnd - bf.ownBegin + pieceBytes - 1) / pieceBytes);
}

/// Whether a chunk is worth cutting into parts for several items: more than one part.
bool isLargeChunk(const BatchFile &bf, int64_t pieceBytes, int threads)
{
    return bf.holdEnd > bf.ownBegin && piecesOf(bf, pieceBytes) > piecesPerPart(bf, pieceBytes, threads);
}

/// Cuts batch file f's chunk into pieces (a SharedChunk) and adds an item per part of them.
void shareChunk(const BatchFile &bf, uint32_t f, int group, int unboundedIndex, int64_t pieceBytes, int threads,
                std::vector<SharedChunk> &shared, std::vector<Item> &items)
{
    const size_t n = piecesOf(bf, pieceBytes);
    const size_t partPieces = piecesPerPart(bf, pieceBytes, threads);
    SharedChunk chunk;
    chunk.batchFile = f;
    chunk.group = group;
    chunk.unboundedIndex = unboundedIndex;
    chunk.pieces.resize(n);
    for (size_t j = 0; j < n; ++j) {
        chunk.pieces[j].begin = bf.ownBegin + int64_t(j) * pieceBytes;
        chunk.pieces[j].end = std::min(bf.ownEnd, chunk.pieces[j].begin + pieceBytes);
    }
    for (size_t j = 0; j < n; j += partPieces) {
        Item part { group, -1, 1, f, unboundedIndex, 0 };
        part.shared = int(shared.size());
        part.firstPiece = j;
        part.pieceCount = std::min(partPieces, n - j);
        part.bytes = chunk.pieces[j + part.pieceCount - 1].end - chunk.pieces[j].begin;
        items.push_back(part);
    }
    shared.push_back(std::move(chunk));
}

/// A walk over [begin, end) of a chunk that owns the ends there.
Walk walkOver(const FileBatch &batch, uint32_t f, int64_t begin, int64_t end, uint32_t state)
{
    Walk w;
    w.batchFile = f;
    w.ownBegin = w.pos = begin;
    w.ownEnd = w.end = end;
    w.state = state;
    w.data = batch.files[f].at(batch.haystack.get(), begin);
    return w;
}

/// The state a chunk's walk starts from: the file's start, or the state carried from the previous batch.
uint32_t chunkStart(const Dfa &dfa, const FileBatch &batch, uint32_t f, const std::vector<uint32_t> &carryIn,
                    size_t numUnbounded, int unboundedIndex)
{
    return batch.files[f].firstChunk ? dfa.start[Dfa::AtFileStart]
                                     : carryIn[f * numUnbounded + size_t(unboundedIndex)];
}

// A piece's look-ahead byte decides matches that end on its last byte (a trailing \b); the chunk's last piece
// leaves that to finishChunk.
void lookAhead(DfaWalker &scanner, const FileBatch &batch, Walk &w)
{
    if (w.end < batch.files[w.batchFile].ownEnd)
        scanner.run(w, w.end + 1);
}

// The carried state is the one after the last owned byte, before the look-ahead byte.
void finishChunk(DfaWalker &scanner, const FileBatch &batch, Walk &w, size_t numUnbounded, int unboundedIndex,
                 std::vector<uint32_t> &carryOut)
{
    const BatchFile &bf = batch.files[w.batchFile];
    carryOut[w.batchFile * numUnbounded + size_t(unboundedIndex)] = w.state;
    scanner.run(w, bf.holdEnd);
    if (bf.lastChunk)
        scanner.reportEof(w, bf.fileSize);
}

/**
 * The pieces of one chunk, each walked from its speculative state, made exact: from the first piece's exit
 * state on, each piece whose speculative start differs from the true state is walked again from the true state
 * next to a walk from its speculative state until both are in the same state; from there on they agree, so
 * only the hits before that point are replaced. Then the chunk is finished and its hits go to the scanner.
 */
void settlePieces(DfaWalker &scanner, const FileBatch &batch, uint32_t f, Piece *pieces, size_t count,
                  size_t numUnbounded, int unboundedIndex, std::vector<uint32_t> &carryOut)
{
    const BatchFile &bf = batch.files[f];
    std::vector<RawHit> trueHits, specHits;
    std::vector<RawCount> trueCounts, specCounts;
    constexpr int64_t kCompareEvery = 256;
    uint32_t state = pieces[0].exitState;
    for (size_t j = 1; j < count; ++j) {
        Piece &p = pieces[j];
        if (state == p.specState) {
            state = p.exitState;
            continue;
        }
        trueHits.clear();
        specHits.clear();
        trueCounts.clear();
        specCounts.clear();
        Walk tw = walkOver(batch, f, p.begin, p.end, state);
        tw.hits = &trueHits;
        tw.counts = &trueCounts;
        Walk sw = walkOver(batch, f, p.begin, p.end, p.specState);
        sw.hits = &specHits;
        sw.counts = &specCounts;
        while (tw.pos < p.end && tw.state != sw.state) {
            const int64_t stop = std::min(p.end, tw.pos + kCompareEvery);
            scanner.run(tw, stop);
            scanner.run(sw, stop);
        }
        if (tw.state == sw.state) {
            // Same from here on: the speculative walk's first hits are exactly those of the walk from its
            // state, so they are swapped for the true walk's; counts are corrected by difference.
            scanner.flushCount(tw);
            scanner.flushCount(sw);
            trueHits.insert(trueHits.end(), p.hits.begin() + ptrdiff_t(specHits.size()), p.hits.end());
            p.hits.swap(trueHits);
            p.counts.insert(p.counts.end(), trueCounts.begin(), trueCounts.end());
            for (RawCount c : specCounts) {
                c.count = -c.count;
                p.counts.push_back(c);
            }
            state = p.exitState;
            continue;
        }
        // Never the same within the piece: the true walk replaces it, look-ahead byte included.
        state = tw.state;
        lookAhead(scanner, batch, tw);
        scanner.flushCount(tw);
        p.hits.swap(trueHits);
        p.counts.swap(trueCounts);
    }
    // At the chunk's end, owning the chunk's ends: the look-ahead byte and the end of the file decide the rest.
    Walk last = walkOver(batch, f, bf.ownEnd, bf.ownEnd, state);
    last.ownBegin = bf.ownBegin;
    finishChunk(scanner, batch, last, numUnbounded, unboundedIndex, carryOut);
    scanner.flushCount(last);
    for (size_t j = 0; j < count; ++j)
        scanner.take(pieces[j].hits, pieces[j].counts);
}

/**
 * One item of an unbounded group: consecutive chunks, each walked from its true start (the file's start or the
 * state carried from the previous batch). A chunk of at least two pieces is cut into pieces that are walked
 * side by side with the other walks, so that a large file does not leave seven of the eight lanes idle: piece
 * k > 0 starts speculatively from the start state, and settlePieces makes it exact. Unless a match is in
 * progress, an unanchored DFA forgets where it started within a few bytes, so the walks again are short.
 *
 * An item of a SharedChunk walks only its part's pieces and leaves them to be settled once every part is
 * walked: a chunk of a large file is then scanned on all threads, not one.
 */
void scanUnbounded(DfaWalker &scanner, const Dfa &dfa, const FileBatch &batch, const Item &item,
                   const std::vector<uint32_t> &carryIn, size_t numUnbounded, int64_t pieceBytes,
                   std::vector<Walk> &walks, std::vector<uint32_t> &carryOut, std::vector<SharedChunk> &shared)
{
    const uint8_t *haystack = batch.haystack.get();
    walks.clear();
    if (item.shared >= 0) {
        SharedChunk &chunk = shared[size_t(item.shared)];
        const uint32_t f = chunk.batchFile;
        const BatchFile &bf = batch.files[f];
        for (size_t j = item.firstPiece; j < item.firstPiece + item.pieceCount; ++j) {
            Piece &p = chunk.pieces[j];
            p.specState = j == 0 ? chunkStart(dfa, batch, f, carryIn, numUnbounded, item.unboundedIndex)
                                 : startState(dfa, bf, haystack, p.begin);
            Walk w = walkOver(batch, f, p.begin, p.end, p.specState);
            w.hits = &p.hits;
            w.counts = &p.counts;
            walks.push_back(w);
        }
        scanner.runQueue<kLanes>(walks.data(), int(walks.size()), [&](Walk &w) {
            chunk.pieces[item.firstPiece + size_t(&w - walks.data())].exitState = w.state;
            lookAhead(scanner, batch, w);
        });
        return;
    }
    struct Split
    {
        uint32_t batchFile;
        size_t first, count; // pieces
    };
    std::vector<Piece> pieces;
    std::vector<Split> splits;
    std::vector<int> pieceOf; // per walk: its piece, or -1 for a whole chunk
    for (int k = 0; k < item.count; ++k) {
        const uint32_t f = item.batchFile + uint32_t(k);
        const BatchFile &bf = batch.files[f];
        if (bf.holdEnd <= bf.ownBegin)
            continue;
        const Walk w = walkOver(batch, f, bf.ownBegin, bf.ownEnd,
                                chunkStart(dfa, batch, f, carryIn, numUnbounded, item.unboundedIndex));
        const int64_t n = int64_t(piecesOf(bf, pieceBytes));
        if (n < 2) {
            walks.push_back(w);
            pieceOf.push_back(-1);
            continue;
        }
        splits.push_back({ f, pieces.size(), size_t(n) });
        for (int64_t j = 0; j < n; ++j) {
            Piece p;
            p.begin = bf.ownBegin + j * pieceBytes;
            p.end = std::min(bf.ownEnd, p.begin + pieceBytes);
            p.specState = j == 0 ? w.state : startState(dfa, bf, haystack, p.begin);
            pieceOf.push_back(int(pieces.size()));
            walks.push_back(walkOver(batch, f, p.begin, p.end, p.specState));
            pieces.push_back(std::move(p));
        }
    }
    for (size_t i = 0; i < walks.size(); ++i)
        if (pieceOf[i] >= 0) {
            walks[i].hits = &pieces[size_t(pieceOf[i])].hits;
            walks[i].counts = &pieces[size_t(pieceOf[i])].counts;
        }

    Walk *base = walks.data();
    scanner.runQueue<kLanes>(walks.data(), int(walks.size()), [&](Walk &w) {
        const int piece = pieceOf[size_t(&w - base)];
        if (piece < 0) {
            finishChunk(scanner, batch, w, numUnbounded, item.unboundedIndex, carryOut);
            return;
        }
        pieces[size_t(piece)].exitState = w.state;
        lookAhead(scanner, batch, w);
    });
    for (const Split &split : splits)
        settlePieces(scanner, batch, split.batchFile, pieces.data() + split.first, split.count, numUnbounded,
                     item.unboundedIndex, carryOut);
}

std::vector<int> unboundedGroupsOf(const PatternCatalog &catalog)
{
    std::vector<int> groups;
    for (int g = 0; g < int(catalog.groups.size()); ++g)
        if (catalog.groups[size_t(g)].unbounded())
            groups.push_back(g);
    return groups;
}

/// Items of one unbounded group: runs of the batch's chunks, and the parts of its large ones.
void addUnboundedItems(const FileBatch &batch, int group, int unboundedIndex, int64_t pieceBytes, int threads,
                       std::vector<SharedChunk> &shared, std::vector<Item> &items)
{
    uint32_t first = 0;
    int count = 0;
    int64_t bytes = 0;
    for (uint32_t f = 0; f <= batch.files.size(); ++f) {
        const bool end = f == batch.files.size();
        if (!end && threads > 1 && isLargeChunk(batch.files[f], pieceBytes, threads)) {
            if (count > 0)
                items.push_back({ group, -1, count, first, unboundedIndex, bytes });
            count = 0;
            bytes = 0;
            shareChunk(batch.files[f], f, group, unboundedIndex, pieceBytes, threads, shared, items);
            continue;
        }
        if (!end && count == 0)
            first = f;
        if (!end) {
            ++count;
            bytes += batch.files[f].holdEnd - batch.files[f].ownBegin;
        }
        if (count > 0 && (end || count == kMaxSegmentsPerItem || bytes >= kItemBytes)) {
            items.push_back({ group, -1, count, first, unboundedIndex, bytes });
            count = 0;
            bytes = 0;
        }
    }
}

/// Items of one bounded group's pass, or of the atom screen (kAtomPass): runs of the batch's segments.
void addSegmentItems(const FileBatch &batch, int group, int threads, std::vector<Item> &items)
{
    // Runs of segments sized so that both threads get several and each keeps its lanes full. The screen has
    // no lanes: its runs are cut so that every thread gets four (a 32 MiB batch was 13 runs of 4 MiB for 16
    // threads on the H200, and those that met a file dense in hits held the others up).
    int64_t itemBytes = kItemBytes;
    if (group == kAtomPass) {
        int64_t total = 0;
        for (const Segment &seg : batch.segments)
            total += seg.scanEnd - seg.scanBegin;
        itemBytes = std::clamp<int64_t>(total / (4 * int64_t(threads)), 64 << 10, kItemBytes);
    }
    int first = 0;
    int64_t bytes = 0;
    for (int s = 0; s < int(batch.segments.size()); ++s) {
        const Segment &seg = batch.segments[size_t(s)];
        bytes += seg.scanEnd - seg.scanBegin;
        if (s - first + 1 == kMaxSegmentsPerItem || bytes >= itemBytes || s + 1 == int(batch.segments.size())) {
            items.push_back({ group, first, s - first + 1, 0, -1, bytes });
            first = s + 1;
            bytes = 0;
        }
    }
}

/// The atom screen's item: the prefilter's screens and xor atoms over each of its segments.
void screenItem(const AtomPrefilter &pre, AtomMarks &marks, const FileBatch &batch, const Item &item,
                const CpuEngine::KeyBlocks *keyBlocks, const uint8_t *counted, ScreenScratch &scratch,
                std::vector<RawHit> &hits, std::vector<RawCount> &counts)
{
    const uint8_t *haystack = batch.haystack.get();
    for (int k = 0; k < item.count; ++k) {
        const Segment &seg = batch.segments[size_t(item.firstSegment + k)];
        const BatchFile &bf = batch.files[seg.batchFile];
        screenSegment(pre, marks, batch, seg, keyBlocks, counted, scratch, hits, counts);
        if (!pre.xorAtoms.empty())
            markXorAtoms(pre, marks, bf.at(haystack, seg.scanBegin), seg.scanEnd - seg.scanBegin,
                         bf.dataOffset + (seg.scanBegin - bf.holdBegin), scratch.candidates);
        if (!pre.deltaXorAtoms.empty())
            markDeltaXorAtoms(pre, marks, bf.at(haystack, seg.scanBegin), seg.scanEnd - seg.scanBegin,
                              bf.dataOffset + (seg.scanBegin - bf.holdBegin), scratch.xorDeltas, scratch.xorMatches,
                              scratch.candidates);
    }
}

/// A bounded group's item: its segments, each walked from the state its context gives.
void walkSegments(DfaWalker &scanner, const Dfa &dfa, const FileBatch &batch, const Item &item,
                  std::vector<Walk> &walks)
{
    const uint8_t *haystack = batch.haystack.get();
    walks.resize(size_t(item.count));
    for (int k = 0; k < int(walks.size()); ++k) {
        const Segment &seg = batch.segments[size_t(item.firstSegment + k)];
        const BatchFile &bf = batch.files[seg.batchFile];
        Walk &w = walks[size_t(k)];
        w = Walk();
        w.batchFile = seg.batchFile;
        w.ownBegin = seg.ownBegin;
        w.ownEnd = seg.ownEnd;
        w.pos = seg.scanBegin;
        w.end = seg.scanEnd;
        w.state = startState(dfa, bf, haystack, seg.scanBegin);
        w.data = bf.at(haystack, seg.scanBegin);
    }
    scanner.runQueue<kLanes>(walks.data(), int(walks.size()), [&](Walk &w) {
        const BatchFile &bf = batch.files[w.batchFile];
        if (w.end == bf.fileSize)
            scanner.reportEof(w, bf.fileSize);
    });
}

/// The threads' hits and counts, into the result.
void gatherResults(const std::vector<std::vector<RawHit>> &perThread,
                   const std::vector<std::vector<RawCount>> &perThreadCounts, BatchResult &result)
{
    size_t total = 0;
    for (const auto &v : perThread)
        total += v.size();
    result.hits.clear();
    result.hits.reserve(total);
    for (const auto &v : perThread)
        result.hits.insert(result.hits.end(), v.begin(), v.end());
    result.counts.clear();
    for (const auto &v : perThreadCounts)
        result.counts.insert(result.counts.end(), v.begin(), v.end());
}

/// `busyMs`: per thread, the time it spent on items.
void fillTelemetry(BatchResult &result, const QString &engine, int64_t workItems, const std::vector<double> &busyMs,
                   double wallMs)
{
    const int threads = int(busyMs.size());
    BatchTelemetry &t = result.telemetry;
    t.engine = engine;
    t.backend = QStringLiteral("cpu");
    t.device = QStringLiteral("%1 threads").arg(threads);
    t.workItems = workItems;
    t.workerGroups = threads;
    t.workgroupSize = 1;
    t.wallMs = wallMs;
    double busy = 0;
    for (double b : busyMs)
        busy += b;
    t.occupancy = t.wallMs > 0 ? std::min(1.0, busy / (t.wallMs * threads)) : 0;
    t.hits = int64_t(result.hits.size());
    for (const RawCount &c : result.counts)
        t.hits += c.count;
}
} // namespace

QString CpuEngine::name() const
{
    return QStringLiteral("cpu");
}

int64_t CpuEngine::preferredBatchBytes() const
{
    return hardwareThreads() <= 4 ? int64_t(8) << 20 : int64_t(32) << 20;
}

CpuEngine::CpuEngine()
    : m_lazyCaches(std::make_unique<LazyCaches>())
    , m_marks(std::make_unique<AtomMarks>())
{
}

CpuEngine::~CpuEngine() = default;

void CpuEngine::setCountedPatterns(const std::vector<bool> &counted)
{
    m_counted.assign(counted.begin(), counted.end());
    if (std::find(m_counted.begin(), m_counted.end(), 1) == m_counted.end())
        m_counted.clear();
}

bool CpuEngine::scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                     const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error)
{
    Q_UNUSED(error);
    const auto t0 = Clock::now();

    const std::vector<int> unboundedGroups = unboundedGroupsOf(catalog);
    const size_t numUnbounded = unboundedGroups.size();

    std::vector<Item> items;
    const int wantThreads = params.threads > 0 ? params.threads : hardwareThreads();
    const int64_t pieceBytes = std::max<int64_t>(params.segmentBytes, 256);
    std::vector<SharedChunk> shared;
    // Unbounded groups: runs of consecutive chunks, each chunk walked whole (its state carried on), several
    // in lock step like segments. A large chunk is cut into parts for several items instead (shareChunk), so
    // that a batch holding one large file keeps every thread busy.
    const AtomPrefilter *pre = m_atomPrefilter ? catalog.prefilter.get() : nullptr;
    for (size_t u = 0; u < numUnbounded && !m_keyBlocks; ++u) {
        if (pre && pre->covers(unboundedGroups[u]))
            continue; // windows instead (an unbounded YARA regex within YARA's scan limit)
        addUnboundedItems(batch, unboundedGroups[u], int(u), pieceBytes, wantThreads, shared, items);
    }
    // Big unbounded chunks first so that no thread is left with one at the end.
    std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) { return a.bytes > b.bytes; });
    // Groups the atom prefilter covers get no pass of their own: one screen over every segment instead.
    AtomMarks *marks = nullptr;
    if (pre) {
        m_marks->begin(*pre, batch, catalog.groups.size());
        marks = m_marks.get();
    }
    for (int g = pre ? kAtomPass : 0; g < int(catalog.groups.size()); ++g) {
        if (g >= 0 && (m_keyBlocks || catalog.groups[size_t(g)].unbounded() || (pre && pre->covers(g))))
            continue;
        if (g == kAtomPass && pre->screen.empty() && pre->hashScreen.empty() && pre->sparseScreen.empty() && pre->xorAtoms.empty()
            && pre->deltaXorAtoms.empty())
            continue;
        addSegmentItems(batch, g, wantThreads, items);
    }

    result.carryOut.assign(batch.files.size() * numUnbounded, 0);
    const int threads = std::max(1, std::min(wantThreads, int(items.size())));
    std::vector<std::vector<RawHit>> perThread(static_cast<size_t>(threads));
    std::vector<std::vector<RawCount>> perThreadCounts(static_cast<size_t>(threads));
    // Patterns of another catalog than the one counted for are not counted.
    const uint8_t *counted = m_counted.size() == catalog.patterns.size() ? m_counted.data() : nullptr;
    std::vector<double> busyMs(size_t(threads), 0);
    std::atomic<size_t> next { 0 };

    const uint8_t *screened = pre ? pre->screened.data() : nullptr;
    // Timed per item, outside the walks' loops: off, it costs a test per item.
    const std::unique_ptr<CpuEngineProfile> profile =
        m_profiling ? std::make_unique<CpuEngineProfile>(threads, catalog, pre) : nullptr;
    auto worker = [&](int t) {
        const auto w0 = Clock::now();
        std::vector<RawHit> &hits = perThread[size_t(t)];
        std::vector<Walk> walks;
        ScreenScratch scratch;
        scratch.candidates = profile ? profile->candidates(t) : nullptr;
        for (size_t i = next++; i < items.size(); i = next++) {
            const Item &item = items[i];
            const auto i0 = profile ? Clock::now() : Clock::time_point {};
            if (item.group == kAtomPass) {
                screenItem(*pre, *marks, batch, item, m_keyBlocks, counted, scratch, hits, perThreadCounts[size_t(t)]);
                if (profile)
                    profile->addScreen(t, i0);
                continue;
            }
            const Dfa &dfa = catalog.groups[size_t(item.group)].dfa;
            DfaWalker scanner(dfa, hits, perThreadCounts[size_t(t)], counted, screened);
            if (item.firstSegment < 0)
                scanUnbounded(scanner, dfa, batch, item, carryIn, numUnbounded, pieceBytes, walks, result.carryOut,
                              shared);
            else
                walkSegments(scanner, dfa, batch, item, walks);
            if (profile)
                profile->addGroup(t, item.group, i0);
        }
        busyMs[size_t(t)] = msSince(w0);
    };

    runWorkers(threads, worker);

    // Every part of the shared chunks is walked: settled here.
    for (SharedChunk &chunk : shared) {
        const auto s0 = profile ? Clock::now() : Clock::time_point {};
        const Dfa &dfa = catalog.groups[size_t(chunk.group)].dfa;
        DfaWalker scanner(dfa, perThread[0], perThreadCounts[0], counted, screened);
        settlePieces(scanner, batch, chunk.batchFile, chunk.pieces.data(), chunk.pieces.size(), numUnbounded,
                     chunk.unboundedIndex, result.carryOut);
        if (profile)
            profile->addGroup(0, chunk.group, s0);
    }

    if (pre) {
        m_lazyCaches->reserveThreads(threads);
        scanWindows(batch, catalog, *pre, *marks, threads, counted, *m_lazyCaches, perThread, perThreadCounts,
                    profile.get());
    }

    gatherResults(perThread, perThreadCounts, result);
    result.patternMs.clear();
    if (profile)
        profile->into(result);
    fillTelemetry(result, name(), int64_t(items.size()), busyMs, msSince(t0));
    return true;
}

bool CpuEngine::scanScreens(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                            const KeyBlocks &blocks, BatchResult &result)
{
    m_keyBlocks = &blocks;
    const bool prefilter = std::exchange(m_atomPrefilter, true);
    const bool ok = scan(batch, catalog, params, {}, result, nullptr);
    m_atomPrefilter = prefilter;
    m_keyBlocks = nullptr;
    return ok;
}

} // namespace Hitscope
