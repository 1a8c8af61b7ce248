// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>
#include <string>

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
 * nested loops).
 *
 * yaramod 3.6 gives unary minus the lowest arithmetic precedence (`-1 + 2` parses as `-(1 + 2)`); arithmetic is
 * therefore re-associated here with YARA's precedences from the operands' source order.
 */
class YaraConditionCompiler
{
public:
    static ConditionPtr compile(const yaramod::Rule &rule,
                                const std::function<int(const std::string &ruleName)> &ruleIndex, QString *reason);
};

} // namespace Hitscope
