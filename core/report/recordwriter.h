// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <QByteArray>
#include <QByteArrayList>
#include <QString>
#include <QStringList>

namespace Hitscope {

struct RuleProfileRow;

/**
 * The one writer of every record the program prints or exports: the JSON lines of `--json` (hit, match, console,
 * problem, rejection, profile, summary; field order fixed, non-UTF-8 paths escaped as jsonescape.h does) and the lines of
 * yara's `-s` (offset, string, match data). The CLI and the GUI's exporter both write through it, so a record
 * reads the same wherever it comes from.
 */
class RecordWriter
{
public:
    /// yara's -s prints at most this many bytes of a match.
    static constexpr int kYaraDataBytes = 512;

    struct MatchString
    {
        QString id;
        int64_t offset = 0;
        int64_t length = 0;
        QByteArray data;
    };
    struct Summary
    {
        int64_t files = 0, bytes = 0, hits = 0, problems = 0, rejections = 0, batches = 0;
        double wallMs = 0;
        bool cancelled = false;
        QString engine;
        int exitCode = 0;
    };

    static void hit(std::string &out, const QByteArray &file, const QString &rule, const QString &string,
                    int64_t offset, int64_t length);
    static void match(std::string &out, const QByteArray &file, const QString &rule, const QString &ns,
                      const QStringList &tags, const std::vector<MatchString> &strings);
    static void console(std::string &out, const QByteArray &file, const QByteArray &message);
    static void problem(std::string &out, const QByteArray &file, const QString &reason);
    static void rejection(std::string &out, const QString &file, int line, const QString &rule, const QString &reason);
    static void summary(std::string &out, const Summary &s);
    /// One rule's profile (--profile): engine_ms null where its engine time could not be measured (a GPU).
    static void profile(std::string &out, const RuleProfileRow &row);
    /// The first record of a sharded scan (--shard K/N): which part (1-based) of how many, of which paths and rule
    /// files, so that
    /// `hitscope-cli merge` can check that every part is there and put the files back in the walk's order.
    static void shard(std::string &out, int index, int count, const QByteArrayList &paths, const QStringList &rules);

    /// One line of yara's -s: "0x1f:$a: data", the data as yara prints it (hex strings' as "4D 5A ...").
    static void yaraString(std::string &out, int64_t offset, const QString &id, const QByteArray &data, bool hex);
};

} // namespace Hitscope
