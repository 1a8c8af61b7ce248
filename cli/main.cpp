// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>

#include <QCoreApplication>
#include <QGuiApplication>

#include "cliargs.h"
#include "gpu/headlessplatform.h"
#include "scancommand.h"
#include "util/heaptuning.h"
#include "util/openfilelimit.h"

int main(int argc, char **argv)
{
    Hitscope::keepFreedHeapMemory();
    Hitscope::raiseOpenFileLimit();
    CliArgs args;
    const QString error = args.parse(argc, argv);
    // The GPU needs a QGuiApplication (QVulkanInstance), on our headless platform when there is no display;
    // a CPU scan starts faster without one.
    const bool gpu = args.command == QLatin1String("devices") || args.engine != CliArgs::Engine::Cpu;
    std::unique_ptr<QCoreApplication> app;
    if (gpu)
        app = Hitscope::createGpuApplication(argc, argv);
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
    if (args.command == QLatin1String("devices"))
        return runDevicesCommand(args);
    return runScanCommand(args);
}
