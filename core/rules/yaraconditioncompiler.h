// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <QByteArray>
#include <QString>
#include <QStringList>

#include "rules/condition.h"
#include "rules/yaraast.h"

namespace Hitscope {

/// The value of an external variable, typed as yara types `-d NAME=VALUE` (cli/yara.c's define_external_variables).
struct YaraExternal
{
    enum class Type : uint8_t { Integer, Float, Boolean, String };
    Type type = Type::String;
    int64_t integer = 0;
    double real = 0;
    QByteArray text;

    bool operator==(const YaraExternal &) const = default;

    /// yara's reading of VALUE: a float when it has one dot and digits, an integer when all digits (as C's
    /// atoi reads it), true or false, else a string.
    static YaraExternal fromDefinition(const QByteArray &value);
};

using YaraExternals = std::map<QByteArray, YaraExternal>;

/**
 * Compiles the condition of a parsed YARA rule into a ConditionProgram with YARA 4.2.3's semantics: its types
 * (integer, float, string, regex, boolean), its compile-time errors (grammar.y, parser.c) and its run-time
 * values, undefined included.
 *
 * Strings are referred to by their index in rule.strings (declaration order, anonymous strings included), which
 * is the order ConditionContext::strings must follow.
 *
 * Refused, with a one-line reason: what YARA refuses to compile (module fields and calls are checked against
 * the modules' declarations, ModuleSchema), and module functions given a regular expression, not run yet.
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

    /// What a condition may name besides its own strings and loop variables.
    struct Scope
    {
        /// The RuleSet index of an accepted rule declared before, or -1.
        std::function<int(const QByteArray &name)> ruleIndex;
        /// The accepted rules declared before whose names start with `prefix`, in declaration order.
        std::function<std::vector<int>(const QByteArray &prefix)> rulesWithPrefix;
        const YaraExternals *externals = nullptr;
        std::set<QByteArray> modules; ///< imported by the rule's file
        /// When given, receives the warnings yara prints for the condition (the rule is still accepted).
        QStringList *warnings = nullptr;
    };

    /// `uses`, when given, receives one entry per string of the rule (same order) when the compilation succeeds.
    static ConditionPtr compile(const YaraRuleDecl &rule, const Scope &scope, QString *reason,
                                std::vector<StringUse> *uses = nullptr);
};

} // namespace Hitscope
