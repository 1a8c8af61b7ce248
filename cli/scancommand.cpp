// SPDX-License-Identifier: GPL-3.0-or-later
#include "scancommand.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QFile>
#include <QJsonDocument>

#include "automata/patterncatalog.h"
#include "cpu/cpuengine.h"
#include "fileprinter.h"
#include "gpusupport.h"
#include "outputbuffer.h"
#include "profileprinter.h"
#include "report/recordwriter.h"
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

// The rules compiled on a thread of their own while the GPU device is created here (the device belongs to the
// thread that creates it): each takes a few hundred milliseconds on large rule sets and devices.
struct Setup
{
    RuleSetup rules;
    std::unique_ptr<Engine> gpu;
    QString gpuNotice, gpuError;
};

void setUp(const CliArgs &args, Setup &setup)
{
    std::thread compiler([&] {
        nameThisThread("hs-compile");
        RuleSetup::Options options;
        options.files = args.rules;
        for (const auto &[name, value] : args.defines)
            options.externals[name] = YaraExternal::fromDefinition(value);
        options.compile.threads = args.params.threads;
        options.fullDfas = args.fullDfas;
        setup.rules = RuleSetup::run(options);
    });
    if (args.engine != Hitscope::EngineChoice::Cpu) {
        QString loadError;
        if (GpuSupport *support = GpuSupport::load(&loadError))
            setup.gpu = support->chooseEngine(args, &setup.gpuNotice, &setup.gpuError);
        else if (args.engine == Hitscope::EngineChoice::Gpu)
            setup.gpuError = loadError;
        else
            setup.gpuNotice = QStringLiteral("no GPU engine (%1); using the CPU engine").arg(loadError);
    }
    compiler.join();
}

// The rejected rules and the rules' notes; an exit code when there is nothing to scan with.
std::optional<int> reportRules(const CliArgs &args, const RuleSetup &setup, OutputBuffer &out)
{
    for (const Rejection &r : setup.rejections) {
        if (args.json)
            RecordWriter::rejection(out.buf(), r.file, r.line, r.rule, r.reason);
        if (!args.quietProblems)
            warnOnStderr(QStringLiteral("rule rejected: ") + r.toString());
    }
    if (!args.quietProblems)
        for (const QString &note : setup.rules.notes)
            warnOnStderr(note);
    // A file of comments only is no error to yara either: nothing to look for, nothing found.
    if (setup.empty()) {
        out.flush();
        if (!args.quietProblems)
            warnOnStderr(QStringLiteral("no rules in %1").arg(args.rules.join(QLatin1String(", "))));
        return 0;
    }
    if (!setup.usable()) {
        out.flush();
        warnOnStderr(QStringLiteral("no usable rule in %1").arg(args.rules.join(QLatin1String(", "))));
        return 1;
    }
    return std::nullopt;
}

LaunchParams launchParams(const CliArgs &args, const Engine &engine)
{
    LaunchParams params = args.params;
    if (!args.batchBytesSet)
        params.batchBytes = engine.preferredBatchBytes();
    if (!args.segmentBytesSet)
        params.segmentBytes = engine.preferredSegmentBytes();
    params.rampBatches = !args.fixedBatches;
    return params;
}

// yara -c prints a bare count when it scans one file, "PATH: N" per file of a folder.
bool scansOneFile(const CliArgs &args)
{
    struct stat pathStat;
    return args.paths.size() == 1 && ::stat(args.paths.front().constData(), &pathStat) == 0
        && S_ISREG(pathStat.st_mode);
}

// --profile's table on stderr, after everything on stdout.
void printProfile(const CliArgs &args, const RuleProfile &profile)
{
    for (const QString &note : ProfilePrinter::notes(profile, args.profileTop))
        warnOnStderr(note);
    const std::string table = ProfilePrinter::table(profile, args.profileTop);
    std::fwrite(table.data(), 1, table.size(), stderr);
}

} // namespace

int runScanCommand(const CliArgs &args)
{
    // The walk starts before the rules are compiled: listing the folders (a stat per file) is a fifth of a cached
    // scan's work on 2 cores, and the compile leaves a core idle most of its time.
    auto walked = std::make_unique<WalkAhead>(args.paths, Scanner::walkOptions(args.walk, args.params.threads),
                                              nullptr);
    Setup setup;
    setUp(args, setup);
    OutputBuffer out;
    if (args.json && args.sharded)
        RecordWriter::shard(out.buf(), args.walk.shardIndex + 1, args.walk.shardCount, args.paths, args.rules);
    if (const std::optional<int> exit = reportRules(args, setup.rules, out))
        return *exit;
    QFile telemetry;
    if (!args.telemetryFile.isEmpty()) {
        telemetry.setFileName(args.telemetryFile);
        if (!telemetry.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            warnOnStderr(QStringLiteral("cannot write telemetry to %1: %2")
                             .arg(args.telemetryFile, telemetry.errorString()));
            return 1;
        }
    }
    if (!setup.gpuError.isEmpty()) {
        warnOnStderr(QStringLiteral("no GPU engine: ") + setup.gpuError);
        return 1;
    }
    if (!setup.gpuNotice.isEmpty())
        warnOnStderr(setup.gpuNotice);
    CpuEngine cpu;
    Engine &engine = setup.gpu ? *setup.gpu : static_cast<Engine &>(cpu);
    Scanner scanner(setup.rules.rules, setup.rules.catalog, engine);
    // Rule names and counts need no match offsets: strings only counted by their conditions are counted.
    scanner.setListHits(args.json || (args.printStrings && !args.countOnly));
    scanner.setProfiling(args.profile);
    g_scanner = &scanner;
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);

    FilePrinter printer(args, setup.rules.rules, out, scansOneFile(args));
    Scanner::Callbacks cb;
    cb.fileDone = [&](const FileResult &file) { printer.print(file); };
    int problems = 0;
    cb.problem = [&](const FileProblem &p) {
        ++problems;
        if (args.json)
            RecordWriter::problem(out.buf(), p.path, p.reason);
        if (!args.quietProblems)
            warnOnStderr(QStringLiteral("skipped: ") + p.toString());
    };
    cb.notice = [&](const QString &n) {
        if (!args.quietProblems)
            warnOnStderr(n);
    };
    cb.batchDone = [&](const BatchTelemetry &t) {
        if (telemetry.isOpen())
            telemetry.write(QJsonDocument(t.toJson()).toJson(QJsonDocument::Compact) + '\n');
    };
    const ScanSummary summary = scanner.run(args.paths, args.walk, launchParams(args, engine), cb, std::move(walked));
    g_scanner = nullptr;

    const size_t rejections = setup.rules.rejections.size();
    const int exitCode = !summary.error.isEmpty()                                    ? 1
        : (problems > 0 || rejections > 0 || summary.cancelled) ? 2
                                                                                     : 0;
    if (args.json && args.profile)
        for (const RuleProfileRow &row : scanner.profile().rows)
            RecordWriter::profile(out.buf(), row);
    if (args.json)
        RecordWriter::summary(out.buf(), { int64_t(summary.files), summary.bytes, summary.hits, problems,
                                            int64_t(rejections), summary.batches, summary.wallMs, summary.cancelled,
                                            engine.name(), exitCode });
    out.flush();
    if (args.profile)
        printProfile(args, scanner.profile());
    if (!summary.error.isEmpty())
        warnOnStderr(QStringLiteral("scan failed: ") + summary.error);
    if (summary.cancelled)
        warnOnStderr(QStringLiteral("scan stopped."));
    if (out.failed()) {
        warnOnStderr(QStringLiteral("cannot write the output: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
        return 1;
    }
    return exitCode;
}
