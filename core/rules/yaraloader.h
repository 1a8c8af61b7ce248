// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <QString>

#include "rules/ruleset.h"

namespace yaramod {
class YaraFile;
class Yaramod;
}

namespace Hitscope {

/**
 * Loads YARA rule files (.yar, .yara) with yaramod into a RuleSet: strings become patterns for the engines,
 * conditions are compiled for evaluation per file. YARA refuses a whole file for one bad rule; here a rule
 * that does not parse, needs a module, or uses something unsupported is rejected alone (with file, line
 * and reason) and the rest of the file runs. Includes are expanded here, so that errors inside included
 * files name the right file and line. All files share YARA's "default" namespace, as with `yara a.yar
 * b.yar`: rules may refer to rules of files loaded before.
 */
class YaraLoader
{
public:
    explicit YaraLoader(RuleSet &into);
    ~YaraLoader();

    /// Appends the rules of one file (and its includes) to the set given at construction.
    void load(const QString &path);

private:
    struct Source;
    bool expand(const QString &path, int depth, QStringList &stack, Source &source, const QString &fromFile,
                int fromLine);
    void reject(const QString &file, int line, const QString &rule, const QString &reason);
    /// Parses `source`, rejecting what yaramod refuses one rule (or line) at a time; null when nothing parses.
    /// Its first `prefix` lines are imports and stubs: the prefix lines it blanks go to `rejectedPrefixLines`.
    std::unique_ptr<yaramod::YaraFile> parse(Source &source, int prefix, std::vector<int> &rejectedPrefixLines);
    /// The parsed rules after the first `prefix` lines, compiled into the set (or rejected).
    void addRules(const yaramod::YaraFile &parsed, const Source &source, int prefix, const QString &path);

    RuleSet &m_set;
    std::map<std::string, int> m_ruleByName; ///< accepted rules of the namespace
    std::unique_ptr<yaramod::Yaramod> m_yaramod;
};

} // namespace Hitscope
