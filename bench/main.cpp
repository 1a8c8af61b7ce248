// SPDX-License-Identifier: GPL-3.0-or-later
// hitscope-bench: scans a folder with Hitscope and, in the same run, with its peers (Vectorscan, yara) and
// the read-only ceiling, and prints one table. Speed is measured here, never in unit tests.
#include <QCoreApplication>
#include <QGuiApplication>

#include "benchoptions.h"
#include "benchrun.h"
#include "gpu/headlessplatform.h"
#include "util/heaptuning.h"
#include "util/openfilelimit.h"

using namespace Hitscope;

int main(int argc, char **argv)
{
    keepFreedHeapMemory();
    raiseOpenFileLimit();
    auto app = createGpuApplication(argc, argv);
    BenchOptions options;
    int exitCode = 0;
    if (!options.parse(QCoreApplication::arguments(), &exitCode))
        return exitCode;
    return BenchRun(options).run();
}
