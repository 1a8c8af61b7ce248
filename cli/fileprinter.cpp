// SPDX-License-Identifier: GPL-3.0-or-later
#include "fileprinter.h"

#include <string>

#include "cliargs.h"
#include "outputbuffer.h"
#include "report/previewreader.h"
#include "report/recordwriter.h"
#include "rules/ruleset.h"
#include "scan/ruleevaluator.h"

using namespace Hitscope;

// The bytes of a file's matches, read when the first one is printed.
class FilePrinter::Previews
{
public:
    explicit Previews(const QByteArray &path)
        : m_path(path)
    {
    }
    QByteArray of(const Hit &h)
    {
        if (!m_reader)
            m_reader = std::make_unique<PreviewReader>(m_path);
        return m_reader->read(h.offset, h.length, RecordWriter::kYaraDataBytes);
    }

private:
    const QByteArray &m_path;
    std::unique_ptr<PreviewReader> m_reader;
};

FilePrinter::FilePrinter(const CliArgs &args, const RuleSet &rules, OutputBuffer &out, bool oneFile)
    : m_args(args)
    , m_rules(rules)
    , m_out(out)
    , m_oneFile(oneFile)
{
}

template<typename F>
void FilePrinter::forRuleHits(const FileResult &file, int rule, F &&visit) const
{
    for (int pid : m_rules.rules[size_t(rule)].patterns)
        for (const Hit &h : file.hits)
            if (h.pattern == pid)
                visit(m_rules.patterns[size_t(pid)], h);
}

void FilePrinter::print(const FileResult &file)
{
    if (!m_args.quietProblems)
        warnCapped(file);
    Previews previews(file.path);
    if (m_args.json) {
        printJson(file, previews);
        return;
    }
    std::string &b = m_out.buf();
    // The console module's messages first, as yara prints them while it evaluates the conditions.
    for (const QByteArray &message : file.console)
        b += std::string(message.constData(), size_t(message.size())) + '\n';
    if (m_args.countOnly) {
        if (!m_oneFile)
            b += std::string(file.path.constData(), size_t(file.path.size())) + ": ";
        b += std::to_string(file.rules.size()) + "\n";
        m_out.maybeFlush();
        return;
    }
    printRules(file, previews);
    m_out.maybeFlush();
}

void FilePrinter::warnCapped(const FileResult &file) const
{
    for (int pid : file.capped)
        warnOnStderr(QStringLiteral("%1: string %2 of rule %3 has more than %4 matches; as yara, only the first %4 "
                                    "are listed and counted")
                         .arg(QString::fromLocal8Bit(file.path), m_rules.patterns[size_t(pid)].id,
                              m_rules.rules[size_t(m_rules.patterns[size_t(pid)].ruleIndex)].name)
                         .arg(RuleEvaluator::kMaxStringMatches));
}

void FilePrinter::printJson(const FileResult &file, Previews &previews)
{
    std::string &b = m_out.buf();
    for (const QByteArray &message : file.console)
        RecordWriter::console(b, file.path, message);
    for (const Hit &h : file.hits) {
        const Pattern &p = m_rules.patterns[size_t(h.pattern)];
        if (p.yara)
            continue;
        RecordWriter::hit(b, file.path, m_rules.rules[size_t(p.ruleIndex)].name, p.id, h.offset, h.length);
        m_out.maybeFlush();
    }
    for (int r : file.rules) {
        const Rule &rule = m_rules.rules[size_t(r)];
        if (!rule.isYara())
            continue;
        std::vector<RecordWriter::MatchString> strings;
        forRuleHits(file, r, [&](const Pattern &p, const Hit &h) {
            strings.push_back({ p.id, h.offset, h.length, previews.of(h) });
        });
        RecordWriter::match(b, file.path, rule.name, rule.ns, rule.tags, strings);
        m_out.maybeFlush();
    }
}

void FilePrinter::printRules(const FileResult &file, Previews &previews)
{
    std::string &b = m_out.buf();
    for (int r : file.rules) {
        const Rule &rule = m_rules.rules[size_t(r)];
        b += rule.name.toStdString() + ' ' + std::string(file.path.constData(), size_t(file.path.size())) + '\n';
        if (!m_args.printStrings)
            continue;
        if (rule.isYara()) {
            forRuleHits(file, r, [&](const Pattern &p, const Hit &h) {
                RecordWriter::yaraString(b, h.offset, p.id, previews.of(h), p.yara && p.yara->hex);
            });
        } else {
            printListStrings(file, r, previews);
        }
        m_out.maybeFlush();
    }
}

void FilePrinter::printListStrings(const FileResult &file, int rule, Previews &previews)
{
    std::string &b = m_out.buf();
    for (int pid : m_rules.rules[size_t(rule)].patterns) {
        const Pattern &p = m_rules.patterns[size_t(pid)];
        // Report-all gives one hit per match end; people read one line per start, the longest match (as yara
        // prints them). JSON keeps every hit.
        const Hit *last = nullptr;
        std::vector<const Hit *> lines;
        for (const Hit &h : file.hits) {
            if (h.pattern != pid)
                continue;
            if (last && last->offset == h.offset)
                lines.back() = &h;
            else
                lines.push_back(&h);
            last = &h;
        }
        for (const Hit *hp : lines)
            RecordWriter::yaraString(b, hp->offset, p.id, previews.of(*hp), p.yara && p.yara->hex);
    }
}
