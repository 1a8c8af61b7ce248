// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArrayList>
#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

#include "engine/devicechoice.h"
#include "engine/launchparams.h"
#include "engine/enginechoice.h"
#include "scan/filewalker.h"

class CliArgReader;

/// What `hitscope-cli scan` was asked to do. Paths stay byte strings: file names need not be UTF-8.
struct CliArgs
{
    QString command;
    QStringList rules;
    std::vector<std::pair<QByteArray, QByteArray>> defines; ///< -d NAME=VALUE, in order
    QByteArrayList paths;
    QByteArrayList modules; ///< dump: -m/--module, in order (empty: every module that reads files)
    Hitscope::EngineChoice engine = Hitscope::EngineChoice::Auto;
    QString backend;
    Hitscope::DeviceChoice devices; ///< --devices (default: every hardware GPU)
    bool printStrings = false;
    bool countOnly = false;
    bool json = false;
    bool quietProblems = false;
    QString telemetryFile;
    bool segmentBytesSet = false;
    bool batchBytesSet = false;
    bool fixedBatches = false;
    bool validation = false;
    bool fullDfas = false; ///< --gpu-dfas
    bool sharded = false;  ///< --shard K/N given (walk.shardIndex, walk.shardCount)
    bool profile = false;  ///< --profile (or --profile-top)
    int profileTop = 20;   ///< --profile-top: rules in the table, 0 all
    Hitscope::WalkOptions walk;
    Hitscope::LaunchParams params;
    bool help = false;
    bool version = false;

    /// Parses argv; returns an empty string on success, else the message for the user.
    QString parse(int argc, char **argv);
    static QString helpText();

private:
    bool parseOutputOption(CliArgReader &in, const char *option, QString *error);
    bool parseScanOption(CliArgReader &in, const char *option, QString *error);
    QString parseAttached(char option, const char *value);
    QString addDefine(const char *definition);
    QString setThreads(const char *option, const char *value);
    QString setShard(const char *value);
    /// What the options ask for, checked as a whole.
    QString check();
};
