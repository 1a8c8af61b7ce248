// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>

#include <QCoreApplication>

#include "cliargs.h"
#include "scancommand.h"

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("hitscope-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral(HITSCOPE_VERSION));

    CliArgs args;
    const QString error = args.parse(argc, argv);
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
    return runScanCommand(args);
}
