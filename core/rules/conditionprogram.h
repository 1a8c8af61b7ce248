// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <QByteArray>

#include "pattern/prioritymatcher.h"
#include "rules/condition.h"

namespace Hitscope {

/**
 * A compiled YARA condition: a flat array of nodes evaluated recursively, with YARA 4.2's value model.
 *
 * Every value is an int64_t, and "undefined" is YARA's own in-band marker (Undefined below), not a separate
 * flag: YARA's virtual machine tests for undefined by comparing with that bit pattern, so an arithmetic result
 * that happens to equal it is undefined there too, and using the same representation keeps us exact.
 * Booleans are 0 and 1, but a raw integer may flow where YARA lets it (a loop body `(i)`, `x or y` returning
 * x): loops add the body's value, not its truth, exactly as YARA's ADD_M does.
 *
 * Built by YaraConditionCompiler; nodes refer to their children by index, strings by their rule-local index.
 */
class ConditionProgram final : public Condition
{
public:
    /// YARA's YR_UNDEFINED.
    static constexpr int64_t Undefined = int64_t(0xFFFABADAFABADAFFULL);
    /// YARA allows four nested loops; each loop owns one variable slot (its depth), and a dictionary loop a
    /// second one for the value (depth + MaxLoopDepth).
    static constexpr int MaxLoopDepth = 4;

    enum class Op : uint8_t {
        Const,       ///< imm
        FileSize,
        Rule,        ///< imm = RuleSet index of the rule
        LoopVar,     ///< imm = slot
        Found,       ///< $s; b = string
        Count,       ///< #s; b = string
        FoundAt,     ///< $s at a; b = string
        FoundIn,     ///< $s in (a..c); b = string
        Offset,      ///< @s[a]; b = string
        Length,      ///< !s[a]; b = string
        Of,          ///< a = quantifier, strings lists[b .. b+c)
        ForOf,       ///< a = quantifier, strings lists[b .. b+c), d = body, imm = slot
        ForRange,    ///< a = quantifier, b..c = bounds, d = body, imm = slot
        ForEnum,     ///< a = quantifier, items (node indices) lists[b .. b+c), d = body, imm = slot
        Not,
        And,
        Or,
        Eq,
        Ne,
        Lt,
        Le,
        Gt,
        Ge,
        Add,
        Sub,
        Mul,
        Div,
        Mod,
        Neg,
        BitNot,
        BitAnd,
        BitOr,
        BitXor,
        Shl,
        Shr,
        Read,        ///< a = offset; imm = ReadSigned | ReadBigEndian | size in bytes
        Defined,     ///< a
        CountIn,     ///< #s in (a..c); b = string
        OfRules,     ///< a = quantifier, rules (RuleSet indices) lists[b .. b+c)
        PercentOf,   ///< a = percentage, lists[b .. b+c) strings, or rules when imm = 1
        OfIn,        ///< a = quantifier, strings lists[b .. b+c), in (d..imm) (node indices)
        // Floats: a double's bits in the int64_t (Undefined keeps its own bits, as in YARA's VM).
        IntToFloat,  ///< a
        FAdd,
        FSub,
        FMul,
        FDiv,
        FNeg,
        FEq,
        FNe,
        FLt,
        FLe,
        FGt,
        FGe,
        // Strings: a value is an index into strings().
        StrConst,    ///< imm
        StrEq,
        StrNe,
        StrLt,
        StrLe,
        StrGt,
        StrGe,
        Contains,
        IContains,
        StartsWith,
        IStartsWith,
        EndsWith,
        IEndsWith,
        IEquals,
        Matches,     ///< a = string; imm = index into the regexes
        StrToBool,   ///< a
        // YARA modules (read through ConditionContext::modules). An object is a ModuleAccess handle.
        ModRoot,     ///< imm = strings() index of the module's name: its top structure
        ModField,    ///< a = structure; c = the field's place among the structure's declared members; imm = strings()
                     ///< index of its name
        ModItem,     ///< a = array, b = index
        ModEntry,    ///< a = dictionary, b = key (a string)
        ModValue,    ///< a = object; imm = ModInteger, ModFloat or ModString
        ModCall,     ///< a = function, arguments lists[b .. b+c), d = what it returns (ModInteger...), imm = strings()
                     ///< index of the overload's argument format
        ForArray,    ///< a = quantifier, b = array, d = body, imm = slot of the item
        ForDict,     ///< a = quantifier, b = dictionary, d = body, imm = slot of the key (the value's: + MaxLoopDepth)
        EntryPoint,
    };
    static constexpr int64_t ModInteger = 0;
    static constexpr int64_t ModFloat = 1;
    static constexpr int64_t ModString = 2;
    static constexpr int64_t ReadSigned = 0x100;
    static constexpr int64_t ReadBigEndian = 0x200;

    /// A string operand: >= 0 is the rule-local string index; < 0 is the string bound by the for-of loop whose
    /// variable is in slot (-ref - 1).
    static constexpr int32_t loopStringRef(int slot) { return -slot - 1; }

    struct Node
    {
        Op op = Op::Const;
        int32_t a = -1;
        int32_t b = -1;
        int32_t c = -1;
        int32_t d = -1;
        int64_t imm = 0;
    };

    ConditionProgram(std::vector<Node> nodes, std::vector<int32_t> lists, int32_t root,
                     std::vector<QByteArray> strings = {},
                     std::vector<std::shared_ptr<const PriorityMatcher>> regexes = {});
    /// Whether node i is false (or undefined, which a rule takes as false) when no string of the rule matched.
    bool falseWithoutMatches(int32_t i) const;

    bool evaluate(const ConditionContext &context) const override;
    /// The condition's raw value (Undefined included): what YARA leaves on its stack before MATCH_RULE.
    int64_t value(const ConditionContext &context) const;
    std::vector<bool> stringsNeedingOffsets(size_t strings) const override;
    std::vector<int64_t> matchesNeeded(size_t strings) const override;
    bool needsAMatch() const override;

    /// The YARA modules the condition reads, and whether it reads `entrypoint`.
    std::vector<QByteArray> modulesUsed() const override;
    bool readsEntryPoint() const override;
    std::vector<int> moduleRegexes() const override;

    const std::vector<Node> &nodes() const { return m_nodes; }
    int32_t root() const { return m_root; }

private:
    struct State;
    /// Calls fn(string) for every rule-local string the operand `ref` may stand for (a for-of variable: each
    /// string its loops bind).
    template<typename Fn>
    void forStrings(int32_t ref, size_t strings, Fn &&fn) const;
    int64_t eval(int32_t index, State &state) const;
    int64_t matchQuery(const Node &n, State &state) const;
    int64_t ofStrings(const Node &n, State &state) const;
    int64_t ofSet(const Node &n, State &state) const;
    int64_t stringLoop(const Node &n, State &state) const;
    int64_t rangeLoop(const Node &n, State &state) const;
    int64_t listLoop(const Node &n, State &state) const;
    int64_t loopResult(int64_t quantifier, int64_t sum, int64_t iterations) const;
    static bool endIteration(State &state, size_t mark, int64_t value, int64_t quantifier, int64_t &sum,
                             int64_t &iterations);
    /// The string a string-valued node stands for; null when undefined.
    const QByteArray *text(int32_t index, State &state) const;
    int64_t moduleObject(const Node &n, State &state) const;
    int64_t moduleValue(int64_t object, int64_t kind, State &state) const;
    int64_t moduleCall(const Node &n, State &state) const;
    int64_t moduleLoop(const Node &n, State &state) const;

    std::vector<Node> m_nodes;
    std::vector<QByteArray> m_strings;
    std::vector<std::shared_ptr<const PriorityMatcher>> m_regexes;
    std::vector<int32_t> m_lists;
    int32_t m_root = -1;
};

} // namespace Hitscope
