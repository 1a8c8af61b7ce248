// SPDX-License-Identifier: GPL-3.0-or-later
#include "patterncatalog.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <optional>
#include <thread>

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>

#include "automata/atomprefilter.h"
#include "automata/dfabuilder.h"
#include "automata/dfacache.h"
#include "automata/lazydfa.h"
#include "pattern/nfa.h"
#include "util/cachefile.h"
#include "util/hash.h"
#include "util/parallel.h"

namespace Hitscope {

namespace {

// Part of every hint's key: bump it when the grouping, the estimates or the DFA construction change, so that
// hints of the grouping before are no longer used (they would still give correct tables, grouped the old way).
const QByteArray kGroupingHintHeader = QByteArrayLiteral("hitscope grouping hint 2");
constexpr qsizetype kMaxGroupingHints = 64;

/// A chain of single-byte or ASCII case-pair sets. Such a pattern alone needs at most length + 1 DFA
/// states (it is a literal over case-folded bytes), and a group of them at most their total length + 1.
bool literalLike(const Regex &r, int node, std::string *key)
{
    const Regex::Node &n = r.nodes[size_t(node)];
    if (n.type == Regex::Node::Type::Concat) {
        for (int c : n.children)
            if (!literalLike(r, c, key))
                return false;
        return true;
    }
    if (n.type != Regex::Node::Type::Bytes)
        return false;
    const size_t count = n.bytes.count();
    int low = -1;
    for (int b = 0; b < 256 && low < 0; ++b)
        if (n.bytes.test(size_t(b)))
            low = b;
    if (count == 2) {
        const bool casePair = ((low >= 'A' && low <= 'Z') || (low >= 'a' && low <= 'z'))
            && n.bytes.test(size_t(low ^ 0x20));
        if (!casePair)
            return false;
    } else if (count != 1) {
        return false;
    }
    key->push_back(char(count == 2 ? (low | 0x20) : low));
    return true;
}

int64_t saturatingMul(int64_t a, int64_t b)
{
    return a != 0 && b > INT64_MAX / a ? INT64_MAX : a * b;
}

/// The longest match of one node (saturating), -1 when unbounded.
int64_t nodeMaxLength(const Regex &r, int i)
{
    const Regex::Node &n = r.nodes[size_t(i)];
    switch (n.type) {
    case Regex::Node::Type::Empty:
    case Regex::Node::Type::Assert:
        return 0;
    case Regex::Node::Type::Bytes:
        return 1;
    case Regex::Node::Type::Concat:
    case Regex::Node::Type::Alternate: {
        int64_t total = 0;
        for (int c : n.children) {
            const int64_t len = nodeMaxLength(r, c);
            if (len < 0)
                return -1;
            total = n.type == Regex::Node::Type::Concat ? std::min(INT64_MAX - len, total) + len : std::max(total, len);
        }
        return total;
    }
    case Regex::Node::Type::Repeat: {
        const int64_t len = nodeMaxLength(r, n.children.front());
        if (len == 0)
            return 0;
        return len < 0 || n.max < 0 ? -1 : saturatingMul(len, n.max);
    }
    }
    return 0;
}

/// The counted repeats with an upper bound (X{n,m}, m >= 2) reachable from the root, the ones spanning the
/// most bytes first: wide windows such as [^\r\n]{1,64} are what makes a DFA count, and so explode.
std::vector<int> boundedRepeats(const Regex &r)
{
    std::vector<std::pair<int64_t, int>> found;
    std::vector<uint8_t> seen(r.nodes.size(), 0);
    std::vector<int> stack { r.root };
    while (!stack.empty()) {
        const int i = stack.back();
        stack.pop_back();
        if (seen[size_t(i)])
            continue;
        seen[size_t(i)] = 1;
        const Regex::Node &n = r.nodes[size_t(i)];
        if (n.type == Regex::Node::Type::Repeat && (n.max >= 2 || (n.max < 0 && n.min >= 2))) {
            const int64_t span = nodeMaxLength(r, i);
            found.emplace_back(span < 0 ? INT64_MAX : span, i);
        }
        stack.insert(stack.end(), n.children.begin(), n.children.end());
    }
    std::stable_sort(found.begin(), found.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    std::vector<int> out;
    for (const auto &f : found)
        out.push_back(f.second);
    return out;
}

/// `regex` with the first `count` of `repeats` unbounded: it matches wherever `regex` does and ends
/// wherever a match of `regex` ends (and elsewhere too).
Regex relaxedRegex(const Regex &regex, const std::vector<int> &repeats, size_t count)
{
    Regex r = regex;
    for (size_t k = 0; k < count && k < repeats.size(); ++k) {
        // x{300,} counts 300 bytes after every start as surely as x{300,400} does: both become x+ (or x*).
        Regex::Node &n = r.nodes[size_t(repeats[k])];
        n.max = -1;
        n.min = std::min(n.min, 1);
    }
    return r;
}

struct Candidate
{
    int pattern = -1;
    int64_t estimate = 0; ///< expected DFA states when merged
    bool literal = false;
    bool bounded = true;
    std::string key;      ///< literal bytes (case-folded), so that shared prefixes land in one group
    Dfa solo;             ///< the pattern's own DFA, when it was built to check for explosion
    bool hasSolo = false;
    bool verify = false;  ///< the DFAs hold `relaxed` instead of the pattern
    Regex relaxed;
    bool atoms = false;   ///< the CPU engine could scan it around its atoms (AtomPrefilter::suits)
    bool xorForms = false; ///< a YARA xor string (YaraString::xorForms)
};

struct Chunk
{
    std::vector<int> candidates; ///< indices into the candidate list
    bool bounded = true;
};

struct BuiltGroup
{
    std::vector<int> candidates;
    Dfa dfa;
    int64_t rawStates = 0; ///< states before minimization: what the budget limits
    bool bounded = true;
    bool covered = false;  ///< by the CPU engine's atom prefilter
    bool xorForms = false; ///< holds YARA xor strings (grouped apart)
};

bool containsAll(const std::vector<int> &sortedSet, const std::vector<int> &sortedSubset)
{
    return std::includes(sortedSet.begin(), sortedSet.end(), sortedSubset.begin(), sortedSubset.end());
}

/// What a group of candidates is built from: the relaxed form of patterns that need verifying.
std::vector<DfaBuilder::Input> inputsFor(const std::vector<int> &part, const std::vector<Candidate> &candidates,
                                         const RuleSet &rules)
{
    std::vector<DfaBuilder::Input> inputs;
    for (int ci : part) {
        const Candidate &c = candidates[size_t(ci)];
        inputs.push_back({ c.verify ? &c.relaxed : &rules.patterns[size_t(c.pattern)].regex, c.pattern });
    }
    return inputs;
}

/// The groups a hint names (pattern ids per group), built (but for groups of one candidate with its own DFA,
/// which the caller moves in); none when the hint is missing, does not name every candidate exactly once, or
/// names a group that no longer fits its budget.
std::optional<std::vector<BuiltGroup>> buildFromHint(const std::vector<std::vector<int>> &hint,
                                                     const std::vector<Candidate> &candidates, const RuleSet &rules,
                                                     int groupBudget, int patternBudget, int threads,
                                                     const DfaCache &cache, int &fromCache)
{
    if (hint.empty())
        return std::nullopt;
    std::vector<int> byPattern(rules.patterns.size(), -1);
    for (size_t ci = 0; ci < candidates.size(); ++ci)
        byPattern[size_t(candidates[ci].pattern)] = int(ci);
    std::vector<std::vector<int>> parts;
    std::vector<char> seen(candidates.size(), 0);
    size_t named = 0;
    for (const std::vector<int> &ids : hint) {
        std::vector<int> part;
        for (int id : ids) {
            if (id < 0 || size_t(id) >= byPattern.size() || byPattern[size_t(id)] < 0 || seen[size_t(byPattern[size_t(id)])])
                return std::nullopt;
            seen[size_t(byPattern[size_t(id)])] = 1;
            part.push_back(byPattern[size_t(id)]);
        }
        if (part.empty())
            return std::nullopt;
        named += part.size();
        parts.push_back(std::move(part));
    }
    if (named != candidates.size())
        return std::nullopt;
    std::vector<BuiltGroup> groups(parts.size());
    std::atomic_bool failed { false };
    std::atomic_int cached { 0 };
    parallelFor(parts.size(), threads, [&](size_t k, int) {
        if (failed)
            return; // the grouping runs anyway
        BuiltGroup &b = groups[k];
        b.candidates = parts[k];
        for (int ci : b.candidates)
            b.bounded = b.bounded && candidates[size_t(ci)].bounded;
        const Candidate &first = candidates[size_t(b.candidates.front())];
        if (b.candidates.size() == 1 && first.hasSolo) {
            b.rawStates = first.estimate; // its DFA is moved in once every group is known to fit
            return;
        }
        // Merged group DFAs were most of a rule set's start-up once the grouping is known (mixed.yar: 0.2 s of
        // the CLI's 0.28 s on 2 cores): they are kept on disk too, by what they are built from.
        bool hit = false;
        DfaBuilder::Result r = cache.build(inputsFor(b.candidates, candidates, rules),
                                           b.candidates.size() == 1 ? patternBudget : groupBudget, &hit);
        if (hit)
            ++cached;
        if (r.exceededBudget) {
            failed = true;
            return;
        }
        b.dfa = std::move(r.dfa);
        b.rawStates = r.statesBeforeMinimization;
    });
    if (failed)
        return std::nullopt;
    fromCache = cached;
    return groups;
}

/// The candidates in chunks of one kind under the group budget: bounded apart from unbounded, those the atom
/// prefilter suits apart from the others, xor strings apart, literals apart from regexes; literals sorted so that
/// shared prefixes stay together, regexes in rule order.
std::vector<Chunk> chunkCandidates(const std::vector<Candidate> &candidates, int groupBudget)
{
    std::vector<int> order(candidates.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = int(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const Candidate &x = candidates[size_t(a)];
        const Candidate &y = candidates[size_t(b)];
        if (x.bounded != y.bounded)
            return x.bounded;
        if (x.atoms != y.atoms)
            return x.atoms;
        if (x.xorForms != y.xorForms)
            return y.xorForms;
        if (x.literal != y.literal)
            return x.literal;
        return x.literal && x.key < y.key;
    });
    std::vector<Chunk> chunks;
    int64_t chunkStates = 0;
    for (int i : order) {
        const Candidate &c = candidates[size_t(i)];
        const bool fresh = chunks.empty() || chunks.back().bounded != c.bounded
            || candidates[size_t(chunks.back().candidates.front())].literal != c.literal
            || candidates[size_t(chunks.back().candidates.front())].atoms != c.atoms
            || candidates[size_t(chunks.back().candidates.front())].xorForms != c.xorForms
            || chunkStates + c.estimate > groupBudget;
        if (fresh) {
            chunks.push_back({ {}, c.bounded });
            chunkStates = 0;
        }
        chunks.back().candidates.push_back(i);
        chunkStates += c.estimate;
    }
    return chunks;
}

/// Builds the chunks; one that overflows the group budget is split in halves until it fits. A single
/// pattern gets the per-pattern budget (it already passed it alone). The candidate sets (sorted) whose merged
/// DFA exceeded the group budget are added to `failed`: any superset does too (the states of a union project
/// onto each part's), so merging never tries one.
std::vector<BuiltGroup> buildChunks(const std::vector<Chunk> &chunks, std::vector<Candidate> &candidates,
                                    const RuleSet &rules, int groupBudget, int patternBudget, int threads,
                                    std::vector<QString> &rejected, std::vector<std::vector<int>> &failed)
{
    std::vector<std::vector<BuiltGroup>> built(chunks.size());
    std::vector<std::vector<std::vector<int>>> failedPerChunk(chunks.size());
    parallelFor(chunks.size(), threads, [&](size_t k, int) {
        std::vector<std::vector<int>> pending { chunks[k].candidates };
        while (!pending.empty()) {
            std::vector<int> part = std::move(pending.back());
            pending.pop_back();
            if (part.size() == 1 && candidates[size_t(part.front())].hasSolo) {
                Candidate &c = candidates[size_t(part.front())];
                built[k].push_back({ part, std::move(c.solo), c.estimate, chunks[k].bounded });
                continue;
            }
            DfaBuilder::Result r = DfaBuilder::build(inputsFor(part, candidates, rules),
                                                     part.size() == 1 ? patternBudget : groupBudget);
            if (!r.exceededBudget) {
                built[k].push_back({ part, std::move(r.dfa), r.statesBeforeMinimization, chunks[k].bounded });
            } else if (part.size() > 1) {
                std::vector<int> sorted = part;
                std::sort(sorted.begin(), sorted.end());
                failedPerChunk[k].push_back(std::move(sorted));
                const auto mid = part.begin() + long(part.size() / 2);
                pending.emplace_back(mid, part.end()); // popped second: keeps the original order
                pending.emplace_back(part.begin(), mid);
            } else {
                // Only a literal longer than the per-pattern budget gets here: regexes were built alone above.
                rejected[size_t(candidates[size_t(part.front())].pattern)] = QLatin1String("pattern ")
                    + rules.patterns[size_t(candidates[size_t(part.front())].pattern)].id
                    + QLatin1String(" explodes past ") + QString::number(patternBudget)
                    + QLatin1String(" DFA states");
            }
        }
    });
    for (auto &list : failedPerChunk)
        for (auto &f : list)
            failed.push_back(std::move(f));
    std::vector<BuiltGroup> pieces;
    for (std::vector<BuiltGroup> &list : built)
        for (BuiltGroup &b : list)
            pieces.push_back(std::move(b));
    return pieces;
}

/// The CPU engine scans groups its atom prefilter covers only around their atoms: a merge never mixes a
/// covered piece with one that is not (the merged group would lose its cover and cost a full pass). Nor does it
/// mix xor strings with the others.
void markCoveredPieces(std::vector<BuiltGroup> &pieces, const std::vector<Candidate> &candidates,
                       const RuleSet &rules, const std::vector<PatternInfo> &patterns)
{
    PatternCatalog probe;
    probe.patterns = patterns;
    for (const BuiltGroup &b : pieces) {
        DfaGroup g;
        for (int ci : b.candidates) {
            const int len = patterns[size_t(candidates[size_t(ci)].pattern)].maxLength;
            g.patterns.push_back(candidates[size_t(ci)].pattern);
            g.maxMatchLength = len < 0 || g.maxMatchLength < 0 ? -1 : std::max(g.maxMatchLength, len);
        }
        probe.groups.push_back(std::move(g));
    }
    const auto cover = AtomPrefilter::build(rules, probe);
    for (size_t i = 0; i < pieces.size(); ++i) {
        pieces[i].covered = cover && cover->covers(int(i));
        pieces[i].xorForms = candidates[size_t(pieces[i].candidates.front())].xorForms;
    }
}

/// Pieces that one merge would join.
struct Bin
{
    std::vector<size_t> members;
    std::vector<int> candidates; // sorted
    int64_t states = 0;
    bool bounded = true;
    bool covered = false;
    bool xorForms = false;
};

/// One round's packing of `todo` (smallest first) into bins, first fit.
std::vector<Bin> packPieces(const std::vector<BuiltGroup> &todo, const std::vector<std::vector<int>> &failed, int round,
                            int groupBudget)
{
    constexpr int kMergeRounds = 8;
    std::vector<Bin> bins;
    for (size_t i = 0; i < todo.size(); ++i) {
        std::vector<int> mine = todo[i].candidates;
        std::sort(mine.begin(), mine.end());
        Bin *home = nullptr;
        // After a few rounds of failed merges the rest stays as built. Large pieces stay alone: they are
        // what halving split apart, and a merge with one fails only after building most of the budget.
        for (Bin &bin : bins) {
            // Groups the CPU engine walks whole anyway may join across bounded and unbounded (the union is
            // unbounded): one walk instead of two.
            const bool kindsDiffer = bin.bounded != todo[i].bounded && (bin.covered || todo[i].covered);
            if (round >= kMergeRounds || kindsDiffer || bin.covered != todo[i].covered
                || bin.xorForms != todo[i].xorForms
                || bin.states + todo[i].rawStates > groupBudget)
                continue;
            std::vector<int> together;
            std::merge(bin.candidates.begin(), bin.candidates.end(), mine.begin(), mine.end(),
                       std::back_inserter(together));
            const bool knownToFail = std::any_of(failed.begin(), failed.end(),
                                                 [&](const std::vector<int> &f) { return containsAll(together, f); });
            if (!knownToFail) {
                home = &bin;
                bin.candidates = std::move(together);
                break;
            }
        }
        if (!home) {
            bins.push_back({});
            home = &bins.back();
            home->candidates = std::move(mine);
            home->bounded = todo[i].bounded;
            home->covered = todo[i].covered;
            home->xorForms = todo[i].xorForms;
        }
        home->members.push_back(i);
        home->states += todo[i].rawStates;
        home->bounded = home->bounded && todo[i].bounded;
    }
    return bins;
}

/// Halving leaves small pieces (a chunk of 40 regexes can end as 15 groups, most of a few hundred states),
/// and every group costs a pass over the data on both engines. Pieces of the same boundedness are packed
/// back together, first fit from the smallest up (small pieces end together rather than each beside a large
/// one it multiplies with), and each merge is kept only if its DFA really fits: under the group budget and
/// under twice the states of its pieces, so that a merge that multiplies states fails early. A merge that
/// fails is remembered and its pieces packed again without it, which peels its largest piece off.
std::vector<BuiltGroup> mergePieces(std::vector<BuiltGroup> pieces, std::vector<std::vector<int>> failed,
                                    const std::vector<Candidate> &candidates, const RuleSet &rules, int groupBudget,
                                    int threads)
{
    std::vector<BuiltGroup> merged;
    std::vector<BuiltGroup> todo = std::move(pieces);
    for (int round = 0; !todo.empty(); ++round) {
        std::stable_sort(todo.begin(), todo.end(),
                         [](const BuiltGroup &a, const BuiltGroup &b) { return a.rawStates < b.rawStates; });
        std::vector<Bin> bins = packPieces(todo, failed, round, groupBudget);
        // A union usually needs a few times its pieces' states (unanchored patterns multiply); one that needs
        // far more is given up early rather than built up to the whole budget, which would cost seconds.
        std::vector<DfaBuilder::Result> results(bins.size());
        parallelFor(bins.size(), threads, [&](size_t k, int) {
            if (bins[k].members.size() > 1)
                results[k] = DfaBuilder::build(inputsFor(bins[k].candidates, candidates, rules),
                                               int(std::min<int64_t>(groupBudget, 16 * bins[k].states + 4096)));
        });
        std::vector<BuiltGroup> again;
        for (size_t k = 0; k < bins.size(); ++k) {
            Bin &bin = bins[k];
            if (bin.members.size() == 1) {
                merged.push_back(std::move(todo[bin.members.front()]));
            } else if (!results[k].exceededBudget) {
                merged.push_back({ bin.candidates, std::move(results[k].dfa), results[k].statesBeforeMinimization,
                                   bin.bounded, bin.covered, bin.xorForms });
            } else {
                failed.push_back(bin.candidates);
                for (size_t m : bin.members)
                    again.push_back(std::move(todo[m]));
            }
        }
        todo = std::move(again);
    }
    return merged;
}

/// The grouping proper: candidates in chunks of one kind under the budget, chunks halved until they fit, the
/// pieces merged back while merges fit. Bounded and unbounded patterns are chunked apart (they are scanned
/// differently; only groups walked whole join across them when merged); literals group with literals, sorted
/// so that shared prefixes stay together, and regexes with regexes in rule order. A candidate that fits no
/// group gets its reason in `rejected`.
std::vector<BuiltGroup> groupCandidates(std::vector<Candidate> &candidates, const RuleSet &rules,
                                        const std::vector<PatternInfo> &patterns, int groupBudget,
                                        int patternBudget, int threads, std::vector<QString> &rejected)
{
    const std::vector<Chunk> chunks = chunkCandidates(candidates, groupBudget);
    std::vector<std::vector<int>> failed;
    std::vector<BuiltGroup> pieces
        = buildChunks(chunks, candidates, rules, groupBudget, patternBudget, threads, rejected, failed);
    markCoveredPieces(pieces, candidates, rules, patterns);
    std::vector<BuiltGroup> merged
        = mergePieces(std::move(pieces), std::move(failed), candidates, rules, groupBudget, threads);
    // Groups in the order of their first pattern, as before merging: bounded before unbounded, then rule order.
    std::stable_sort(merged.begin(), merged.end(), [&](const BuiltGroup &a, const BuiltGroup &b) {
        if (a.bounded != b.bounded)
            return a.bounded;
        return *std::min_element(a.candidates.begin(), a.candidates.end())
            < *std::min_element(b.candidates.begin(), b.candidates.end());
    });
    return merged;
}

/// The last grouping of the same candidates (PatternCatalog::compile's hint), as lists of pattern ids in group
/// order: its DFAs are built again, but the builds that would only fail are skipped.
QString groupingHintPath(const QString &dir, uint64_t key)
{
    return dir + QLatin1String("/") + QString::number(key, 16).rightJustified(16, QLatin1Char('0'))
        + QLatin1String(".groups");
}

std::vector<std::vector<int>> readGroupingHint(const QString &path)
{
    std::vector<std::vector<int>> groups;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QByteArrayList lines = file.readAll().split('\n');
    if (lines.isEmpty() || lines.front() != kGroupingHintHeader)
        return {};
    for (qsizetype l = 1; l < lines.size(); ++l) {
        if (lines[l].isEmpty())
            continue;
        std::vector<int> ids;
        for (const QByteArray &field : lines[l].split(' ')) {
            bool ok = false;
            const int id = field.toInt(&ok);
            if (!ok || id < 0)
                return {};
            ids.push_back(id);
        }
        groups.push_back(std::move(ids));
    }
    return groups;
}

void writeGroupingHint(const QString &path, const std::vector<std::vector<int>> &groups)
{
    QByteArray text = kGroupingHintHeader;
    text += '\n';
    for (const std::vector<int> &g : groups) {
        for (size_t k = 0; k < g.size(); ++k)
            text += (k ? " " : "") + QByteArray::number(g[k]);
        text += '\n';
    }
    // The folder keeps the hints of the latest rule sets only (each a few hundred bytes).
    writeCacheFile(path, text, QStringLiteral("????????????????.groups"), kMaxGroupingHints);
}

/**
 * How far a pattern's matches can spread through the bytes of a window: the widths of its counted repeats of
 * wide classes (a hex jump [1-16] counts 15, a fixed [4] none). Its lazy states are sets of positions inside
 * those ranges, and a group of such patterns multiplies them: 64 hex strings with jumps made states enough
 * to clear a 2 MiB cache every few bytes (20 s for 3 MB of windows of one group). Alone each stays small.
 */
int gapWidth(const Regex &r)
{
    int width = 0;
    for (const Regex::Node &n : r.nodes) {
        if (n.type != Regex::Node::Type::Repeat)
            continue;
        const Regex::Node &child = r.nodes[size_t(n.children[0])];
        if (child.type == Regex::Node::Type::Bytes && child.bytes.count() >= 16)
            width += n.max < 0 ? Regex::kLengthCap / 2 : n.max - n.min;
        width = std::min(width, Regex::kLengthCap / 2);
    }
    return width;
}

/// The tableless groups of a CPU-only catalog (CompileOptions::tableless): the screened patterns in large groups
/// (nothing walks them), the windowed ones kTablelessGroupSize at a time, bounded apart from unbounded, those
/// with wide jumps (gapWidth) one to a group, and xor
/// strings kXorGroupSize at a time, each with the LazyDfa its windows walk.
void addTablelessGroups(PatternCatalog &catalog, const RuleSet &rules, const std::vector<int> &screenedOnly,
                        const std::vector<int> &windowed, const std::vector<int> &xorWindowed, int threads)
{
    // An xor string is an alternation of up to 512 literals: its lazy states are sets of that many NFA states,
    // and a window around one string's form need not walk the others'.
    constexpr size_t kXorGroupSize = 8;
    constexpr size_t kScreenedGroupSize = 4096;
    // Patterns whose matches spread through wide jumps (gapWidth) get a group each: 4 to a group was 1.7x
    // slower over signature-base's 0.89 GiB scan than 1 (31 s against 18 s).
    constexpr int kSpreadingGapWidth = 4;
    std::vector<std::vector<int>> parts;
    for (size_t i = 0; i < screenedOnly.size(); i += kScreenedGroupSize)
        parts.emplace_back(screenedOnly.begin() + ptrdiff_t(i),
                           screenedOnly.begin() + ptrdiff_t(std::min(screenedOnly.size(), i + kScreenedGroupSize)));
    const size_t firstWindowed = parts.size();
    for (bool bounded : { true, false }) {
        for (bool spreading : { false, true }) {
            std::vector<int> kind;
            for (int p : windowed)
                if ((catalog.patterns[size_t(p)].maxLength >= 0) == bounded
                    && (gapWidth(rules.patterns[size_t(p)].regex) >= kSpreadingGapWidth) == spreading)
                    kind.push_back(p);
            const size_t size = spreading ? 1 : PatternCatalog::kTablelessGroupSize;
            for (size_t i = 0; i < kind.size(); i += size)
                parts.emplace_back(kind.begin() + ptrdiff_t(i),
                                   kind.begin() + ptrdiff_t(std::min(kind.size(), i + size)));
        }
    }
    for (size_t i = 0; i < xorWindowed.size(); i += kXorGroupSize)
        parts.emplace_back(xorWindowed.begin() + ptrdiff_t(i),
                           xorWindowed.begin() + ptrdiff_t(std::min(xorWindowed.size(), i + kXorGroupSize)));
    std::vector<std::shared_ptr<const LazyDfa>> lazy(parts.size());
    parallelFor(parts.size() - firstWindowed, threads, [&](size_t k, int) {
        std::vector<DfaBuilder::Input> inputs;
        for (int p : parts[firstWindowed + k])
            inputs.push_back({ &rules.patterns[size_t(p)].regex, p });
        lazy[firstWindowed + k] = std::make_shared<const LazyDfa>(inputs);
    });
    for (size_t k = 0; k < parts.size(); ++k) {
        DfaGroup group;
        group.tableless = true;
        group.lazy = std::move(lazy[k]);
        group.patterns = parts[k];
        for (int p : group.patterns) {
            const int len = catalog.patterns[size_t(p)].maxLength;
            catalog.patterns[size_t(p)].group = int(catalog.groups.size());
            group.maxMatchLength = len < 0 || group.maxMatchLength < 0 ? -1 : std::max(group.maxMatchLength, len);
        }
        catalog.groups.push_back(std::move(group));
    }
}

/// A tableless group the prefilter could not cover (it never should: the same tests chose its patterns) gets
/// its DFA after all, so that nothing is lost; a pattern of it that explodes is rejected.
bool buildUncoveredTables(PatternCatalog &catalog, const RuleSet &rules, std::vector<QString> &rejected,
                          int patternBudget)
{
    bool changed = false;
    for (size_t g = 0; g < catalog.groups.size(); ++g) {
        DfaGroup &group = catalog.groups[g];
        if (!group.tableless || (catalog.prefilter && catalog.prefilter->covers(int(g))))
            continue;
        std::vector<DfaBuilder::Input> inputs;
        for (int p : group.patterns)
            inputs.push_back({ &rules.patterns[size_t(p)].regex, p });
        DfaBuilder::Result r = DfaBuilder::build(inputs, patternBudget);
        changed = true;
        group.tableless = false;
        group.lazy.reset();
        if (!r.exceededBudget) {
            group.dfa = std::move(r.dfa);
            continue;
        }
        for (int p : group.patterns) {
            rejected[size_t(p)] = QLatin1String("pattern ") + rules.patterns[size_t(p)].id
                + QLatin1String(" explodes past ") + QString::number(patternBudget) + QLatin1String(" DFA states");
            catalog.patterns[size_t(p)].group = -1;
        }
        group.patterns.clear();
    }
    return changed;
}

/// The patterns that may be compiled, with what grouping needs to know of each; the others get their reason in
/// `rejected`.
std::vector<Candidate> candidatesOf(const RuleSet &rules, std::vector<PatternInfo> &patterns,
                                    std::vector<QString> &rejected)
{
    std::vector<Candidate> candidates;
    for (size_t i = 0; i < rules.patterns.size(); ++i) {
        const Pattern &pattern = rules.patterns[i];
        const Regex &regex = pattern.regex;
        PatternInfo &info = patterns[i];
        if (!regex.isValid()) {
            rejected[i] = QLatin1String("pattern ") + pattern.id + QLatin1String(" is empty");
            continue;
        }
        info.minLength = regex.minLength();
        info.maxLength = regex.maxLength();
        if (info.minLength == 0) {
            rejected[i] = QLatin1String("pattern ") + pattern.id + QLatin1String(" can match the empty string");
            continue;
        }
        const uint64_t nfaStates = Nfa::estimateStates(regex);
        if (nfaStates > Nfa::kDefaultMaxStates / 4) {
            rejected[i] = QLatin1String("pattern ") + pattern.id
                + QLatin1String(" is too large (about ") + QString::number(nfaStates)
                + QLatin1String(" automaton states)");
            continue;
        }
        Candidate c;
        c.pattern = int(i);
        c.bounded = info.maxLength >= 0;
        c.literal = literalLike(regex, regex.root, &c.key);
        c.estimate = c.literal ? int64_t(c.key.size()) + 1 : 0;
        candidates.push_back(std::move(c));
    }
    return candidates;
}

/// The patterns of a tableless catalog's tableless groups (addTablelessGroups).
struct TablelessPatterns
{
    std::vector<int> screenedOnly;
    std::vector<int> windowed;
    std::vector<int> xorWindowed;
};

/// Takes out of `candidates` the patterns the prefilter finds.
TablelessPatterns takeTableless(std::vector<Candidate> &candidates, const RuleSet &rules,
                                const std::vector<PatternInfo> &patterns)
{
    TablelessPatterns tableless;
    std::vector<Candidate> rest;
    for (Candidate &c : candidates) {
        const Pattern &pattern = rules.patterns[size_t(c.pattern)];
        const PatternInfo &info = patterns[size_t(c.pattern)];
        // Xor strings (windows around their forms' deltas) are grouped apart: see addTablelessGroups.
        const bool xorForms = pattern.yara && !pattern.yara->xorForms.empty();
        if (!AtomPrefilter::sequencesOf(pattern.regex, info).empty())
            tableless.screenedOnly.push_back(c.pattern);
        else if (AtomPrefilter::suitsWindows(pattern, info))
            (xorForms ? tableless.xorWindowed : tableless.windowed).push_back(c.pattern);
        else
            rest.push_back(std::move(c));
    }
    candidates = std::move(rest);
    return tableless;
}

/// Every pattern that could explode is built alone first, under the per-pattern budget: its estimate is then its
/// DFA's states (-1 when it explodes even relaxed), and the DFA is kept. Returns how many of these builds came
/// from the cache folder.
int buildSolos(std::vector<Candidate> &candidates, const RuleSet &rules, int patternBudget, int threads,
               const DfaCache &dfaCache)
{
    // The slow ones come from the cache folder on later runs: on mixed.yar, one regex that explodes and is
    // relaxed took 62 ms of the CLI's 150 ms start-up on 2 cores, and a xor string 36 ms, while the 20 other
    // patterns took 5 ms.
    constexpr double kKeepSoloAfterMs = 1;
    std::vector<size_t> soloIndex;
    for (size_t i = 0; i < candidates.size(); ++i)
        if (!candidates[i].literal)
            soloIndex.push_back(i);
    std::atomic_int solosFromCache { 0 };
    parallelFor(soloIndex.size(), threads, [&](size_t k, int) {
        Candidate &c = candidates[soloIndex[k]];
        const Regex &exact = rules.patterns[size_t(c.pattern)].regex;
        bool hit = false;
        DfaBuilder::Result r = dfaCache.build({ { &exact, c.pattern } }, patternBudget, &hit, kKeepSoloAfterMs);
        solosFromCache += hit;
        // An exploding pattern gets its widest counted repeats unbounded, one, then two, four... then all,
        // until its DFA fits: that DFA finds every true end (and more, which verification drops).
        const std::vector<int> repeats = r.exceededBudget ? boundedRepeats(exact) : std::vector<int>();
        for (size_t count = 1; r.exceededBudget && !repeats.empty(); count = std::min(count * 2, repeats.size())) {
            Regex relaxed = relaxedRegex(exact, repeats, count);
            r = dfaCache.build({ { &relaxed, c.pattern } }, patternBudget, &hit, kKeepSoloAfterMs);
            solosFromCache += hit;
            if (!r.exceededBudget) {
                c.relaxed = std::move(relaxed);
                c.verify = true;
            }
            if (count == repeats.size())
                break;
        }
        if (r.exceededBudget) {
            c.estimate = -1;
            return;
        }
        c.estimate = r.statesBeforeMinimization;
        c.solo = std::move(r.dfa);
        c.hasSolo = true;
    });
    return solosFromCache;
}

/// Rejects the candidates that explode even relaxed (buildSolos), and notes which of the others need verifying.
void dropExploding(std::vector<Candidate> &candidates, const RuleSet &rules, std::vector<PatternInfo> &patterns,
                   int patternBudget, std::vector<QString> &rejected)
{
    std::vector<Candidate> kept;
    for (Candidate &c : candidates) {
        patterns[size_t(c.pattern)].verify = c.verify;
        if (c.estimate < 0)
            rejected[size_t(c.pattern)] = QLatin1String("pattern ") + rules.patterns[size_t(c.pattern)].id
                + QLatin1String(" explodes past ") + QString::number(patternBudget) + QLatin1String(" DFA states");
        else
            kept.push_back(std::move(c));
    }
    candidates = std::move(kept);
}

/// Patterns the CPU engine can scan around atoms are grouped apart from the others: one weak pattern (a
/// two-byte literal, say) would cost its whole group the prefilter.
/// YARA xor strings too: their DFA needs every byte class (up to 256 keys), and the CPU engine's windows around
/// other patterns' atoms would all walk it.
void markGroupedApart(std::vector<Candidate> &candidates, const RuleSet &rules,
                       const std::vector<PatternInfo> &patterns)
{
    for (Candidate &c : candidates) {
        const Pattern &pattern = rules.patterns[size_t(c.pattern)];
        c.atoms = AtomPrefilter::suits(pattern, patterns[size_t(c.pattern)]);
        c.xorForms = pattern.yara && !pattern.yara->xorForms.empty();
    }
}

/// Everything the grouping depends on. A hint written for the same key names the groups that grouping
/// ended with; they are built again (every DFA is fresh), and only if one of them fails to fit, or the hint
/// does not name every candidate once, does the grouping run. A hint can thus cost time, never a match.
uint64_t groupingHintKey(const std::vector<Candidate> &candidates, const RuleSet &rules, int groupBudget,
                         int patternBudget)
{
    uint64_t hintKey = kHashSeed;
    const QByteArray version = QByteArrayLiteral(HITSCOPE_VERSION) + kGroupingHintHeader;
    hintKey = hashBytes(hintKey, version.constData(), size_t(version.size()));
    const int32_t budgets[] = { groupBudget, patternBudget };
    hintKey = hashBytes(hintKey, budgets, sizeof budgets);
    for (const Candidate &c : candidates) {
        const int32_t fields[] = { c.pattern, c.literal, c.bounded, c.verify, c.atoms, c.xorForms };
        hintKey = hashBytes(hintKey, fields, sizeof fields);
        hintKey = hashBytes(hintKey, &c.estimate, sizeof c.estimate);
        hintKey = (c.verify ? c.relaxed : rules.patterns[size_t(c.pattern)].regex).hash(hintKey);
    }
    return hintKey;
}

/// The groups of one candidate built from a hint take the DFA the candidate already has (buildFromHint).
void moveSolosIn(std::vector<BuiltGroup> &built, std::vector<Candidate> &candidates)
{
    for (BuiltGroup &b : built) {
        Candidate &c = candidates[size_t(b.candidates.front())];
        if (b.candidates.size() == 1 && c.hasSolo)
            b.dfa = std::move(c.solo);
    }
    for (Candidate &c : candidates)
        c.solo = Dfa(); // the others were built for their estimates only
}

/// Hints are pruned by age: one in use stays young.
void keepHintYoung(const QString &hintPath)
{
    QFile used(hintPath);
    if (used.open(QIODevice::Append))
        used.setFileTime(QDateTime::currentDateTime(), QFileDevice::FileModificationTime);
}

/// The built groups as the catalog's DFA groups; `grouping` receives their pattern ids, in the order their DFA
/// was built from. Returns how many candidates they hold.
size_t addDfaGroups(PatternCatalog &catalog, std::vector<BuiltGroup> &built, const std::vector<Candidate> &candidates,
                    std::vector<std::vector<int>> &grouping)
{
    size_t grouped = 0;
    for (BuiltGroup &b : built) {
        DfaGroup group;
        group.dfa = std::move(b.dfa);
        bool bounded = true;
        grouping.emplace_back();
        for (int ci : b.candidates) {
            const int p = candidates[size_t(ci)].pattern;
            grouping.back().push_back(p);
            group.patterns.push_back(p);
            catalog.patterns[size_t(p)].group = int(catalog.groups.size());
            const int len = catalog.patterns[size_t(p)].maxLength;
            bounded = bounded && len >= 0;
            group.maxMatchLength = std::max(group.maxMatchLength, len);
        }
        grouped += b.candidates.size();
        if (!bounded)
            group.maxMatchLength = -1;
        std::sort(group.patterns.begin(), group.patterns.end());
        catalog.groups.push_back(std::move(group));
    }
    return grouped;
}

/// The rejected patterns out of every group, each with its rule's place.
void addRejections(PatternCatalog &catalog, const RuleSet &rules, const std::vector<QString> &rejected)
{
    for (size_t i = 0; i < rejected.size(); ++i) {
        if (rejected[i].isEmpty())
            continue;
        catalog.patterns[i].group = -1;
        catalog.patterns[i].verify = false;
        Rejection r;
        const int ruleIndex = rules.patterns[i].ruleIndex;
        if (ruleIndex >= 0 && size_t(ruleIndex) < rules.rules.size()) {
            const Rule &rule = rules.rules[size_t(ruleIndex)];
            r.file = rule.sourceFile;
            r.line = rule.line;
            r.rule = rule.name;
        }
        r.reason = rejected[i];
        catalog.rejections.push_back(std::move(r));
    }
}

} // namespace

size_t PatternCatalog::tableBytes() const
{
    size_t sum = 0;
    for (const DfaGroup &g : groups)
        sum += g.dfa.tableBytes();
    return sum;
}

size_t PatternCatalog::tablelessGroups() const
{
    return size_t(std::count_if(groups.begin(), groups.end(), [](const DfaGroup &g) { return g.tableless; }));
}

int PatternCatalog::maxBoundedMatchLength() const
{
    int best = 0;
    for (const DfaGroup &g : groups)
        if (!g.unbounded())
            best = std::max(best, g.maxMatchLength);
    return best;
}

int PatternCatalog::chunkContext() const
{
    return std::max(maxBoundedMatchLength(), prefilter ? prefilter->maxRadius + 1 : 0);
}

size_t PatternCatalog::unboundedGroups() const
{
    return size_t(std::count_if(groups.begin(), groups.end(), [](const DfaGroup &g) { return g.unbounded(); }));
}

PatternCatalog PatternCatalog::compile(const RuleSet &rules, const CompileOptions &options)
{
    QElapsedTimer timer;
    timer.start();
    PatternCatalog catalog;
    catalog.patterns.resize(rules.patterns.size());
    const int groupBudget = std::max(1, options.maxStatesPerGroup);
    const int patternBudget = std::max(groupBudget, options.maxStatesPerPattern);
    const int threads = options.threads > 0 ? options.threads : hardwareThreads();

    std::vector<QString> rejected(rules.patterns.size());
    std::vector<Candidate> candidates = candidatesOf(rules, catalog.patterns, rejected);

    // In a tableless catalog, what the prefilter finds needs no DFA: tableless groups, built below.
    TablelessPatterns tableless;
    if (options.tableless)
        tableless = takeTableless(candidates, rules, catalog.patterns);

    const DfaCache dfaCache(options.groupingHintDir);
    catalog.solosFromCache = buildSolos(candidates, rules, patternBudget, threads, dfaCache);
    dropExploding(candidates, rules, catalog.patterns, patternBudget, rejected);
    markGroupedApart(candidates, rules, catalog.patterns);

    const uint64_t hintKey = groupingHintKey(candidates, rules, groupBudget, patternBudget);
    const QString hintPath = options.groupingHintDir.isEmpty() ? QString() : groupingHintPath(options.groupingHintDir, hintKey);
    std::vector<BuiltGroup> built;
    int groupsFromCache = 0;
    if (auto hinted = hintPath.isEmpty() ? std::nullopt
                                         : buildFromHint(readGroupingHint(hintPath), candidates, rules, groupBudget,
                                                         patternBudget, threads, dfaCache, groupsFromCache)) {
        built = std::move(*hinted);
        catalog.groupedFromHint = true;
        catalog.groupsFromCache = groupsFromCache;
        moveSolosIn(built, candidates);
        keepHintYoung(hintPath);
    } else {
        built = groupCandidates(candidates, rules, catalog.patterns, groupBudget, patternBudget, threads, rejected);
    }

    std::vector<std::vector<int>> grouping;
    const size_t grouped = addDfaGroups(catalog, built, candidates, grouping);

    // A hint must name every candidate; one rejected while grouping (a literal over the budget) is in no group.
    if (!hintPath.isEmpty() && !catalog.groupedFromHint && grouped == candidates.size())
        writeGroupingHint(hintPath, grouping);
    addTablelessGroups(catalog, rules, tableless.screenedOnly, tableless.windowed, tableless.xorWindowed, threads);
    catalog.prefilter = AtomPrefilter::build(rules, catalog);
    if (buildUncoveredTables(catalog, rules, rejected, patternBudget)) {
        std::erase_if(catalog.groups, [](const DfaGroup &g) { return g.patterns.empty(); });
        for (size_t g = 0; g < catalog.groups.size(); ++g)
            for (int p : catalog.groups[g].patterns)
                catalog.patterns[size_t(p)].group = int(g);
        catalog.prefilter = AtomPrefilter::build(rules, catalog);
    }
    addRejections(catalog, rules, rejected);

    catalog.compileMs = double(timer.nsecsElapsed()) / 1e6;
    return catalog;
}

uint64_t PatternCatalog::fingerprint() const
{
    uint64_t h = kHashSeed;
    for (const DfaGroup &g : groups) {
        const Dfa &d = g.dfa;
        const uint32_t header[] = { d.numStates, d.numClasses, d.start[0], d.start[1], d.start[2], d.dead,
                                    uint32_t(g.maxMatchLength) };
        h = hashBytes(h, header, sizeof header);
        h = hashBytes(h, d.byteClass.data(), d.byteClass.size());
        h = hashVector(h, d.transitions);
        h = hashVector(h, d.acceptIndex);
        h = hashVector(h, d.acceptEntries);
        h = hashVector(h, g.patterns);
    }
    std::vector<uint8_t> verify;
    for (const PatternInfo &info : patterns)
        verify.push_back(info.verify);
    h = hashVector(h, verify);
    return h;
}

QString PatternCatalog::defaultGroupingHintDir()
{
    const QString base = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation);
    return base.isEmpty() ? QString() : base + QLatin1String("/hitscope/groupings");
}

} // namespace Hitscope
