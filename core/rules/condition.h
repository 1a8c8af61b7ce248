// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include <QByteArray>

namespace Hitscope {

class ModuleAccess;

/// One match of one string of a YARA rule, as YARA reports it.
struct StringMatch
{
    int64_t offset = 0;
    int64_t length = 0;

    bool operator==(const StringMatch &) const = default;
};

/// What a condition may read about the file being scanned.
struct ConditionContext
{
    int64_t fileSize = 0;
    /// Reads `size` (1, 2 or 4) bytes at `offset`; false when they are not all inside the file.
    std::function<bool(int64_t offset, int size, uint8_t *out)> read;
    /// Matches of each string of the rule, in declaration order of the strings, each ascending by offset
    /// (private strings included: conditions see them).
    const std::vector<std::vector<StringMatch>> *strings = nullptr;
    /// Optional, per string as `strings`: its number of matches when only that was recorded (its list in
    /// `strings` is then empty), -1 when its matches are listed. See Condition::stringsNeedingOffsets().
    const std::vector<int64_t> *counts = nullptr;
    /// Whether the rule with this RuleSet index matched the file (rules are evaluated in declaration
    /// order; a condition only refers to rules declared before its own).
    std::function<bool(int rule)> ruleMatched;
    /// The file's YARA modules; null: none loaded (every module value undefined).
    const ModuleAccess *modules = nullptr;
};

/**
 * A YARA condition compiled from the parsed rule (YaraConditionCompiler) into a form that is
 * evaluated per file with YARA 4.2's semantics, undefined values included.
 */
class Condition
{
public:
    virtual ~Condition() = default;
    virtual bool evaluate(const ConditionContext &context) const = 0;
    /// Per rule-local string: whether the condition may read where its matches are (`$a at`, `$a in`, `@a[i]`,
    /// `!a[i]`). The others are only tested for existence or counted, so a count may stand for their matches.
    virtual std::vector<bool> stringsNeedingOffsets(size_t strings) const { return std::vector<bool>(strings, true); }
    /// Per rule-local string: how many of its matches the condition can tell apart. With at least that many,
    /// more change nothing (`$a` and `any of` need one, `#a > 5` six). kAllMatches where every one may matter.
    static constexpr int64_t kAllMatches = std::numeric_limits<int64_t>::max();
    /// True when the condition is false for every file in which none of the rule's strings matched (`any of
    /// them`, `$a and filesize < 1MB`, `#a > 2`): such a rule is decided without evaluating it in the files
    /// where none did, which is most rules in most files of a large collection. False when unsure.
    virtual bool needsAMatch() const { return false; }
    /// The YARA modules the condition reads (pe, math...), and whether it reads `entrypoint`.
    virtual std::vector<QByteArray> modulesUsed() const { return {}; }
    virtual bool readsEntryPoint() const { return false; }
    /// The regular expressions the condition gives module functions (ModuleRegexes numbers).
    virtual std::vector<int> moduleRegexes() const { return {}; }
    virtual std::vector<int64_t> matchesNeeded(size_t strings) const
    {
        return std::vector<int64_t>(strings, kAllMatches);
    }
};

using ConditionPtr = std::shared_ptr<const Condition>;

} // namespace Hitscope
