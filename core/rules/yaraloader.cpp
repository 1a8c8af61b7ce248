// SPDX-License-Identifier: GPL-3.0-or-later
#include "yaraloader.h"

#include <algorithm>
#include <set>
#include <sstream>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <yaramod/yaramod.h>

#include "rules/yaraconditioncompiler.h"
#include "rules/yarastringcompiler.h"

namespace Hitscope {

namespace {

/// YARA's YR_MAX_INCLUDE_DEPTH.
constexpr int kMaxIncludeDepth = 16;

const QRegularExpression &includeLine()
{
    static const QRegularExpression re(QStringLiteral("^\\s*include\\s+\"([^\"]*)\"\\s*(//.*)?$"));
    return re;
}

const QRegularExpression &ruleHeader()
{
    static const QRegularExpression re(
        QStringLiteral("^\\s*((private|global)\\s+)*rule\\s+([A-Za-z_][A-Za-z0-9_]*)"));
    return re;
}

bool isRuleHeader(const QByteArray &line)
{
    return line.contains("rule") && ruleHeader().match(QString::fromUtf8(line)).hasMatch();
}

/// yaramod's messages: "Error at 12.5-9: Syntax error: ..." (a file name before the line when it has one).
const QRegularExpression &errorLocation()
{
    static const QRegularExpression re(QStringLiteral("^Error at (?:.*:)?(\\d+)\\.(\\d+)(-\\d+)?: (.*)$"),
                                       QRegularExpression::DotMatchesEverythingOption);
    return re;
}

const QRegularExpression &importLine()
{
    static const QRegularExpression re(QStringLiteral("^\\s*import\\s+\"[^\"]*\"\\s*(//.*)?$"));
    return re;
}

/// Rules per piece that yaramod parses alone (see YaraLoader::load()).
constexpr int kRulesPerPiece = 16;

/**
 * The lines at which a rule starts outside any rule, comment, string or regex: where the text may be cut; and
 * in `closed`, whether each line ends outside braces and comments. A lexer of YARA's tokens only as far as
 * these need: a cut it misses only makes a piece larger.
 */
std::vector<int> topLevelRuleStarts(const QList<QByteArray> &lines, std::vector<uint8_t> *closed = nullptr)
{
    std::vector<int> starts;
    if (closed)
        closed->assign(size_t(lines.size()), 0);
    bool inComment = false;
    int depth = 0;
    for (int n = 0; n < int(lines.size()); ++n) {
        const QByteArray &l = lines[n];
        if (!inComment && depth == 0 && isRuleHeader(l))
            starts.push_back(n);
        // What came before a '/': after '=' or `matches` it opens a regex, else it divides.
        bool regexMayStart = false;
        for (qsizetype i = 0; i < l.size(); ++i) {
            const char c = l[i];
            if (inComment) {
                if (c == '*' && i + 1 < l.size() && l[i + 1] == '/') {
                    inComment = false;
                    ++i;
                }
                continue;
            }
            if (c == '/' && i + 1 < l.size() && l[i + 1] == '/')
                break;
            if (c == '/' && i + 1 < l.size() && l[i + 1] == '*') {
                inComment = true;
                ++i;
                continue;
            }
            if (c == '"' || (c == '/' && regexMayStart)) {
                // Strings and regexes end on their line (YARA has no multi-line ones).
                for (++i; i < l.size() && l[i] != c; ++i)
                    if (l[i] == '\\')
                        ++i;
                regexMayStart = false;
                continue;
            }
            if (c == '{')
                ++depth;
            else if (c == '}')
                depth = std::max(0, depth - 1);
            if (c == '=')
                regexMayStart = true;
            else if (c == 's' && i >= 6 && l.mid(i - 6, 7) == "matches")
                regexMayStart = true;
            else if (c != ' ' && c != '\t')
                regexMayStart = false;
        }
        if (closed)
            (*closed)[size_t(n)] = !inComment && depth == 0;
    }
    return starts;
}

/**
 * One past the last line of the rule whose header is line `header`: where its braces close, not the next header,
 * since a comment after it may hold rules (commented out) whose comment's opening line must stay. A rule whose
 * braces never close ends at the next header.
 */
int ruleEnd(const QList<QByteArray> &lines, int header)
{
    std::vector<uint8_t> closed;
    topLevelRuleStarts(lines, &closed);
    const int count = int(lines.size());
    int end = header;
    if (!(closed[size_t(header)] && lines[header].contains('{'))) {
        // Up to its opening brace (a header may end before it), then to where that closes.
        while (end < count && closed[size_t(end)])
            ++end;
        while (end < count && !closed[size_t(end)])
            ++end;
    }
    if (end < count)
        return end + 1;
    for (end = header + 1; end < count && !isRuleHeader(lines[end]);)
        ++end;
    return end;
}

} // namespace

/// The text yaramod parses, includes expanded, and where each of its lines came from.
struct YaraLoader::Source
{
    QList<QByteArray> lines; ///< without their '\n'
    std::vector<std::pair<QString, int>> origin; ///< file and 1-based line of each line
};

YaraLoader::YaraLoader(RuleSet &into)
    : m_set(into)
{
}

YaraLoader::~YaraLoader() = default;

void YaraLoader::reject(const QString &file, int line, const QString &rule, const QString &reason)
{
    m_set.rejections.push_back({ file, line, rule, reason });
}

bool YaraLoader::expand(const QString &path, int depth, QStringList &stack, Source &source, const QString &fromFile,
                        int fromLine)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (fromFile.isEmpty())
            reject(path, 0, {}, QStringLiteral("cannot read: %1").arg(file.errorString()));
        else
            reject(fromFile, fromLine, {}, QStringLiteral("cannot include %1: %2").arg(path, file.errorString()));
        return false;
    }
    const QByteArray data = file.readAll();
    const QString canonical = QFileInfo(path).canonicalFilePath();
    stack.push_back(canonical);
    const QDir dir = QFileInfo(path).absoluteDir();
    const QList<QByteArray> lines = data.split('\n');
    for (qsizetype i = 0; i < lines.size(); ++i) {
        QByteArray line = lines[i];
        if (line.endsWith('\r'))
            line.chop(1);
        const int lineNo = int(i) + 1;
        if (line.contains("include")) {
            const auto m = includeLine().match(QString::fromUtf8(line));
            if (m.hasMatch()) {
                const QString target = dir.filePath(m.captured(1));
                const QString targetCanonical = QFileInfo(target).canonicalFilePath();
                if (depth + 1 > kMaxIncludeDepth)
                    reject(path, lineNo, {}, QStringLiteral("includes nested deeper than %1").arg(kMaxIncludeDepth));
                else if (!targetCanonical.isEmpty() && stack.contains(targetCanonical))
                    reject(path, lineNo, {}, QStringLiteral("include cycle through %1").arg(m.captured(1)));
                else
                    expand(target, depth + 1, stack, source, path, lineNo);
                // The include line itself stays, blank, so that line counts keep matching.
                source.lines.push_back({});
                source.origin.emplace_back(path, lineNo);
                continue;
            }
        }
        source.lines.push_back(line);
        source.origin.emplace_back(path, lineNo);
    }
    stack.pop_back();
    return true;
}

void YaraLoader::load(const QString &path)
{
    Source source;
    QStringList stack;
    if (!expand(path, 0, stack, source, {}, 0))
        return;

    // yaramod parses a whole text and stops at its first error, and a rule is rejected by parsing again without
    // it: over a whole collection that is quadratic (signature-base's hundreds of rejections took more than ten
    // minutes). So the text is cut between rules into pieces of kRulesPerPiece, each parsed alone after the
    // file's imports and a stub of each accepted rule it names (yaramod refuses a name it has not seen).
    std::vector<int> imports;
    for (int i = 0; i < int(source.lines.size()); ++i)
        if (source.lines[i].contains("import") && importLine().match(QString::fromUtf8(source.lines[i])).hasMatch())
            imports.push_back(i);
    std::vector<uint8_t> importRejected(imports.size(), 0);
    const std::vector<int> starts = topLevelRuleStarts(source.lines);
    std::vector<int> cuts { 0 };
    for (size_t k = kRulesPerPiece; k < starts.size(); k += kRulesPerPiece)
        cuts.push_back(starts[k]);
    cuts.push_back(int(source.lines.size()));
    static const QRegularExpression identifier(QStringLiteral("[A-Za-z_][A-Za-z0-9_]*"));
    bool anyParsed = false;
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
        Source piece;
        std::vector<int> pieceImports;
        for (size_t k = 0; k < imports.size(); ++k) {
            if (importRejected[k])
                continue;
            piece.lines.push_back(source.lines[imports[k]]);
            piece.origin.push_back(source.origin[size_t(imports[k])]);
            pieceImports.push_back(int(k));
        }
        std::set<std::string> named;
        for (int i = cuts[c]; i < cuts[c + 1]; ++i) {
            const QString line = QString::fromUtf8(source.lines[i]);
            for (auto it = identifier.globalMatch(line); it.hasNext();) {
                const std::string word = it.next().captured().toStdString();
                if (m_ruleByName.count(word))
                    named.insert(word);
            }
        }
        for (const std::string &name : named) {
            piece.lines.push_back(QByteArray("rule ") + name.c_str() + " { condition: true }");
            piece.origin.emplace_back(path, 0);
        }
        const int prefix = int(piece.lines.size());
        for (int i = cuts[c]; i < cuts[c + 1]; ++i) {
            const bool isImport = std::binary_search(imports.begin(), imports.end(), i);
            piece.lines.push_back(isImport ? QByteArray() : source.lines[i]);
            piece.origin.push_back(source.origin[size_t(i)]);
        }
        std::vector<int> rejectedPrefixLines;
        const std::unique_ptr<yaramod::YaraFile> parsed = parse(piece, prefix, rejectedPrefixLines);
        // An import yaramod refuses is rejected once, not once a piece.
        for (int line : rejectedPrefixLines)
            if (line < int(pieceImports.size()))
                importRejected[size_t(pieceImports[size_t(line)])] = 1;
        if (!parsed)
            continue;
        anyParsed = true;
        addRules(*parsed, piece, prefix, path);
    }
    if (!anyParsed)
        reject(path, 0, {}, QStringLiteral("no rule could be parsed"));
}

std::unique_ptr<yaramod::YaraFile> YaraLoader::parse(Source &source, int prefix, std::vector<int> &rejectedPrefixLines)
{
    // yaramod stops at the first error: blank the rule it is in (or the line, outside rules) and parse
    // again, so one bad rule costs only itself.
    std::unique_ptr<yaramod::YaraFile> parsed;
    const int maxAttempts = int(source.lines.size()) + 2;
    for (int attempt = 0; attempt < maxAttempts && !parsed; ++attempt) {
        std::string text;
        for (const QByteArray &l : source.lines) {
            text.append(l.constData(), size_t(l.size()));
            text += '\n';
        }
        std::istringstream in(text);
        QString message;
        int errorLine = 0;
        int errorColumn = 0;
        try {
            // Building yaramod's parser costs more than parsing a piece: one for the loader.
            if (!m_yaramod)
                m_yaramod = std::make_unique<yaramod::Yaramod>();
            parsed = m_yaramod->parseStream(in);
            if (!parsed)
                message = QStringLiteral("yaramod could not parse the file");
        } catch (const std::exception &e) {
            message = QString::fromUtf8(e.what()).trimmed();
            const auto m = errorLocation().match(message);
            if (m.hasMatch()) {
                errorLine = m.captured(1).toInt();
                errorColumn = m.captured(2).toInt();
                message = m.captured(4).trimmed();
            }
        }
        if (parsed)
            break;
        if (errorLine > 0 && errorLine <= int(source.lines.size()) && errorColumn > 0) {
            // yaramod 3.6 does not know YARA 4's base64 modifiers: say so rather than "unexpected identifier".
            const QByteArray word = source.lines[errorLine - 1].mid(errorColumn - 1, 10);
            if (word.startsWith("base64"))
                message = QStringLiteral("the base64 and base64wide modifiers are not supported (yaramod 3.6 cannot "
                                         "parse them)");
        }
        if (errorLine <= 0 || errorLine > int(source.lines.size())) {
            // Nowhere to point at (an error at the end of the text, say): the last rule is the culprit.
            errorLine = int(source.lines.size());
            while (errorLine > 1 && source.lines[errorLine - 1].trimmed().isEmpty())
                --errorLine;
            errorColumn = 0;
        }
        // The rule holding the error: the nearest header at or above it. An error at the first token of a
        // header is most often the previous rule's unfinished text.
        auto headerAtOrAbove = [&](int line) {
            for (int i = line; i >= prefix; --i)
                if (isRuleHeader(source.lines[i]))
                    return i;
            return -1;
        };
        int header = headerAtOrAbove(errorLine - 1);
        if (header == errorLine - 1 && header > 0) {
            const QByteArray &l = source.lines[header];
            int firstColumn = 1;
            while (firstColumn <= l.size() && (l[firstColumn - 1] == ' ' || l[firstColumn - 1] == '\t'))
                ++firstColumn;
            const int previous = headerAtOrAbove(header - 1);
            if (errorColumn <= firstColumn && previous >= 0)
                header = previous;
        }
        const QString ruleName = header >= 0 ? ruleHeader().match(QString::fromUtf8(source.lines[header])).captured(3)
                                             : QString();
        const auto &[errFile, errLine] = source.origin[size_t(errorLine - 1)];
        if (header < 0) {
            reject(errFile, errLine, {}, message);
            source.lines[errorLine - 1].clear();
            if (errorLine - 1 < prefix)
                rejectedPrefixLines.push_back(errorLine - 1);
            continue;
        }
        const int end = ruleEnd(source.lines, header);
        const auto &[ruleFile, ruleLine] = source.origin[size_t(header)];
        const QString where = errFile == ruleFile ? QStringLiteral("line %1").arg(errLine)
                                                  : QStringLiteral("%1:%2").arg(errFile).arg(errLine);
        reject(ruleFile, ruleLine, ruleName, QStringLiteral("%1: %2").arg(where, message));
        for (int i = header; i < end; ++i)
            source.lines[i].clear();
    }
    return parsed;
}

void YaraLoader::addRules(const yaramod::YaraFile &parsed, const Source &source, int prefix, const QString &path)
{
    const auto ruleIndex = [this](const std::string &name) {
        const auto it = m_ruleByName.find(name);
        return it == m_ruleByName.end() ? -1 : it->second;
    };
    for (const auto &rule : parsed.getRules()) {
        const int lineIndex = int(rule->getLocation().lineNumber) - 1;
        if (lineIndex < prefix)
            continue; // a stub
        const auto origin = lineIndex >= 0 && lineIndex < int(source.origin.size()) ? source.origin[size_t(lineIndex)]
                                                                                     : std::make_pair(path, 0);
        const QString name = QString::fromStdString(rule->getName());
        if (m_ruleByName.count(rule->getName())) {
            reject(origin.first, origin.second, name, QStringLiteral("duplicated rule identifier"));
            continue;
        }
        Rule out;
        out.name = name;
        out.sourceFile = origin.first;
        out.line = origin.second;
        out.ns = QStringLiteral("default");
        out.isPrivate = rule->isPrivate();
        out.isGlobal = rule->isGlobal();
        for (const std::string &tag : rule->getTags())
            out.tags.push_back(QString::fromStdString(tag));

        std::vector<Pattern> patterns;
        QString error;
        for (const yaramod::String *s : rule->getStrings()) {
            YaraStringCompiler::Result r = YaraStringCompiler::compile(*s);
            if (!r.error.isEmpty()) {
                error = QStringLiteral("string %1: %2").arg(QString::fromStdString(s->getIdentifier()), r.error);
                break;
            }
            Pattern p;
            p.id = QString::fromStdString(s->getIdentifier());
            p.source = QByteArray::fromStdString(s->getText());
            p.regex = std::move(r.dfa);
            p.isPrivate = s->isPrivate();
            p.yara = std::move(r.yara);
            patterns.push_back(std::move(p));
        }
        std::vector<YaraConditionCompiler::StringUse> uses;
        if (error.isEmpty()) {
            out.condition = YaraConditionCompiler::compile(*rule, ruleIndex, &error, &uses);
            if (!out.condition && error.isEmpty())
                error = QStringLiteral("the condition cannot be evaluated");
        }
        // A string only used as `$a at C` is searched at C alone by YARA: its other matches are not listed.
        for (size_t i = 0; error.isEmpty() && i < uses.size() && i < patterns.size(); ++i)
            if (uses[i].fixedOffset)
                std::const_pointer_cast<YaraString>(patterns[i].yara)->fixedOffset = *uses[i].fixedOffset;
        if (!error.isEmpty()) {
            reject(origin.first, origin.second, name, error);
            continue;
        }
        const int index = int(m_set.rules.size());
        for (Pattern &p : patterns) {
            p.ruleIndex = index;
            out.patterns.push_back(int(m_set.patterns.size()));
            m_set.patterns.push_back(std::move(p));
        }
        m_set.rules.push_back(std::move(out));
        m_ruleByName[rule->getName()] = index;
    }
}

} // namespace Hitscope
