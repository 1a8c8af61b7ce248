// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "engine/hit.h"

namespace Hitscope {

struct FileBatch;
struct PatternCatalog;
struct RuleSet;
class RuleEvaluator;
class RuleProfiler;

/**
 * Turns a resolved batch's hits, per chunk, into the results of the files that end in it: a file whose chunks
 * span batches is gathered chunk by chunk (with its first bytes kept for conditions, as its first batch's buffer
 * is reused), a file whole in the batch is taken as it is. Then each file's hits are ordered and its rules
 * decided, on several threads. Used on one thread, batch after batch, in order.
 */
class FileAssembler
{
public:
    FileAssembler(const RuleSet &rules, const PatternCatalog &catalog);
    ~FileAssembler();

    /// Takes the batch's per-file hits and counts (indexed like batch.files; moved from) into the results of
    /// the files that end in it, in batch order, and decides their rules.
    void assemble(const FileBatch &batch, std::vector<std::vector<Hit>> &perFile,
                  std::vector<std::vector<std::pair<int, int64_t>>> &perFileCounts, int threads);
    /// The files assemble() finished, in order; valid until the next assemble().
    std::vector<FileResult> &files() { return m_done; }
    /// Milliseconds the last assemble() spent gathering the files and deciding their rules.
    double gatherMs() const { return m_gatherMs; }
    double evaluateMs() const { return m_evaluateMs; }

    /// Whether the evaluators tally their conditions' time and matched files (RuleEvaluator::setProfiling). Set
    /// before the first assemble().
    void setProfiling(bool on) { m_profiling = on; }
    /// Adds what the evaluators tallied to `profiler`, once the last batch is assembled.
    void addTallies(RuleProfiler &profiler) const;

    /// Hits in Hit::operator< order, fast for what resolving leaves: a few ascending runs.
    static void sortHits(std::vector<Hit> &hits);

private:
    void gather(const FileBatch &batch, std::vector<std::vector<Hit>> &perFile,
                std::vector<std::vector<std::pair<int, int64_t>>> &perFileCounts, int threads);
    void gatherSpanning(const FileBatch &batch, std::vector<std::vector<Hit>> &perFile,
                        std::vector<std::vector<std::pair<int, int64_t>>> &perFileCounts);
    void evaluate(int threads);

    const RuleSet &m_rules;
    std::vector<int> m_rejected; // patterns the catalog refused
    bool m_readsModules = false;
    bool m_keepHeads = false; // conditions may read the file: spanning files keep their first bytes
    FileResult m_pending; // the file whose chunks continue into the next batch
    std::vector<FileResult> m_done; // files whose last chunk is in the batch
    std::vector<std::span<const uint8_t>> m_known; // per file of m_done: its first bytes in memory
    std::vector<size_t> m_slot; // per batch file: its place in m_done
    std::vector<std::unique_ptr<RuleEvaluator>> m_evaluators; // one per thread: each keeps its buffers
    double m_gatherMs = 0;
    double m_evaluateMs = 0;
    bool m_profiling = false;
};

} // namespace Hitscope
