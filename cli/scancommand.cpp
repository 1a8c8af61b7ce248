// SPDX-License-Identifier: GPL-3.0-or-later
#include "scancommand.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QFile>
#include <QJsonDocument>

#include "automata/patterncatalog.h"
#include "cpu/cpuengine.h"
#include "gpusupport.h"
#include "report/previewreader.h"
#include "report/recordwriter.h"
#include "scan/ruleevaluator.h"
#include "scan/scanner.h"
#include "session/rulesetup.h"
#include "util/threadname.h"

using namespace Hitscope;

namespace {

Scanner *g_scanner = nullptr;

void onSignal(int)
{
    if (g_scanner)
        g_scanner->cancel();
}

// Buffered stdout: a scan can print millions of lines.
class Out
{
public:
    ~Out() { flush(); }
    std::string &buf() { return m_buf; }
    void maybeFlush()
    {
        if (m_buf.size() > (1 << 16))
            flush();
    }
    void flush()
    {
        std::fwrite(m_buf.data(), 1, m_buf.size(), stdout);
        std::fflush(stdout);
        m_buf.clear();
    }

private:
    std::string m_buf;
};

void warn(const QString &msg)
{
    std::fprintf(stderr, "hitscope-cli: %s\n", msg.toLocal8Bit().constData());
}

} // namespace

int runScanCommand(const CliArgs &args)
{
    // Rules compile on a thread of their own while the GPU device is created here (the device belongs to
    // the thread that creates it): each takes a few hundred milliseconds on large rule sets and devices.
    RuleSetup setup;
    std::thread compiler([&] {
        nameThisThread("hs-compile");
        RuleSetup::Options options;
        options.files = args.rules;
        for (const auto &[name, value] : args.defines)
            options.externals[name] = YaraExternal::fromDefinition(value);
        options.compile.threads = args.params.threads;
        options.fullDfas = args.fullDfas;
        setup = RuleSetup::run(options);
    });
    // The walk starts now too: listing the folders (a stat per file) is a fifth of a cached scan's work on 2
    // cores, and the compile leaves a core idle most of its time.
    auto walked = std::make_unique<WalkAhead>(args.paths, Scanner::walkOptions(args.walk, args.params.threads),
                                              nullptr);
    std::unique_ptr<Engine> gpu;
    QString gpuNotice, gpuError;
    if (args.engine != Hitscope::EngineChoice::Cpu) {
        QString loadError;
        if (GpuSupport *support = GpuSupport::load(&loadError))
            gpu = support->chooseEngine(args, &gpuNotice, &gpuError);
        else if (args.engine == Hitscope::EngineChoice::Gpu)
            gpuError = loadError;
        else
            gpuNotice = QStringLiteral("no GPU engine (%1); using the CPU engine").arg(loadError);
    }
    compiler.join();
    const RuleSet &rules = setup.rules;
    const PatternCatalog &catalog = setup.catalog;
    const std::vector<Rejection> &rejections = setup.rejections;

    Out out;
    auto emitRejection = [&](const Rejection &r) {
        if (args.json) {
            RecordWriter::rejection(out.buf(), r.file, r.line, r.rule, r.reason);
        }
        if (!args.quietProblems)
            warn(QStringLiteral("rule rejected: ") + r.toString());
    };
    for (const Rejection &r : rejections)
        emitRejection(r);
    if (!args.quietProblems)
        for (const QString &note : rules.notes)
            warn(note);
    // A file of comments only is no error to yara either: nothing to look for, nothing found.
    if (setup.empty()) {
        out.flush();
        if (!args.quietProblems)
            warn(QStringLiteral("no rules in %1").arg(args.rules.join(QLatin1String(", "))));
        return 0;
    }

    if (!setup.usable()) {
        out.flush();
        warn(QStringLiteral("no usable rule in %1").arg(args.rules.join(QLatin1String(", "))));
        return 1;
    }

    QFile telemetry;
    if (!args.telemetryFile.isEmpty()) {
        telemetry.setFileName(args.telemetryFile);
        if (!telemetry.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            warn(QStringLiteral("cannot write telemetry to %1: %2").arg(args.telemetryFile, telemetry.errorString()));
            return 1;
        }
    }

    CpuEngine cpu;
    if (!gpuError.isEmpty()) {
        warn(QStringLiteral("no GPU engine: ") + gpuError);
        return 1;
    }
    if (!gpuNotice.isEmpty())
        warn(gpuNotice);
    Engine &engine = gpu ? *gpu : static_cast<Engine &>(cpu);
    LaunchParams params = args.params;
    if (!args.batchBytesSet)
        params.batchBytes = engine.preferredBatchBytes();
    if (!args.segmentBytesSet)
        params.segmentBytes = engine.preferredSegmentBytes();
    params.rampBatches = !args.fixedBatches;
    Scanner scanner(rules, catalog, engine);
    // Rule names and counts need no match offsets: strings only counted by their conditions are counted.
    scanner.setListHits(args.json || (args.printStrings && !args.countOnly));
    g_scanner = &scanner;
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);

    // yara -c prints a bare count when it scans one file, "PATH: N" per file of a folder.
    struct stat pathStat;
    const bool oneFile = args.paths.size() == 1 && ::stat(args.paths.front().constData(), &pathStat) == 0
        && S_ISREG(pathStat.st_mode);
    Scanner::Callbacks cb;
    cb.fileDone = [&](const FileResult &fr) {
        std::string &b = out.buf();
        const QByteArray display = fr.path;
        if (!args.quietProblems)
            for (int pid : fr.capped)
                warn(QStringLiteral("%1: string %2 of rule %3 has more than %4 matches; as yara, only the first %4 "
                                    "are listed and counted")
                         .arg(QString::fromLocal8Bit(fr.path), rules.patterns[size_t(pid)].id,
                              rules.rules[size_t(rules.patterns[size_t(pid)].ruleIndex)].name)
                         .arg(RuleEvaluator::kMaxStringMatches));
        std::unique_ptr<PreviewReader> preview;
        auto matchData = [&](const Hit &h) {
            if (!preview)
                preview = std::make_unique<PreviewReader>(fr.path);
            return preview->read(h.offset, h.length, RecordWriter::kYaraDataBytes);
        };
        // A rule's hits grouped by string in declaration order, each ascending (yara's order).
        auto ruleHits = [&](int r, auto &&visit) {
            for (int pid : rules.rules[size_t(r)].patterns)
                for (const Hit &h : fr.hits)
                    if (h.pattern == pid)
                        visit(rules.patterns[size_t(pid)], h);
        };
        if (args.json) {
            for (const QByteArray &message : fr.console)
                RecordWriter::console(b, display, message);
            for (const Hit &h : fr.hits) {
                const Pattern &p = rules.patterns[size_t(h.pattern)];
                if (p.yara)
                    continue;
                RecordWriter::hit(b, display, rules.rules[size_t(p.ruleIndex)].name, p.id, h.offset, h.length);
                out.maybeFlush();
            }
            for (int r : fr.rules) {
                const Rule &rule = rules.rules[size_t(r)];
                if (!rule.isYara())
                    continue;
                std::vector<RecordWriter::MatchString> strings;
                ruleHits(r, [&](const Pattern &p, const Hit &h) {
                    strings.push_back({ p.id, h.offset, h.length, matchData(h) });
                });
                RecordWriter::match(b, display, rule.name, rule.ns, rule.tags, strings);
                out.maybeFlush();
            }
            return;
        }
        // The console module's messages first, as yara prints them while it evaluates the conditions.
        for (const QByteArray &message : fr.console)
            b += std::string(message.constData(), size_t(message.size())) + '\n';
        if (args.countOnly) {
            if (!oneFile)
                b += std::string(display.constData(), size_t(display.size())) + ": ";
            b += std::to_string(fr.rules.size()) + "\n";
            out.maybeFlush();
            return;
        }
        for (int r : fr.rules) {
            const Rule &rule = rules.rules[size_t(r)];
            b += rule.name.toStdString() + ' ' + std::string(display.constData(), size_t(display.size())) + '\n';
            if (!args.printStrings)
                continue;
            auto line = [&](const Pattern &p, const Hit &h) {
                RecordWriter::yaraString(b, h.offset, p.id, matchData(h), p.yara && p.yara->hex);
            };
            if (rule.isYara()) {
                ruleHits(r, line);
                out.maybeFlush();
                continue;
            }
            for (int pid : rule.patterns) {
                const Pattern &p = rules.patterns[size_t(pid)];
                // Report-all gives one hit per match end; people read one line per start, the longest
                // match (as yara prints them). JSON keeps every hit.
                const Hit *last = nullptr;
                std::vector<const Hit *> lines;
                for (const Hit &h : fr.hits) {
                    if (h.pattern != pid)
                        continue;
                    if (last && last->offset == h.offset)
                        lines.back() = &h;
                    else
                        lines.push_back(&h);
                    last = &h;
                }
                for (const Hit *hp : lines)
                    line(p, *hp);
            }
            out.maybeFlush();
        }
        out.maybeFlush();
    };
    int problems = 0;
    cb.problem = [&](const FileProblem &p) {
        ++problems;
        if (args.json) {
            RecordWriter::problem(out.buf(), p.path, p.reason);
        }
        if (!args.quietProblems)
            warn(QStringLiteral("skipped: ") + p.toString());
    };
    cb.notice = [&](const QString &n) {
        if (!args.quietProblems)
            warn(n);
    };
    cb.batchDone = [&](const BatchTelemetry &t) {
        if (telemetry.isOpen())
            telemetry.write(QJsonDocument(t.toJson()).toJson(QJsonDocument::Compact) + '\n');
    };

    const ScanSummary summary = scanner.run(args.paths, args.walk, params, cb, std::move(walked));
    g_scanner = nullptr;

    const int exitCode = !summary.error.isEmpty() ? 1 : (problems > 0 || !rejections.empty() || summary.cancelled) ? 2 : 0;
    if (args.json) {
        RecordWriter::summary(out.buf(), { int64_t(summary.files), summary.bytes, summary.hits, problems,
                                            int64_t(rejections.size()), summary.batches, summary.wallMs,
                                            summary.cancelled, engine.name(), exitCode });
    }
    out.flush();
    if (!summary.error.isEmpty())
        warn(QStringLiteral("scan failed: ") + summary.error);
    if (summary.cancelled)
        warn(QStringLiteral("scan stopped."));
    return exitCode;
}
