// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <QByteArray>
#include <QString>
#include <QStringList>

/// A rule of a list file, read independently of Hitscope's loader so the peers get the same patterns.
struct PeerPattern
{
    QByteArray regex; ///< PCRE syntax (literals escaped as \xNN)
    bool caseless = false;
    bool dotAll = false;
    QString name;
};

struct PeerResult
{
    double seconds = 0;
    int64_t matches = 0; ///< match ends reported (Vectorscan) or matching lines printed (yara)
    int64_t peakRssKiB = 0; ///< of a process run as a whole (runCommand)
    QString note;
};

/// Reads .txt literal lists and .tsv regex lists the way the README documents them.
std::vector<PeerPattern> readPeerPatterns(const QStringList &ruleFiles, QString *error);

/// Writes the same patterns as YARA rules (one rule per pattern); returns false on error.
bool writeYaraRules(const std::vector<PeerPattern> &patterns, const QString &path);

/// Reads every file, scanning nothing: what the disk and page cache allow.
PeerResult readCeiling(const std::vector<QByteArray> &files, int threads);

/// Vectorscan, one block-mode database for all patterns, files spread over `threads` threads.
PeerResult runVectorscan(const std::vector<PeerPattern> &patterns, const std::vector<QByteArray> &files, int threads);

/// A whole process, timed, with its peak resident memory (VmHWM, sampled every 2 ms while it runs); its output
/// is discarded.
PeerResult runCommand(const QString &program, const QStringList &args);

/// `yara -r -p threads RULES DIR`, timed as a whole process.
PeerResult runYara(const QString &yaraRules, const QString &dir, int threads, const QStringList &extra = {});
