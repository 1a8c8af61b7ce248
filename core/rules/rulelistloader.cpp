// SPDX-License-Identifier: GPL-3.0-or-later
#include "rulelistloader.h"

#include <QFile>
#include <QFileInfo>
#include <QHash>

#include "pattern/regexparser.h"

namespace Hitscope {

namespace {

int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/// One hex byte written as two characters, each a hex digit or `?`.
bool hexByteSet(char high, char low, ByteSet *set)
{
    const int h = hexValue(high);
    const int l = hexValue(low);
    if ((h < 0 && high != '?') || (l < 0 && low != '?'))
        return false;
    for (int b = 0; b < 256; ++b) {
        if ((h < 0 || (b >> 4) == h) && (l < 0 || (b & 0xf) == l))
            set->set(size_t(b));
    }
    return true;
}

/// Parses the part of `line` after the `hex:` prefix at `start`; columns in errors count from 1.
Regex parseHex(const QByteArray &line, int start, QString *error)
{
    Regex regex;
    std::vector<int> sequence;
    const auto isSpace = [](char c) { return c == ' ' || c == '\t'; };
    for (int i = start; i < line.size(); ++i) {
        if (isSpace(line[i]))
            continue;
        const int column = i + 1;
        if (i + 1 >= line.size() || isSpace(line[i + 1])) {
            *error = QLatin1String("hex: incomplete byte at column ") + QString::number(column)
                + QLatin1String(" (write two hex digits or ?? per byte)");
            return {};
        }
        ByteSet set;
        if (!hexByteSet(line[i], line[i + 1], &set)) {
            *error = QLatin1String("hex: invalid byte \"") + QString::fromUtf8(line.mid(i, 2))
                + QLatin1String("\" at column ") + QString::number(column)
                + QLatin1String(" (hex digits, ?? and nibble wildcards like 4? only)");
            return {};
        }
        sequence.push_back(regex.addBytes(set));
        ++i;
    }
    if (sequence.empty()) {
        *error = QStringLiteral("hex: no bytes");
        return {};
    }
    regex.root = regex.addConcat(std::move(sequence));
    return regex;
}

/// Calls `f(lineNumber, line)` for each line, without the newline and without the `\r` of a CRLF file.
template <typename F> void forEachLine(const QByteArray &data, F f)
{
    qsizetype start = 0;
    // Editors on Windows put a byte order mark up front; it is not part of the first rule.
    if (data.startsWith("\xEF\xBB\xBF"))
        start = 3;
    int number = 0;
    while (start < data.size()) {
        qsizetype end = data.indexOf('\n', start);
        if (end < 0)
            end = data.size();
        qsizetype length = end - start;
        if (length > 0 && data[end - 1] == '\r')
            --length;
        f(++number, data.mid(start, length));
        start = end + 1;
    }
}

void addRule(RuleSet &set, const QString &name, const QString &file, int line, const QByteArray &source, Regex regex)
{
    Pattern pattern;
    pattern.id = QStringLiteral("$");
    pattern.source = source;
    pattern.regex = std::move(regex);
    pattern.ruleIndex = int(set.rules.size());

    Rule rule;
    rule.name = name;
    rule.sourceFile = file;
    rule.line = line;
    rule.patterns = { int(set.patterns.size()) };

    set.patterns.push_back(std::move(pattern));
    set.rules.push_back(std::move(rule));
}

void reject(RuleSet &set, const QString &file, int line, const QString &rule, const QString &reason)
{
    set.rejections.push_back(Rejection { file, line, rule, reason });
}

RuleSet loadLiterals(const QString &path, const QByteArray &data)
{
    QFileInfo info(path);
    QString stem = info.completeBaseName();
    if (stem.isEmpty())
        stem = info.fileName();
    const QByteArray hexPrefix("hex:");

    RuleSet set;
    forEachLine(data, [&](int number, const QByteArray &line) {
        if (line.isEmpty() || line.startsWith('#'))
            return;
        const QString name = stem + QLatin1Char(':') + QString::number(number);
        if (!line.startsWith(hexPrefix)) {
            addRule(set, name, path, number, line, Regex::fromLiteral(line.constData(), int(line.size())));
            return;
        }
        QString error;
        Regex regex = parseHex(line, int(hexPrefix.size()), &error);
        if (regex.isValid())
            addRule(set, name, path, number, line, std::move(regex));
        else
            reject(set, path, number, name, error);
    });
    return set;
}

RuleSet loadRegexes(const QString &path, const QByteArray &data)
{
    RuleSet set;
    QHash<QString, int> firstLine;
    forEachLine(data, [&](int number, const QByteArray &line) {
        if (line.isEmpty() || line.startsWith('#'))
            return;
        const qsizetype tab1 = line.indexOf('\t');
        const qsizetype tab2 = tab1 < 0 ? -1 : line.indexOf('\t', tab1 + 1);
        if (tab2 < 0) {
            reject(set, path, number, {}, QStringLiteral("expected flags<TAB>name<TAB>regex"));
            return;
        }
        const QByteArray flagText = line.left(tab1);
        const QString name = QString::fromUtf8(line.mid(tab1 + 1, tab2 - tab1 - 1));
        // Everything after the second tab is the regex, so a literal tab inside it survives.
        const QByteArray source = line.mid(tab2 + 1);

        if (name.isEmpty()) {
            reject(set, path, number, {}, QStringLiteral("empty rule name"));
            return;
        }
        // Names count from their first line even when that line is rejected: duplicates are a property of
        // the file, and fixing the first line must not reveal a second error.
        if (const auto it = firstLine.constFind(name); it != firstLine.cend()) {
            reject(set, path, number, name,
                   QLatin1String("duplicate rule name (first on line ") + QString::number(*it) + QLatin1Char(')'));
            return;
        }
        firstLine.insert(name, number);

        RegexFlags flags;
        if (flagText.isEmpty()) {
            reject(set, path, number, name, QStringLiteral("missing flags (write - for none)"));
            return;
        }
        if (flagText != "-") {
            for (char c : flagText) {
                if (c == 'i') {
                    flags.caseless = true;
                } else if (c == 's') {
                    flags.dotAll = true;
                } else {
                    reject(set, path, number, name,
                           QLatin1String("unknown flag \"") + QString::fromUtf8(&c, 1)
                               + QLatin1String("\" (flags are -, or i and s)"));
                    return;
                }
            }
        }
        if (source.isEmpty()) {
            reject(set, path, number, name, QStringLiteral("empty regex"));
            return;
        }
        RegexParser::Result parsed = RegexParser::parse(source, flags);
        if (!parsed.error.isEmpty()) {
            reject(set, path, number, name, QLatin1String("invalid regex: ") + parsed.error);
            return;
        }
        addRule(set, name, path, number, source, std::move(parsed.regex));
    });
    return set;
}

} // namespace

RuleSet RuleListLoader::load(const QString &path, Format format)
{
    QFile file(path);
    QByteArray data;
    QString failure;
    if (!file.open(QIODevice::ReadOnly)) {
        failure = QLatin1String("cannot open: ") + file.errorString();
    } else {
        data = file.readAll();
        if (file.error() != QFileDevice::NoError)
            failure = QLatin1String("cannot read: ") + file.errorString();
    }
    if (!failure.isEmpty()) {
        RuleSet set;
        reject(set, path, 0, {}, failure);
        return set;
    }
    return loadFromData(path, data, format);
}

RuleSet RuleListLoader::loadFromData(const QString &path, const QByteArray &data, Format format)
{
    if (format == Format::Auto)
        format = path.endsWith(QLatin1String(".tsv"), Qt::CaseInsensitive) ? Format::Regexes : Format::Literals;
    return format == Format::Regexes ? loadRegexes(path, data) : loadLiterals(path, data);
}

} // namespace Hitscope
