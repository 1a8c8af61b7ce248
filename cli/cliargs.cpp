// SPDX-License-Identifier: GPL-3.0-or-later
#include "cliargs.h"

#include <QFileInfo>

#include <algorithm>
#include <cstring>

#include "util/bytesize.h"

QString CliArgs::helpText()
{
    return QStringLiteral(
        "Usage: hitscope-cli scan [options] -r RULES PATH...\n"
        "       hitscope-cli scan [options] RULES PATH...\n"
        "       hitscope-cli merge FILE...\n"
        "       hitscope-cli devices [--backend B] [--validation]\n"
        "       hitscope-cli dump [--module M]... [--json] FILE...\n"
        "       hitscope-cli --help | --version\n"
        "\n"
        "Scans files and folders (recursively) against rule files and prints what matched.\n"
        "\n"
        "Rules:\n"
        "  -r, --rules FILE        rule file, repeatable: .txt literal list (one literal per line, byte for\n"
        "                          byte; '#' comment lines; 'hex: 4D 5A ?? 00' lines), .tsv regex list\n"
        "                          (flags<TAB>name<TAB>regex; flags '-', 'i' caseless, 's' dot-all),\n"
        "                          .yar/.yara YARA rules (other suffixes: YARA when the text declares rules).\n"
        "                          Without -r, the first PATH is the rule file, as yara takes it\n"
        "  -d, --define NAME=VALUE YARA external variable, repeatable: an integer, a float (with a dot),\n"
        "                          true/false, or else a string, as yara reads -d\n"
        "Output:\n"
        "  (default)               'RULE PATH' for each rule that matched a file, as yara prints it\n"
        "  -s, --print-strings     also each hit: '0xOFFSET:$id: data'\n"
        "  -c, --count             only 'PATH: N', the number of matching rules per file\n"
        "      --json              JSON lines: {\"type\":\"hit\",\"file\",\"rule\",\"string\",\"offset\",\"length\"}\n"
        "                          per hit, then \"problem\", \"rejection\" and one \"summary\" record\n"
        "      --telemetry FILE    one JSON line per batch (bytes, work items, hits, times, throughput)\n"
        "      --profile           after the scan, on stderr, what each rule cost, slowest first: rank, rule,\n"
        "                          file:line, engine ms (its strings on the engine; '-' on a GPU, whose\n"
        "                          kernels cannot be split per rule: measure with --engine cpu), condition\n"
        "                          ms, resolve ms (finding where its matches start), total ms (times are\n"
        "                          work summed over threads), hits (matches the engine reported), files\n"
        "                          (matched) and reasons (short atoms, a leading .*, long jumps, many forms,\n"
        "                          many matches); with --json also one {\"type\":\"profile\",\"rule\",\"file\",\n"
        "                          \"line\",\"engine_ms\",\"host_ms\",\"condition_ms\",\"resolve_ms\",\"total_ms\",\n"
        "                          \"hits\",\"files\",\"reasons\"} record per rule before the summary\n"
        "      --profile-top N     rules in the --profile table (default 20; 0: all; implies --profile)\n"
        "  -w, --no-warnings       do not print skipped files and rejected rules on stderr\n"
        "Files:\n"
        "      --include GLOB      scan only files whose name matches, repeatable\n"
        "      --exclude GLOB      skip files and folders whose name matches, repeatable\n"
        "      --max-file-size N   skip larger files (bytes; K, M, G suffixes)\n"
        "  -L, --follow-symlinks   follow symbolic links (loops are detected)\n"
        "      --shard K/N         scan only the K-th of N parts of the files (K from 1 to N), chosen by a\n"
        "                          stable hash of each path; with --json the output starts with a \"shard\"\n"
        "                          record, and `merge` joins the N outputs into one scan's records\n"
        "Engine and launch parameters:\n"
        "      --engine E          auto (default: a hardware GPU when one offers compute, else the CPU,\n"
        "                          with a notice), gpu (any device, Mesa's software Vulkan too) or cpu\n"
        "      --backend B         GPU backend: vulkan or opengl (default: Vulkan, then OpenGL)\n"
        "      --devices all|LIST  GPUs to scan on, each on a thread of its own, batches to whichever is free:\n"
        "                          all (default: every hardware GPU) or device numbers as `devices` lists\n"
        "                          them, such as 0,1 (a number twice: two device objects on that GPU)\n"
        "      --workgroup-size N  GPU invocations per workgroup: 32, 64, 128, 256 (default) or 512\n"
        "      --worker-groups N   GPU persistent workgroups (default 0: from the device and the queue)\n"
        "      --hit-capacity N    GPU hit ring entries (default 0: automatic; a full ring re-runs the batch)\n"
        "      --timeout MS        a GPU batch slower than this is re-run on the CPU (default 10000)\n"
        "      --validation        GPU: enable the Vulkan validation layer\n"
        "      --gpu-dfas          compile every string into DFA tables that the GPU walks over every byte\n"
        "                          (default: the GPU marks where the strings' atoms occur, the host checks\n"
        "                          there; compiles in time linear in the rules, where DFAs may take minutes)\n"
        "  -j, --threads N         threads for compiling rules, reading, the CPU engine, the GPU engine's\n"
        "                          host work and resolving hits (default: one per core)\n"
        "      --batch-bytes N     bytes per batch (default 256M on a GPU, 64M on Mesa's software Vulkan,\n"
        "                          8M on the CPU, 32M above 4 cores); the first batches and the last ones are\n"
        "                          smaller, so that the engine starts early and the scan does not end on one\n"
        "                          large batch\n"
        "      --fixed-batches     every batch of --batch-bytes, also the first and the last ones\n"
        "      --segment-bytes N   bytes per work item of bounded patterns (default 256K on the CPU,\n"
        "                          4K on a GPU, 15K on Mesa's software Vulkan)\n"
        "\n"
        "Merge (the --json outputs of the N parts of a sharded scan):\n"
        "  FILE...                 every part's output, in any order: the records of one scan of all the\n"
        "                          files, in the walk's order, problems and rejections once, profile records\n"
        "                          summed per rule, one summary summed (wall_ms: the longest part's); fails\n"
        "                          naming a missing or cut part\n"
        "\n"
        "Dump (module data, as yara -D prints it):\n"
        "  -m, --module M          pe, elf, math, hash, dotnet, time, console, magic, macho or dex,\n"
        "                          repeatable (default: all of them, in that order)\n"
        "      --json              one JSON line per file: {\"type\":\"modules\",\"file\",\"modules\":{...}}\n"
        "\n"
        "Exit status: 0 the scan finished; 1 bad arguments or no usable rule;\n"
        "             2 the scan finished but some files or rules were skipped (reported on stderr).\n");
}

// The command line, one argument at a time.
class CliArgReader
{
public:
    CliArgReader(int argc, char **argv)
        : m_argc(argc)
        , m_argv(argv)
    {
    }
    bool more() const { return m_i < m_argc; }
    void next() { ++m_i; }
    const char *current() const { return m_argv[m_i]; }
    /// The option's value: the next argument.
    QString value(const char *opt, const char **out)
    {
        if (m_i + 1 >= m_argc)
            return QStringLiteral("option %1 needs a value").arg(QLatin1String(opt));
        *out = m_argv[++m_i];
        return {};
    }
    QString sizeValue(const char *opt, int64_t *out)
    {
        const char *v = nullptr;
        QString err = value(opt, &v);
        if (!err.isEmpty())
            return err;
        if (!Hitscope::parseByteSize(v, out))
            return QStringLiteral("option %1: '%2' is not a size").arg(QLatin1String(opt), QString::fromLocal8Bit(v));
        return {};
    }
    QString numberValue(const char *opt, int *out)
    {
        int64_t n = 0;
        const QString err = sizeValue(opt, &n);
        *out = int(std::min<int64_t>(n, INT32_MAX));
        return err;
    }

private:
    int m_argc;
    char **m_argv;
    int m_i = 1;
};

namespace {
bool optionIs(const char *a, const char *shortName, const char *longName)
{
    return (shortName && std::strcmp(a, shortName) == 0) || (longName && std::strcmp(a, longName) == 0);
}
} // namespace

QString CliArgs::parse(int argc, char **argv)
{
    CliArgReader in(argc, argv);
    bool onlyPaths = false;
    for (; in.more(); in.next()) {
        const char *a = in.current();
        if (onlyPaths || a[0] != '-' || a[1] == 0) {
            if (command.isEmpty())
                command = QString::fromLocal8Bit(a);
            else
                paths.push_back(QByteArray(a));
            continue;
        }
        if (std::strcmp(a, "--") == 0) {
            onlyPaths = true;
            continue;
        }
        QString err;
        // Short options with the value attached, as in "-j4", "-rrules.txt" or "-dx=1".
        if ((a[1] == 'j' || a[1] == 'r' || a[1] == 'd') && a[2] != 0)
            err = parseAttached(a[1], a + 2);
        else if (!parseOutputOption(in, a, &err) && !parseScanOption(in, a, &err))
            err = QStringLiteral("unknown option '%1' (see --help)").arg(QString::fromLocal8Bit(a));
        if (!err.isEmpty())
            return err;
    }
    return check();
}

QString CliArgs::addDefine(const char *v)
{
    const char *eq = std::strchr(v, '=');
    if (!eq || eq == v)
        return QStringLiteral("-d needs NAME=VALUE, not '%1'").arg(QString::fromLocal8Bit(v));
    defines.emplace_back(QByteArray(v, int(eq - v)), QByteArray(eq + 1));
    return {};
}

QString CliArgs::setThreads(const char *option, const char *v)
{
    bool ok = false;
    params.threads = QByteArray(v).toInt(&ok);
    if (!ok || params.threads < 0)
        return QStringLiteral("%1 needs a number, not '%2'").arg(QLatin1String(option), QString::fromLocal8Bit(v));
    return {};
}

QString CliArgs::setShard(const char *v)
{
    const QList<QByteArray> parts = QByteArray(v).split('/');
    bool okK = false, okN = false;
    const int k = parts.size() == 2 ? parts[0].toInt(&okK) : 0;
    const int n = parts.size() == 2 ? parts[1].toInt(&okN) : 0;
    if (!okK || !okN || n < 1 || k < 1 || k > n)
        return QStringLiteral("--shard needs K/N with 1 <= K <= N, not '%1'").arg(QString::fromLocal8Bit(v));
    walk.shardIndex = k - 1;
    walk.shardCount = n;
    sharded = true;
    return {};
}

QString CliArgs::parseAttached(char option, const char *v)
{
    if (option == 'd')
        return addDefine(v);
    if (option == 'r') {
        rules.push_back(QString::fromLocal8Bit(v));
        return {};
    }
    return setThreads("-j", v);
}

// What to look for and how to print it.
bool CliArgs::parseOutputOption(CliArgReader &in, const char *a, QString *err)
{
    const char *v = nullptr;
    if (optionIs(a, "-h", "--help")) {
        help = true;
    } else if (optionIs(a, nullptr, "--version")) {
        version = true;
    } else if (optionIs(a, "-r", "--rules")) {
        *err = in.value(a, &v);
        if (v)
            rules.push_back(QString::fromLocal8Bit(v));
    } else if (optionIs(a, "-d", "--define")) {
        *err = in.value(a, &v);
        if (v)
            *err = addDefine(v);
    } else if (optionIs(a, "-s", "--print-strings")) {
        printStrings = true;
    } else if (optionIs(a, "-c", "--count")) {
        countOnly = true;
    } else if (optionIs(a, nullptr, "--json")) {
        json = true;
    } else if (optionIs(a, "-m", "--module")) {
        *err = in.value(a, &v);
        if (v)
            modules.push_back(QByteArray(v));
    } else if (optionIs(a, "-w", "--no-warnings")) {
        quietProblems = true;
    } else if (optionIs(a, nullptr, "--profile")) {
        profile = true;
    } else if (optionIs(a, nullptr, "--profile-top")) {
        *err = in.numberValue(a, &profileTop);
        profile = true;
    } else if (optionIs(a, nullptr, "--telemetry")) {
        *err = in.value(a, &v);
        if (v)
            telemetryFile = QString::fromLocal8Bit(v);
    } else {
        return false;
    }
    return true;
}

// What to scan, on which engine, with which launch parameters.
bool CliArgs::parseScanOption(CliArgReader &in, const char *a, QString *err)
{
    const char *v = nullptr;
    if (optionIs(a, nullptr, "--include")) {
        *err = in.value(a, &v);
        if (v)
            walk.include.push_back(QString::fromLocal8Bit(v));
    } else if (optionIs(a, nullptr, "--exclude")) {
        *err = in.value(a, &v);
        if (v)
            walk.exclude.push_back(QString::fromLocal8Bit(v));
    } else if (optionIs(a, nullptr, "--max-file-size")) {
        *err = in.sizeValue(a, &walk.maxFileSize);
    } else if (optionIs(a, "-L", "--follow-symlinks")) {
        walk.followSymlinks = true;
    } else if (optionIs(a, nullptr, "--shard")) {
        *err = in.value(a, &v);
        if (v)
            *err = setShard(v);
    } else if (optionIs(a, nullptr, "--gpu-dfas")) {
        fullDfas = true;
    } else if (optionIs(a, nullptr, "--engine")) {
        *err = in.value(a, &v);
        if (v && !Hitscope::parseEngineChoice(QString::fromLocal8Bit(v), &engine))
            *err = QStringLiteral("--engine must be cpu, gpu or auto, not '%1'").arg(QString::fromLocal8Bit(v));
    } else if (optionIs(a, "-j", "--threads")) {
        *err = in.value(a, &v);
        if (v)
            *err = setThreads("--threads", v);
    } else if (optionIs(a, nullptr, "--batch-bytes")) {
        *err = in.sizeValue(a, &params.batchBytes);
        batchBytesSet = true;
    } else if (optionIs(a, nullptr, "--fixed-batches")) {
        fixedBatches = true;
    } else if (optionIs(a, nullptr, "--segment-bytes")) {
        *err = in.sizeValue(a, &params.segmentBytes);
        segmentBytesSet = true;
    } else if (optionIs(a, nullptr, "--devices")) {
        *err = in.value(a, &v);
        QString why;
        if (v && !Hitscope::DeviceChoice::parse(QString::fromLocal8Bit(v), &devices, &why))
            *err = QStringLiteral("--devices: ") + why;
    } else if (optionIs(a, nullptr, "--backend")) {
        *err = in.value(a, &v);
        if (v) {
            backend = QString::fromLocal8Bit(v).toLower();
            if (backend != QLatin1String("vulkan") && backend != QLatin1String("opengl"))
                *err = QStringLiteral("--backend must be vulkan or opengl, not '%1'").arg(backend);
        }
    } else if (optionIs(a, nullptr, "--workgroup-size")) {
        *err = in.numberValue(a, &params.workgroupSize);
        const int n = params.workgroupSize;
        if (err->isEmpty() && n != 32 && n != 64 && n != 128 && n != 256 && n != 512)
            *err = QStringLiteral("--workgroup-size must be 32, 64, 128, 256 or 512");
    } else if (optionIs(a, nullptr, "--worker-groups")) {
        *err = in.numberValue(a, &params.workerGroups);
    } else if (optionIs(a, nullptr, "--hit-capacity")) {
        *err = in.sizeValue(a, &params.hitCapacity);
    } else if (optionIs(a, nullptr, "--timeout")) {
        *err = in.numberValue(a, &params.timeoutMs);
    } else if (optionIs(a, nullptr, "--validation")) {
        validation = true;
    } else {
        return false;
    }
    return true;
}

QString CliArgs::check()
{
    if (help || version)
        return {};
    if (command.isEmpty())
        return QStringLiteral("no command given (see --help)");
    if (command == QLatin1String("devices"))
        return {};
    if (command == QLatin1String("dump")) {
        if (paths.isEmpty())
            return QStringLiteral("no file to dump given");
        return {};
    }
    if (command == QLatin1String("merge")) {
        if (paths.isEmpty())
            return QStringLiteral("no output to merge given: the --json outputs of a scan's --shard parts");
        return {};
    }
    if (!modules.isEmpty())
        return QStringLiteral("--module belongs to dump (see --help)");
    if (command != QLatin1String("scan"))
        return QStringLiteral("unknown command '%1' (see --help)").arg(command);
    // yara's own form, `scan [options] RULES PATH...`, when no -r is given.
    if (rules.isEmpty() && paths.size() >= 2 && QFileInfo(QString::fromLocal8Bit(paths.front())).isFile())
        rules.push_back(QString::fromLocal8Bit(paths.takeFirst()));
    if (rules.isEmpty())
        return QStringLiteral("no rule file given: use -r FILE (or give it before the paths, as yara takes it)");
    if (paths.isEmpty())
        return QStringLiteral("no path to scan given");
    if (params.batchBytes <= 0 || params.batchBytes > (int64_t(1) << 40))
        return QStringLiteral("--batch-bytes out of range");
    if (params.segmentBytes <= 0)
        return QStringLiteral("--segment-bytes must be positive");
    return {};
}
