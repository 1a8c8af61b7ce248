// SPDX-License-Identifier: GPL-3.0-or-later
#include "yaraloader.h"

#include <algorithm>

#include <QDir>
#include <QFileInfo>

#include "rules/yarastringcompiler.h"

namespace Hitscope {

namespace {

/// YARA's YR_MAX_INCLUDE_DEPTH.
constexpr int kMaxIncludeDepth = 16;

/// Where the prefix matches in `of (prefix*)`, as YARA's wildcard check reads it.
void collectWildcards(const YaraExpr *e, std::set<QByteArray> &out)
{
    if (!e)
        return;
    if (e->kind == YaraExpr::Kind::RuleSet)
        for (const QByteArray &n : e->names)
            if (n.endsWith('*'))
                out.insert(n.chopped(1));
    for (const auto &c : e->children)
        collectWildcards(c.get(), out);
}

/// A rule's score from its meta: `score` first, then `severity`; numbers as written (also "70" in quotes, as
/// some collections write it) and the usual words. Clamped to 0-100; -1 when there is neither.
int metaScore(const std::vector<YaraMeta> &metas)
{
    static const std::pair<const char *, int> words[] = {
        { "critical", 100 }, { "high", 75 }, { "medium", 50 }, { "moderate", 50 }, { "low", 25 }, { "info", 10 },
        { "informational", 10 },
    };
    for (const char *key : { "score", "severity" }) {
        for (const YaraMeta &m : metas) {
            if (m.id.compare(key, Qt::CaseInsensitive) != 0)
                continue;
            if (m.type == YaraMeta::Type::Integer)
                return int(std::clamp<int64_t>(m.integer, 0, 100));
            if (m.type != YaraMeta::Type::String)
                continue;
            bool ok = false;
            const qlonglong n = m.text.trimmed().toLongLong(&ok);
            if (ok)
                return int(std::clamp<qlonglong>(n, 0, 100));
            for (const auto &[word, value] : words)
                if (m.text.trimmed().compare(word, Qt::CaseInsensitive) == 0)
                    return value;
        }
    }
    return -1;
}

} // namespace

YaraLoader::YaraLoader(RuleSet &into, YaraExternals externals, RuleSources sources)
    : m_set(into)
    , m_externals(std::move(externals))
    , m_sources(std::move(sources))
{
}

void YaraLoader::reject(const QString &file, int line, const QString &rule, const QString &reason)
{
    m_set.rejections.push_back({ file, line, rule, reason });
}

bool YaraLoader::looksLikeYara(const QByteArray &data)
{
    const std::vector<YaraToken> tokens = YaraLexer::tokenize(data, 0);
    for (size_t i = 0; i + 1 < tokens.size(); ++i) {
        const YaraToken &t = tokens[i];
        if (t.isKeyword("rule") && tokens[i + 1].kind == YaraToken::Kind::Identifier && i + 2 < tokens.size()
            && (tokens[i + 2].isPunct("{") || tokens[i + 2].isPunct(":")))
            return true;
        if (t.isKeyword("import") && tokens[i + 1].kind == YaraToken::Kind::Text)
            return true;
        if (t.kind == YaraToken::Kind::Include)
            return true;
    }
    return false;
}

bool YaraLoader::tokenize(const QString &path, int depth, QStringList &stack, std::vector<YaraToken> &out,
                          const QString &fromFile, int fromLine)
{
    QByteArray data;
    QString error;
    if (!m_sources.read(path, &data, &error)) {
        if (fromFile.isEmpty())
            reject(path, 0, {}, QStringLiteral("cannot read: %1").arg(error));
        else
            reject(fromFile, fromLine, {}, QStringLiteral("can't open include file: %1 (%2)").arg(path, error));
        return false;
    }
    // A text not saved yet may have no file, hence no canonical path: its absolute one still stops a cycle.
    QString canonical = QFileInfo(path).canonicalFilePath();
    if (canonical.isEmpty())
        canonical = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    stack.push_back(canonical);
    const int index = int(m_files.size());
    m_files.push_back(path);
    const QDir dir = QFileInfo(path).absoluteDir();
    std::vector<YaraToken> tokens = YaraLexer::tokenize(data, index);
    tokens.pop_back(); // End
    for (YaraToken &t : tokens) {
        if (t.kind != YaraToken::Kind::Include) {
            out.push_back(std::move(t));
            continue;
        }
        const QString target = QDir::isAbsolutePath(QString::fromUtf8(t.text)) ? QString::fromUtf8(t.text)
                                                                               : dir.filePath(QString::fromUtf8(t.text));
        QString targetCanonical = QFileInfo(target).canonicalFilePath();
        if (targetCanonical.isEmpty() && m_sources.hasText(target))
            targetCanonical = QDir::cleanPath(QFileInfo(target).absoluteFilePath());
        if (depth + 1 >= kMaxIncludeDepth)
            reject(path, t.line, {}, QStringLiteral("too many levels of included rules"));
        else if (!targetCanonical.isEmpty() && stack.contains(targetCanonical))
            reject(path, t.line, {}, QStringLiteral("include circular reference (%1)").arg(QString::fromUtf8(t.text)));
        else
            tokenize(target, depth + 1, stack, out, path, t.line);
    }
    stack.pop_back();
    return true;
}

void YaraLoader::loadText(const QString &path, const QByteArray &text)
{
    m_sources.setText(path, text);
    load(path);
}

void YaraLoader::load(const QString &path)
{
    m_files.clear();
    std::vector<YaraToken> tokens;
    QStringList stack;
    if (!tokenize(path, 0, stack, tokens, {}, 0))
        return;
    YaraToken end;
    end.kind = YaraToken::Kind::End;
    end.line = tokens.empty() ? 1 : tokens.back().line;
    end.file = tokens.empty() ? 0 : tokens.back().file;
    tokens.push_back(end);

    const std::vector<YaraParser::Item> items = YaraParser::parse(tokens);
    for (const YaraParser::Item &item : items) {
        const QString file = m_files.value(item.file, path);
        switch (item.kind) {
        case YaraParser::Item::Kind::Import:
            if (item.module.isEmpty() || item.module.contains('\0'))
                reject(file, item.line, {}, QStringLiteral("invalid module name \"%1\"").arg(QString::fromUtf8(item.module)));
            else if (!isYaraModule(item.module))
                reject(file, item.line, {}, QStringLiteral("unknown module \"%1\"").arg(QString::fromUtf8(item.module)));
            else
                m_modules.insert(item.module);
            break;
        case YaraParser::Item::Kind::Error: {
            if (item.rule.name.isEmpty() || item.rule.line == 0) {
                reject(file, item.line, {}, item.message);
                break;
            }
            const QString ruleFile = m_files.value(item.rule.file, path);
            const QString where = file == ruleFile ? QStringLiteral("line %1").arg(item.line)
                                                   : QStringLiteral("%1:%2").arg(file).arg(item.line);
            reject(ruleFile, item.rule.line, QString::fromUtf8(item.rule.name),
                   QStringLiteral("%1: %2").arg(where, item.message));
            if (file == ruleFile)
                m_set.rejections.back().errorLine = item.line;
            break;
        }
        case YaraParser::Item::Kind::Rule:
            addRule(item.rule);
            break;
        }
    }
}

void YaraLoader::addRule(const YaraRuleDecl &decl)
{
    const QString file = m_files.value(decl.file);
    const QString name = QString::fromUtf8(decl.name);
    if (m_ruleByName.count(decl.name) || m_externals.count(decl.name) || m_modules.count(decl.name)) {
        reject(file, decl.line, name, QStringLiteral("duplicated identifier \"%1\"").arg(name));
        return;
    }
    for (const QByteArray &prefix : m_wildcards) {
        if (decl.name.startsWith(prefix)) {
            reject(file, decl.line, name,
                   QStringLiteral("rule identifier \"%1\" matches previously used wildcard rule set").arg(name));
            return;
        }
    }
    Rule out;
    out.name = name;
    out.sourceFile = file;
    out.line = decl.line;
    out.ns = QStringLiteral("default");
    out.isPrivate = decl.isPrivate;
    out.isGlobal = decl.isGlobal;
    for (const QByteArray &tag : decl.tags)
        out.tags.push_back(QString::fromUtf8(tag));
    out.score = metaScore(decl.metas);

    std::vector<Pattern> patterns;
    QString error;
    int errorLine = 0;
    QStringList warnings;
    for (const YaraStringDecl &s : decl.strings) {
        YaraStringCompiler::Result r = YaraStringCompiler::compile(s);
        if (!r.warning.isEmpty())
            warnings.push_back(r.warning);
        if (!r.error.isEmpty()) {
            error = QStringLiteral("line %1: string %2: %3").arg(s.line).arg(QString::fromUtf8(s.id), r.error);
            errorLine = s.line;
            break;
        }
        Pattern p;
        p.id = QString::fromUtf8(s.id);
        p.source = s.source;
        p.regex = std::move(r.dfa);
        p.isPrivate = s.has(YaraStringDecl::Private);
        p.yara = std::move(r.yara);
        patterns.push_back(std::move(p));
    }
    std::vector<YaraConditionCompiler::StringUse> uses;
    if (error.isEmpty()) {
        YaraConditionCompiler::Scope scope;
        // YARA declares a rule before compiling its condition: the condition may name the rule itself.
        const int self = int(m_set.rules.size());
        scope.ruleIndex = [this, &decl, self](const QByteArray &n) {
            if (n == decl.name)
                return self;
            const auto it = m_ruleByName.find(n);
            return it == m_ruleByName.end() ? -1 : it->second;
        };
        scope.rulesWithPrefix = [this, &decl, self](const QByteArray &prefix) {
            std::vector<int> rules;
            for (const QByteArray &n : m_ruleNames)
                if (n.startsWith(prefix))
                    rules.push_back(m_ruleByName[n]);
            if (decl.name.startsWith(prefix))
                rules.push_back(self);
            return rules;
        };
        scope.externals = &m_externals;
        scope.modules = m_modules;
        scope.warnings = &warnings;
        out.condition = YaraConditionCompiler::compile(decl, scope, &error, &uses);
        if (!out.condition && error.isEmpty())
            error = QStringLiteral("the condition cannot be evaluated");
    }
    // A string only used as `$a at C` is searched at C alone by YARA: its other matches are not listed.
    for (size_t i = 0; error.isEmpty() && i < uses.size() && i < patterns.size(); ++i)
        if (uses[i].fixedOffset)
            std::const_pointer_cast<YaraString>(patterns[i].yara)->fixedOffset = *uses[i].fixedOffset;
    if (!error.isEmpty()) {
        reject(file, decl.line, name, error);
        m_set.rejections.back().errorLine = errorLine;
        return;
    }
    // As yara prints them, after the file and line: the rule still runs.
    for (const QString &w : warnings) {
        m_set.notes.push_back(QStringLiteral("warning: %1:%2: rule %3: %4").arg(file).arg(decl.line).arg(name, w));
        m_set.warnings.push_back({ file, decl.line, name, w });
    }
    collectWildcards(decl.condition.get(), m_wildcards);
    const int index = int(m_set.rules.size());
    for (Pattern &p : patterns) {
        p.ruleIndex = index;
        out.patterns.push_back(int(m_set.patterns.size()));
        m_set.patterns.push_back(std::move(p));
    }
    m_set.rules.push_back(std::move(out));
    m_ruleByName[decl.name] = index;
    m_ruleNames.push_back(decl.name);
}

} // namespace Hitscope
