// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <QString>

#include "rules/condition.h"

namespace yaramod {
class Rule;
}

namespace Hitscope {

/**
 * Compiles the condition of a YARA rule parsed by yaramod into a ConditionProgram with YARA 4.2.3's semantics.
 *
 * Strings are referred to by their index in rule.getStrings() (declaration order, anonymous strings included),
 * which is the order ConditionContext::strings must follow. Other rules are referred to through `ruleIndex`.
 *
 * Refused, with a one-line reason: modules (and `entrypoint`), floats, string literals and their operators,
 * external variables, references to rules `ruleIndex` does not know, and what YARA itself refuses to compile
 * (division by a constant zero, integer overflow in constants, a constant negative shift, more than four
 * nested loops, a string the condition never uses).
 *
 * yaramod 3.6 gives unary minus the lowest arithmetic precedence (`-1 + 2` parses as `-(1 + 2)`); arithmetic is
 * therefore re-associated here with YARA's precedences from the operands' source order.
 */
class YaraConditionCompiler
{
public:
    /// How a condition uses one of its rule's strings, as far as YARA's scanning (not the condition) cares.
    struct StringUse
    {
        /**
         * When every use of a string is `$s at C` with one constant C, YARA only looks for the string at C if
         * the string is literal (a text string, or a hex string or regex that is a plain byte sequence): its
         * match list, and so `yara -s`, then holds at most the match at C. This is C in that case, and only
         * applies to literal strings. The condition's answer is the same either way.
         */
        std::optional<int64_t> fixedOffset;
    };

    /// `uses`, when given, receives one entry per string of the rule (same order) when the compilation succeeds.
    static ConditionPtr compile(const yaramod::Rule &rule,
                                const std::function<int(const std::string &ruleName)> &ruleIndex, QString *reason,
                                std::vector<StringUse> *uses = nullptr);
};

} // namespace Hitscope
