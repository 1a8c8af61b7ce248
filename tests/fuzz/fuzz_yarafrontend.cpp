// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target for the YARA front end: the bytes are a rule file, run in memory through the lexer, the parser and
// both compilers as YaraLoader::load runs a file (without its includes and without reading a file).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include <QByteArray>
#include <QString>

#include "pattern/prioritymatcher.h"
#include "pattern/regexparser.h"
#include "rules/ruleset.h"
#include "rules/yaraconditioncompiler.h"
#include "rules/yaralexer.h"
#include "rules/yaraloader.h"
#include "rules/yaraparser.h"
#include "rules/yarastringcompiler.h"

#include "fuzzlimits.h"

using namespace Hitscope;

namespace {

constexpr size_t kMaxInput = 64 * 1024;
// A compiled string's matcher is tried on the input only when it is small: the Pike VM's cost is its program
// size times the bytes it walks, and timeouts there would hide the front end's own.
constexpr size_t kMaxMatcherProgram = 20000;
constexpr int64_t kMaxMatchSubject = 4096;

// The seeds use these names (ext_*), so that conditions with externals get past the name lookup.
const YaraExternals &fuzzExternals()
{
    static const YaraExternals externals {
        { "ext_int", YaraExternal::fromDefinition("42") },
        { "ext_float", YaraExternal::fromDefinition("1.5") },
        { "ext_bool", YaraExternal::fromDefinition("true") },
        { "ext_str", YaraExternal::fromDefinition("fuzz") },
    };
    return externals;
}

bool conditionRegexTooLarge(const YaraExpr *e)
{
    if (!e)
        return false;
    if (e->kind == YaraExpr::Kind::Regex) {
        RegexFlags flags;
        flags.posixClasses = false;
        if (HitscopeFuzz::regexTooLarge(e->text, flags))
            return true;
    }
    for (const YaraExprPtr &child : e->children)
        if (conditionRegexTooLarge(child.get()))
            return true;
    return false;
}

/// See HitscopeFuzz::kMaxRegexStates.
bool hasTooLargeRegex(const std::vector<YaraParser::Item> &items)
{
    for (const YaraParser::Item &item : items) {
        if (item.kind != YaraParser::Item::Kind::Rule)
            continue;
        for (const YaraStringDecl &s : item.rule.strings) {
            RegexFlags flags;
            flags.posixClasses = false;
            if (s.kind == YaraStringDecl::Kind::Regex && HitscopeFuzz::regexTooLarge(s.value, flags))
                return true;
        }
        if (conditionRegexTooLarge(item.rule.condition.get()))
            return true;
    }
    return false;
}

void tryMatcher(const PriorityMatcher *matcher, const QByteArray &subject)
{
    if (!matcher || matcher->programSize() > kMaxMatcherProgram)
        return;
    const int64_t size = std::min<int64_t>(subject.size(), kMaxMatchSubject);
    const auto *bytes = reinterpret_cast<const uint8_t *>(subject.constData());
    // Offsets outside [0, size) are the matcher's bug, not the input's: trap so that the fuzzer reports them.
    const ByteAt byteAt(bytes, 0, size, [](int64_t) -> uint8_t { __builtin_trap(); });
    for (const int64_t start : { int64_t(0), int64_t(1), size / 2, size - 1 }) {
        if (start < 0 || start >= size)
            continue;
        const int64_t length = matcher->match(start, size, byteAt);
        if (length > size - start)
            __builtin_trap();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > kMaxInput)
        return -1;
    // A copy, not QByteArray::fromRawData: files reach the lexer through QFile::readAll, which ends them with a
    // NUL, and the fuzzer's buffer has none.
    const QByteArray text(reinterpret_cast<const char *>(data), qsizetype(size));
    (void)YaraLoader::looksLikeYara(text);

    const std::vector<YaraToken> tokens = YaraLexer::tokenize(text, 0);
    const std::vector<YaraParser::Item> items = YaraParser::parse(tokens);
    if (hasTooLargeRegex(items))
        return -1;

    // Rules accepted so far, as the loader keeps them, so that conditions naming rules compile further.
    std::map<QByteArray, int> ruleByName;
    std::vector<QByteArray> ruleNames;
    for (const YaraParser::Item &item : items) {
        if (item.kind != YaraParser::Item::Kind::Rule)
            continue;
        const YaraRuleDecl &decl = item.rule;
        if (decl.condition)
            (void)decl.condition->describe();

        bool stringsOk = true;
        for (const YaraStringDecl &s : decl.strings) {
            const YaraStringCompiler::Result r = YaraStringCompiler::compile(s);
            if (!r.error.isEmpty()) {
                stringsOk = false;
                continue;
            }
            (void)r.dfa.minLength();
            (void)r.dfa.maxLength();
            if (r.yara) {
                tryMatcher(r.yara->matcher.get(), text);
                tryMatcher(r.yara->wideMatcher.get(), text);
            }
        }

        const int self = int(ruleNames.size());
        YaraConditionCompiler::Scope scope;
        scope.ruleIndex = [&](const QByteArray &n) {
            if (n == decl.name)
                return self;
            const auto it = ruleByName.find(n);
            return it == ruleByName.end() ? -1 : it->second;
        };
        scope.rulesWithPrefix = [&](const QByteArray &prefix) {
            std::vector<int> rules;
            for (const QByteArray &n : ruleNames)
                if (n.startsWith(prefix))
                    rules.push_back(ruleByName[n]);
            if (decl.name.startsWith(prefix))
                rules.push_back(self);
            return rules;
        };
        scope.externals = &fuzzExternals();
        scope.modules = { "pe" };
        QString reason;
        std::vector<YaraConditionCompiler::StringUse> uses;
        const ConditionPtr condition = YaraConditionCompiler::compile(decl, scope, &reason, &uses);
        if (condition && stringsOk && !ruleByName.count(decl.name)) {
            ruleByName[decl.name] = self;
            ruleNames.push_back(decl.name);
        }
    }
    return 0;
}
