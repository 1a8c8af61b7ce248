// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <map>
#include <utility>

namespace TestUtil {

/// `s` as YARA's `wide` modifier reads it: each byte followed by a zero.
QByteArray widen(const QByteArray &s);

/// (rule, path) -> the -s lines under it, as yara prints them.
using YaraReport = std::map<std::pair<QByteArray, QByteArray>, QList<QByteArray>>;

/// Reads the `RULE PATH` lines and the `0x...` lines under them of yara's (or hitscope-cli's) output.
YaraReport parseYaraReport(const QByteArray &out);

/// The first differences between what yara printed and what we printed, for a failure message.
QString describeReportDifference(const YaraReport &expected, const YaraReport &got);

/// Runs the yara binary (the oracle) and returns its standard output; its standard error goes to `err`.
QByteArray runYara(const QStringList &args, QByteArray *err);

/// One command run to its end with what /usr/bin/time would say of it.
struct MeasuredRun
{
    int exitCode = -1; ///< -1: it could not start or did not end normally
    QByteArray out;
    QByteArray err;
    double seconds = 0;
    long peakRssKiB = 0; ///< the child's ru_maxrss
};

/// Runs `program` with `args` and `env` added to this process's environment, reading its own peak RSS from
/// wait4() (QProcess cannot tell one child's from another's).
MeasuredRun runMeasured(const QString &program, const QStringList &args, const QStringList &env = {});

} // namespace TestUtil
