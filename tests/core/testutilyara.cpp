// SPDX-License-Identifier: GPL-3.0-or-later
#include "testutilyara.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

extern char **environ;

namespace TestUtil {

QByteArray widen(const QByteArray &s)
{
    QByteArray w;
    for (char c : s) {
        w += c;
        w += '\0';
    }
    return w;
}

YaraReport parseYaraReport(const QByteArray &out)
{
    YaraReport report;
    QList<QByteArray> *current = nullptr;
    for (const QByteArray &line : out.split('\n')) {
        if (line.isEmpty())
            continue;
        if (line.startsWith("0x") && current) {
            current->push_back(line);
            continue;
        }
        const qsizetype space = line.indexOf(' ');
        current = &report[{ line.left(space), line.mid(space + 1) }];
    }
    return report;
}

QString describeReportDifference(const YaraReport &expected, const YaraReport &got)
{
    QString s;
    int shown = 0;
    for (const auto &[key, lines] : expected) {
        const auto it = got.find(key);
        if (it == got.end()) {
            s += QStringLiteral("\nmissing: %1 %2").arg(QString::fromUtf8(key.first), QString::fromUtf8(key.second));
        } else if (it->second != lines) {
            s += QStringLiteral("\nstrings differ for %1 %2:\n  yara: %3\n  ours: %4")
                     .arg(QString::fromUtf8(key.first), QString::fromUtf8(key.second),
                          QString::fromUtf8(lines.join("\n        ")), QString::fromUtf8(it->second.join("\n        ")));
        } else {
            continue;
        }
        if (++shown > 5)
            return s;
    }
    for (const auto &[key, lines] : got)
        if (!expected.count(key) && ++shown <= 8)
            s += QStringLiteral("\nextra: %1 %2").arg(QString::fromUtf8(key.first), QString::fromUtf8(key.second));
    return s;
}

QByteArray runYara(const QStringList &args, QByteArray *err)
{
    QProcess p;
    p.start(QStringLiteral("yara"), args);
    if (!p.waitForFinished(300000))
        return "yara did not finish";
    *err = p.readAllStandardError();
    return p.readAllStandardOutput();
}

MeasuredRun runMeasured(const QString &program, const QStringList &args, const QStringList &env)
{
    MeasuredRun run;
    QTemporaryDir dir;
    const QByteArray outPath = QFile::encodeName(dir.filePath(QStringLiteral("out")));
    const QByteArray errPath = QFile::encodeName(dir.filePath(QStringLiteral("err")));

    std::vector<QByteArray> argStore { QFile::encodeName(program) };
    for (const QString &a : args)
        argStore.push_back(a.toLocal8Bit());
    std::vector<QByteArray> envStore;
    for (char **e = environ; *e; ++e)
        envStore.emplace_back(*e);
    for (const QString &e : env)
        envStore.push_back(e.toLocal8Bit());
    const auto pointers = [](std::vector<QByteArray> &store) {
        std::vector<char *> p;
        for (QByteArray &s : store)
            p.push_back(s.data());
        p.push_back(nullptr);
        return p;
    };
    std::vector<char *> argv = pointers(argStore);
    std::vector<char *> envp = pointers(envStore);

    // Output goes to files, not pipes: nothing has to drain them while the child runs.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, outPath.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, errPath.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    QElapsedTimer timer;
    timer.start();
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0)
        return run;
    int status = 0;
    rusage usage {};
    if (wait4(pid, &status, 0, &usage) != pid)
        return run;
    run.seconds = double(timer.nsecsElapsed()) / 1e9;
    run.peakRssKiB = usage.ru_maxrss;
    run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    QFile out(QString::fromLocal8Bit(outPath)), err(QString::fromLocal8Bit(errPath));
    if (out.open(QIODevice::ReadOnly))
        run.out = out.readAll();
    if (err.open(QIODevice::ReadOnly))
        run.err = err.readAll();
    return run;
}

} // namespace TestUtil
