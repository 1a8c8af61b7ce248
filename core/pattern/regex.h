// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <bitset>
#include <cstdint>
#include <vector>

namespace Hitscope {

using ByteSet = std::bitset<256>;

/// Zero-width assertions. Start/End are the start and end of the *file* (not of a line or a segment).
/// WideWordBoundary and WideNotWordBoundary: \b and \B of a wide YARA regex, where a word character is a
/// word byte followed by a zero byte and the neighbour is two bytes back (libyara/re.c, _yr_re_is_word_char).
enum class Assertion : uint8_t { FileStart, FileEnd, WordBoundary, NotWordBoundary, WideWordBoundary, WideNotWordBoundary };

/// True for the bytes \w matches: [A-Za-z0-9_].
bool isWordByte(uint8_t b);

/**
 * A parsed pattern as an arena of nodes. Literals, hex strings and regexes all end up here, so that one
 * compiler builds every automaton. Semantics are "report all": every end offset of every match counts.
 */
struct Regex
{
    struct Node
    {
        enum class Type : uint8_t {
            Empty,     ///< matches the empty string
            Bytes,     ///< one byte out of `bytes`
            Concat,    ///< children in order
            Alternate, ///< any child
            Repeat,    ///< child repeated min..max times (max < 0: unbounded)
            Assert     ///< zero-width `assertion`
        };
        Type type = Type::Empty;
        Assertion assertion = Assertion::FileStart;
        ByteSet bytes;
        std::vector<int> children;
        int min = 0;
        int max = 0;
        /// Repeat only: prefers more repetitions. Report-all hits do not depend on it; YARA's choice of one
        /// match per start (PriorityMatcher) does.
        bool greedy = true;
    };

    std::vector<Node> nodes;
    int root = -1;

    bool isValid() const { return root >= 0; }

    int add(Node node);
    int addBytes(const ByteSet &bytes);
    int addConcat(std::vector<int> children);
    int addAlternate(std::vector<int> children);
    int addRepeat(int child, int min, int max);
    int addAssert(Assertion a);

    /// A literal byte string; `caseless` folds ASCII letters only.
    static Regex fromLiteral(const char *data, int size, bool caseless = false);

    /// Shortest and longest match length in bytes; maxLength() is -1 when unbounded. Both saturate at
    /// kLengthCap.
    int minLength() const;
    int maxLength() const;
    /// The same for the subtree at `node`.
    int minLength(int node) const;
    int maxLength(int node) const;
    static constexpr int kLengthCap = 1 << 30;
    bool matchesEmpty() const { return minLength() == 0; }
    bool usesAssertion(Assertion a) const;
    /// The same language read backwards (FileStart and FileEnd swap), for finding where a match starts.
    Regex reversed() const;
    /// `h` mixed with the whole tree: equal for equal trees (cache keys of what is built from regexes).
    uint64_t hash(uint64_t h) const;
};

/// A total order on sequences of byte sets (shorter first), and sorting with duplicates removed: atoms and
/// screened sequences of several alternatives are often the same.
bool byteSequenceLess(const std::vector<ByteSet> &a, const std::vector<ByteSet> &b);
void sortUniqueByteSequences(std::vector<std::vector<ByteSet>> &sequences);

} // namespace Hitscope
