// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

#include <QByteArrayList>

#include "automata/patterncatalog.h"
#include "engine/batchtelemetry.h"
#include "engine/engine.h"
#include "engine/hit.h"
#include "engine/launchparams.h"
#include "rules/ruleset.h"
#include "scan/filewalker.h"
#include "scan/hitresolver.h"
#include "scan/ruleevaluator.h"
#include "scan/ruleprofile.h"
#include "scan/walkahead.h"
#include "util/elapsed.h"

namespace Hitscope {

class Batcher;
class FileAssembler;
class RuleProfiler;

struct ScanSummary
{
    int files = 0;
    int64_t bytes = 0;
    int64_t hits = 0;
    int problems = 0;
    int batches = 0;
    double wallMs = 0;
    bool cancelled = false;
    QString error; ///< set when the scan could not go on (the engine failed and nothing could take over)
};

/**
 * Runs one scan as a pipeline: a reader thread walks the paths and packs batches, the calling thread scans
 * each batch on the engine, and a resolver thread turns the previous batch's end offsets into hits and hands
 * out each file's hits when the file is complete. Launch parameters may change while it runs; they apply from
 * the next batch.
 */
class Scanner
{
public:
    /// Called on a thread of the scanner's own (not the caller's: that one runs the engine), one call at a
    /// time, in batch and file order.
    struct Callbacks
    {
        std::function<void(const FileResult &)> fileDone;
        std::function<void(const FileProblem &)> problem;
        std::function<void(const BatchTelemetry &)> batchDone;
        std::function<void(const QString &)> notice; ///< e.g. a GPU batch re-run on the CPU
    };

    Scanner(const RuleSet &rules, const PatternCatalog &catalog, Engine &engine);
    ~Scanner();

    /// Blocks until the scan is finished or cancelled. `walked`, when given, is the walk of `paths` started
    /// earlier with walkOptions() (while the rules compiled, say); otherwise the scan starts its own.
    ScanSummary run(const QByteArrayList &paths, const WalkOptions &walk, const LaunchParams &params,
                    const Callbacks &callbacks, std::unique_ptr<WalkAhead> walked = nullptr);

    /// The options a scan with `threads` threads (0: one per core) walks with, from the user's.
    static WalkOptions walkOptions(const WalkOptions &walk, int threads);

    /// Thread-safe; applies from the next batch packed and launched on the engine (called from batchDone, that is
    /// the batch after the next one when the next one is already on the engine). A batch or segment size of 0 is
    /// the engine's own (Engine::preferredBatchBytes, preferredSegmentBytes).
    void setParams(const LaunchParams &params);
    /// Thread-safe; the scan stops after the batch in flight.
    void cancel();
    /// Whether callers see each hit (the default). Without it, only the rules matched (and the hits of list
    /// rules) are needed: a YARA string whose matches no condition locates (see
    /// Condition::stringsNeedingOffsets) and whose length is fixed is counted per file (FileResult::counts)
    /// instead of having each match resolved, ordered and listed; millions of matches of a string like
    /// `{ 00 00 00 00 }` cost a count. The other YARA strings' matches are resolved only as far as their
    /// conditions can tell them apart (Condition::matchesNeeded): `#u > 5` needs six per file. Set before run().
    void setListHits(bool list);
    /// Whether run() profiles the rules (off by default): per rule the engine's time for its strings, its
    /// condition's, that of finding its matches' starts, its hits and matched files, and why it may be slow.
    /// Off, the stages test a null pointer per item, unit and condition and measure nothing. Set before run().
    void setProfiling(bool on) { m_profiling = on; }
    /// The profile of the last run() with profiling on (slowest rule first); empty otherwise.
    const RuleProfile &profile() const { return m_profile; }

    /// Threads the scan's walk lists folders on (WalkOptions::listThreads) when the scan has `threads` threads:
    /// none on small machines, where the walk keeps ahead of the scan on its own.
    static int walkListThreads(int threads);
    /// Nice levels the read threads (and the walk's listing threads) run below the scan on 8 cores or more.
    static constexpr int kReadNice = 5;

    /// What resolving one batch's starts measured, for HITSCOPE_PIPELINE_TRACE.
    using ResolveTrace = HitResolver::Trace;

private:
    struct Run;
    struct Scanned;

    LaunchParams currentParams();
    /// The stages of a run, each on a thread of its own but scanBatches(), which runs on the caller's.
    void readBatches(Run &run, const QByteArrayList &paths, const WalkOptions &walk, std::unique_ptr<WalkAhead> walked);
    void prepareBatches(Run &run);
    void scanBatches(Run &run);
    void scanConcurrently(Run &run, int lanes);
    void findStarts(Run &run);
    void reportFiles(Run &run);
    /// The batcher's sizes and threads from the launch parameters, when they changed since `seenVersion`.
    void applySizes(Batcher &batcher, int &seenVersion);
    /// After a cancel (not an engine failure), `batch` and every later one go back unreported.
    bool dropping(Run &run, bool &dropped, std::unique_ptr<FileBatch> &batch);
    /// One batch's problems, files (through `files`) and telemetry, to the callbacks.
    void reportBatch(Run &run, Scanned &job, FileAssembler &files, LaunchParams &previous,
                     Clock::time_point &lastDone);
    void tracePipeline(const Run &run, const Scanned &job, const FileAssembler &files, Clock::time_point filesBegan,
                       Clock::time_point filesDecided, Clock::time_point now) const;

    const RuleSet &m_rules;
    const PatternCatalog &m_catalog;
    Engine &m_engine;
    HitResolver m_resolver;
    std::mutex m_paramsMutex;
    LaunchParams m_params;
    std::atomic_int m_paramsVersion { 0 };
    std::atomic_bool m_cancel { false };
    bool m_trace = false;
    bool m_profiling = false;
    std::unique_ptr<RuleProfiler> m_profiler; ///< during a profiled run()
    RuleProfile m_profile;
};

} // namespace Hitscope
