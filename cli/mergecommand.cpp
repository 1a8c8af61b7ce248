// SPDX-License-Identifier: GPL-3.0-or-later
#include "mergecommand.h"

#include <cstdio>

#include <QFile>

#include "cliargs.h"
#include "outputbuffer.h"
#include "report/shardmerger.h"

int runMergeCommand(const CliArgs &args)
{
    QStringList files;
    for (const QByteArray &p : args.paths)
        files.push_back(QFile::decodeName(p));
    QFile out;
    if (!out.open(stdout, QIODevice::WriteOnly)) {
        warnOnStderr(QStringLiteral("cannot write to standard output"));
        return 1;
    }
    QString error;
    int exitCode = Hitscope::ShardMerger::merge(files, out, &error);
    // A full disk must not leave a short merge that looks whole.
    if (exitCode >= 0 && (!out.flush() || std::ferror(stdout) || std::fflush(stdout) != 0)) {
        error = QStringLiteral("cannot write the merged records: %1").arg(out.errorString());
        exitCode = -1;
    }
    if (exitCode < 0) {
        warnOnStderr(QStringLiteral("merge: ") + error);
        return 1;
    }
    return exitCode;
}
