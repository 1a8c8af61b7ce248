// SPDX-License-Identifier: GPL-3.0-or-later
#include "benchoptions.h"

#include <algorithm>
#include <cstdio>

#include "engine/enginechoice.h"
#include "util/bytesize.h"

namespace Hitscope {

namespace {

void usage()
{
    std::fputs("Usage: hitscope-bench [options] -r RULES [-r RULES...] DIR\n"
               "  -r, --rules FILE     rule list (.txt literals, .tsv regexes), repeatable\n"
               "      --yara-rules F   YARA rules for the yara peer (default: the lists converted)\n"
               "  -d NAME=VALUE        YARA external variable for Hitscope and yara, repeatable (as yara -d)\n"
               "      --engine E       cpu (default) or gpu; gpu also measures the kernel with data resident\n"
               "      --workgroup-size N, --worker-groups N   GPU launch parameters\n"
               "      --devices LIST   GPUs for the end-to-end scan, as the CLI's --devices (default: all)\n"
               "  -j, --threads N      threads for Hitscope and every peer (default: all cores)\n"
               "      --repeat N       runs of each contender; the best is reported (default 3)\n"
               "      --batch-bytes N, --segment-bytes N   Hitscope launch parameters\n"
               "      --fixed-batches  every batch of --batch-bytes (default: smaller first and last ones, as the CLI)\n"
               "      --no-yara, --no-vectorscan           leave a peer out\n"
               "      --no-prefilter   the CPU engine makes a pass per group (no atom prefilter)\n"
               "      --gpu-dfas       every string in DFA tables (the GPU walks them over every byte; default:\n"
               "                       the GPU marks where atoms occur and the host checks there)\n"
               "      --list-hits      resolve every YARA match as `hitscope-cli -s` does (default: as without -s,\n"
               "                       strings only counted by their conditions are counted)\n"
               "      --kernel-only    GPU: only the kernel with data resident (for tuning)\n"
               "      --group-states N DFA states at which a merged group stops growing (compile option)\n"
               "      --json FILE      also write the table as JSON\n",
               stdout);
}

} // namespace

bool BenchOptions::parse(const QStringList &args, int *exitCode)
{
    for (int i = 1; i < args.size(); ++i) {
        if (!takeFlag(args[i]) && !takeValue(args, &i, exitCode))
            return false;
    }
    if (rulesFiles.isEmpty() || dir.isEmpty()) {
        usage();
        *exitCode = 1;
        return false;
    }
    threads = std::max(1, threads);
    params.threads = threads;
    params.rampBatches = !fixedBatches;
    compileOptions.threads = threads;
    return true;
}

bool BenchOptions::yaraFile() const
{
    return rulesFiles.size() == 1
        && (rulesFiles.front().endsWith(QLatin1String(".yar")) || rulesFiles.front().endsWith(QLatin1String(".yara")));
}

bool BenchOptions::takeFlag(const QString &a)
{
    if (a == QLatin1String("--fixed-batches"))
        fixedBatches = true;
    else if (a == QLatin1String("--no-prefilter"))
        noPrefilter = true;
    else if (a == QLatin1String("--gpu-dfas"))
        fullDfas = true;
    else if (a == QLatin1String("--list-hits"))
        listHits = true;
    else if (a == QLatin1String("--no-yara"))
        yara = false;
    else if (a == QLatin1String("--no-vectorscan"))
        vectorscan = false;
    else if (a == QLatin1String("--kernel-only"))
        kernelOnly = true;
    else
        return false;
    return true;
}

// An option with a value, -h, or the folder; false when the bench is to stop, with *exitCode.
bool BenchOptions::takeValue(const QStringList &args, int *i, int *exitCode)
{
    const QString &a = args[*i];
    auto next = [&]() -> QString { return *i + 1 < args.size() ? args[++*i] : QString(); };
    auto size = [&](const QString &option, int64_t *out) {
        const QByteArray v = next().toLatin1();
        int64_t bytes = 0;
        if (!parseByteSize(v.constData(), &bytes) || bytes <= 0) {
            std::fprintf(stderr, "hitscope-bench: option %s: '%s' is not a size\n", qPrintable(option), v.constData());
            return false;
        }
        *out = bytes;
        return true;
    };
    *exitCode = 1;
    if (a == QLatin1String("-r") || a == QLatin1String("--rules"))
        rulesFiles << next();
    else if (a == QLatin1String("--yara-rules"))
        yaraRules = next();
    else if (a == QLatin1String("-d") || a == QLatin1String("--define"))
        defines << QStringLiteral("-d") << next();
    else if (a == QLatin1String("-j") || a == QLatin1String("--threads"))
        threads = next().toInt();
    else if (a == QLatin1String("--repeat"))
        repeat = std::max(1, next().toInt());
    else if (a == QLatin1String("--batch-bytes")) {
        // As the CLI takes it ("512M"): a number alone once made a batch of 0 bytes of "512M", and so one
        // batch per file in the resident-kernel pass, which then ran for hours on a large corpus.
        if (!size(a, &params.batchBytes))
            return false;
        batchSet = true;
    } else if (a == QLatin1String("--segment-bytes")) {
        if (!size(a, &params.segmentBytes))
            return false;
        segmentSet = true;
    } else if (a == QLatin1String("--devices")) {
        QString why;
        if (!DeviceChoice::parse(next(), &devices, &why)) {
            std::fprintf(stderr, "hitscope-bench: --devices: %s\n", qPrintable(why));
            return false;
        }
    } else if (a == QLatin1String("--engine")) {
        // The bench compares one engine with its peers: auto is the GPU here.
        EngineChoice choice = EngineChoice::Cpu;
        const QString name = next();
        if (!parseEngineChoice(name, &choice)) {
            std::fprintf(stderr, "hitscope-bench: --engine must be cpu, gpu or auto, not '%s'\n", qPrintable(name));
            return false;
        }
        useGpu = choice != EngineChoice::Cpu;
    } else if (a == QLatin1String("--workgroup-size"))
        params.workgroupSize = next().toInt();
    else if (a == QLatin1String("--worker-groups"))
        params.workerGroups = next().toInt();
    else if (a == QLatin1String("--group-states"))
        compileOptions.maxStatesPerGroup = next().toInt();
    else if (a == QLatin1String("--json"))
        jsonOut = next();
    else if (a == QLatin1String("-h") || a == QLatin1String("--help")) {
        usage();
        *exitCode = 0;
        return false;
    } else if (a.startsWith(QLatin1Char('-'))) {
        std::fprintf(stderr, "hitscope-bench: unknown option %s\n", qPrintable(a));
        return false;
    } else
        dir = a;
    return true;
}

} // namespace Hitscope
