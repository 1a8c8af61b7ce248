// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

/// A GPU suite that finds no device: skipped, or failed where HITSCOPE_REQUIRE_GPU is set (CI sets it: a missing
/// driver there must not pass as a skipped suite).
#define HITSCOPE_SKIP_WITHOUT_GPU(message)                                                                           \
    do {                                                                                                           \
        if (qEnvironmentVariableIsSet("HITSCOPE_REQUIRE_GPU"))                                                     \
            QFAIL(message);                                                                                        \
        QSKIP(message);                                                                                            \
    } while (false)

namespace TestUtil {

/// Writes `data` to `path`, creating parent folders. Returns false on failure.
bool writeFile(const QString &path, const QByteArray &data);

/// Runs hitscope-cli with `args`; returns its exit code and fills stdout/stderr.
int runCli(const QStringList &args, QByteArray *out, QByteArray *err = nullptr, int timeoutMs = 600000);
/// runCli with XDG_CACHE_HOME set to `cacheHome` (where the CLI keeps its grouping hints); runCli gives every
/// run of a test process one empty folder of its own.
int runCliWithCache(const QStringList &args, const QString &cacheHome, QByteArray *out, QByteArray *err = nullptr,
                    int timeoutMs = 600000);

} // namespace TestUtil

#include <vector>

#include "automata/patterncatalog.h"
#include "engine/launchparams.h"
#include "rules/ruleset.h"
#include "testutilhs.h"

namespace TestUtil {

/// A generated corpus on disk with rule files and what an oracle needs to know about them.
struct GeneratedCase
{
    QString dir;                 ///< corpus root
    QString literalsFile;        ///< .txt literal list
    QString regexesFile;         ///< .tsv regex list
    QStringList ruleNames;       ///< rule name per oracle pattern
    std::vector<OraclePattern> oracle;
    QStringList files;           ///< every file written, absolute
    std::vector<QByteArray> literals; ///< literal-list entries (plain ones), for writing them as YARA rules
};

/**
 * Writes a seeded random corpus under `root`: files from empty to over a megabyte, text and binary, with
 * literals and regex matches planted at random places and across every multiple of `boundary` bytes.
 */
GeneratedCase generateCase(const QString &root, quint32 seed, int boundary);

/// Exact (rule, file, offset, length) set the oracle expects for a generated case.
std::set<std::tuple<QString, QString, int64_t, int64_t>> expectedHits(const GeneratedCase &c);

/// `rules` compiled into DFA groups of about 40 states: several groups even for a few patterns, so that the CPU
/// engine's atom prefilter has groups to cover.
Hitscope::PatternCatalog compileInSmallGroups(const Hitscope::RuleSet &rules);

/// (file, pattern, offset, length) of every hit.
using ScanHits = std::set<std::tuple<QByteArray, int, int64_t, int64_t>>;

/// The hits of a CPU engine scan of `dir` with `params`.
ScanHits cpuScanHits(const Hitscope::RuleSet &rules, const Hitscope::PatternCatalog &catalog, const QString &dir,
                     const Hitscope::LaunchParams &params);

} // namespace TestUtil
