// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>

#include <QCoreApplication>

#include "cliargs.h"
#include "dumpcommand.h"
#include "gpusupport.h"
#include "mergecommand.h"
#include "scancommand.h"
#include "util/heaptuning.h"
#include "util/openfilelimit.h"

int main(int argc, char **argv)
{
    Hitscope::keepFreedHeapMemory();
    Hitscope::raiseOpenFileLimit();
    CliArgs args;
    const QString error = args.parse(argc, argv);
    // The GPU needs a QGuiApplication (QVulkanInstance), on our headless platform when there is no display; it
    // comes with the GPU module, which a CPU scan never opens (it starts faster without Qt GUI's libraries).
    const bool gpu = error.isEmpty() && !args.help && !args.version
        && (args.command == QLatin1String("devices")
            || (args.command == QLatin1String("scan") && args.engine != Hitscope::EngineChoice::Cpu));
    QString gpuError;
    GpuSupport *support = gpu ? GpuSupport::load(&gpuError) : nullptr;
    std::unique_ptr<QCoreApplication> app;
    if (support)
        app = support->createApplication(argc, argv);
    else
        app = std::make_unique<QCoreApplication>(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("hitscope-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral(HITSCOPE_VERSION));

    if (!error.isEmpty()) {
        std::fprintf(stderr, "hitscope-cli: %s\n", error.toLocal8Bit().constData());
        return 1;
    }
    if (args.help) {
        std::fputs(CliArgs::helpText().toLocal8Bit().constData(), stdout);
        return 0;
    }
    if (args.version) {
        std::printf("hitscope-cli %s\n", HITSCOPE_VERSION);
        return 0;
    }
    if (args.command == QLatin1String("devices")) {
        if (!support) {
            std::printf("no GPU backend offers compute here: %s\n", gpuError.toLocal8Bit().constData());
            return 2;
        }
        return support->runDevicesCommand(args);
    }
    if (args.command == QLatin1String("dump"))
        return runDumpCommand(args);
    if (args.command == QLatin1String("merge"))
        return runMergeCommand(args);
    return runScanCommand(args);
}
