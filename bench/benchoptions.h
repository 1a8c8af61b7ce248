// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <QStringList>
#include <QThread>

#include "automata/patterncatalog.h"
#include "engine/devicechoice.h"
#include "engine/launchparams.h"

namespace Hitscope {

/// hitscope-bench's command line.
struct BenchOptions
{
    QStringList rulesFiles;
    QStringList defines; ///< "-d", "NAME=VALUE" pairs, for yara and hitscope-cli as they are
    bool useGpu = false;
    DeviceChoice devices;
    bool segmentSet = false;
    bool batchSet = false;
    QString yaraRules, jsonOut, dir;
    int threads = QThread::idealThreadCount();
    int repeat = 3;
    bool yara = true, vectorscan = true, kernelOnly = false, noPrefilter = false, listHits = false, fullDfas = false;
    bool fixedBatches = false;
    LaunchParams params;
    CompileOptions compileOptions;

    /// False when the bench is to stop at once with *exitCode (--help, or a usage error, already printed).
    bool parse(const QStringList &args, int *exitCode);
    /// A single YARA rule file: it goes to yara as it is, and its compile is compared with yara's.
    bool yaraFile() const;

private:
    bool takeFlag(const QString &a);
    bool takeValue(const QStringList &args, int *i, int *exitCode);
};

} // namespace Hitscope
