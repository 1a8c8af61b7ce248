// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <map>
#include <set>
#include <vector>

#include <QByteArray>
#include <QString>
#include <QStringList>

#include "rules/ruleset.h"
#include "rules/yaraconditioncompiler.h"
#include "rules/yaralexer.h"
#include "rules/yaraparser.h"
#include "rules/rulesources.h"

namespace Hitscope {

/**
 * Loads YARA rule files (.yar, .yara) into a RuleSet with Hitscope's own YARA 4.2.3 front end (YaraLexer,
 * YaraParser, YaraStringCompiler, YaraConditionCompiler): strings become patterns for the engines, conditions
 * are compiled for evaluation per file. YARA refuses a whole file for one bad rule; here a rule that does not
 * parse, does not compile, or needs a module is rejected alone (with file, line and reason) and the rest of the
 * file runs. Includes are expanded here, so that errors inside included files name the right file and line. All
 * files share YARA's "default" namespace, as with `yara a.yar b.yar`: rules may refer to rules of files loaded
 * before. Files are read through RuleSources, so that an editor's unsaved text loads as its file would.
 */
class YaraLoader
{
public:
    /// `sources`: texts that replace files on disk (every file, included ones too, is read through it).
    explicit YaraLoader(RuleSet &into, YaraExternals externals = {}, RuleSources sources = {});

    /// Appends the rules of one file (and its includes) to the set given at construction.
    void load(const QString &path);
    /// Appends the rules of `text` as if it were the file at `path`: its includes resolve from the folder of
    /// `path`, and rejections name `path` and lines of `text`. The file need not exist.
    void loadText(const QString &path, const QByteArray &text);

    /// Whether `data` reads as YARA rules rather than a literal list: it declares a rule or imports a module.
    static bool looksLikeYara(const QByteArray &data);

private:
    void reject(const QString &file, int line, const QString &rule, const QString &reason);
    /// Tokens of `path` with its includes spliced in; false when the file cannot be read.
    bool tokenize(const QString &path, int depth, QStringList &stack, std::vector<YaraToken> &out,
                  const QString &fromFile, int fromLine);
    void addRule(const YaraRuleDecl &decl);

    RuleSet &m_set;
    YaraExternals m_externals;
    RuleSources m_sources;
    QStringList m_files; ///< of the current load(), by YaraToken::file
    std::map<QByteArray, int> m_ruleByName; ///< accepted rules of the namespace
    std::vector<QByteArray> m_ruleNames;    ///< accepted rules in declaration order (for `of (prefix*)`)
    std::set<QByteArray> m_wildcards;       ///< prefixes used in rule sets: later rules may not match them
    std::set<QByteArray> m_modules;         ///< imported
};

} // namespace Hitscope
