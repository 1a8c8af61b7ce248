// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QJsonObject>
#include <QMetaType>
#include <QString>

namespace Hitscope {

/// What one batch cost and produced; one chart point per batch, one JSON line with --telemetry.
struct BatchTelemetry
{
    int index = 0;
    int files = 0;
    int64_t bytes = 0;          ///< bytes of files owned by the batch (overlaps not counted twice)
    int64_t haystackBytes = 0;  ///< bytes packed, overlaps included
    int segments = 0;
    int64_t workItems = 0;
    int workerGroups = 0;       ///< GPU workgroups, or CPU threads
    int workgroupSize = 0;
    double occupancy = 0;       ///< work items processed / lanes launched (GPU); busy share of threads (CPU)
    int64_t bytesUploadedData = 0;
    int64_t bytesStaged = 0; ///< GPU: haystack bytes copied on the host into staging memory (0 when imported)
    int64_t bytesUploadedTables = 0;
    int64_t bytesReadBack = 0;
    int64_t hits = 0;
    int64_t hitsRerun = 0;      ///< hits of launches re-run because the hit ring was too small
    double gpuMs = 0;
    /// GPU engine on a catalog of tableless groups: the host's exact screens where the GPU found keys, and the
    /// windows around the atoms they found.
    double hostScreenMs = 0;
    int64_t keyBlocks = 0; ///< of those: 64-byte blocks the GPU marked
    /// From the batch's scan start (or the previous batch's end, if later: batches overlap) to its end.
    double wallMs = 0;
    double readMs = 0;          ///< time its bytes took to read (the reader's threads, start to end)
    double bufferWaitMs = 0;    ///< time the reader waited for a free buffer first (the stages behind were busy)
    double engineMs = 0;        ///< time in the engine's scan call (upload, kernel, read-back, host bookkeeping)
    double resolveMs = 0;       ///< start finding, file results and callbacks (beside the next batch's scan)
    int fixupPasses = 0;        ///< GPU: passes that re-checked unbounded groups' speculative segments
    int64_t rescannedSegments = 0; ///< GPU: unbounded (segment, group) items those passes scanned again
    int pipelineCacheHits = 0;
    int planCacheHits = 0;
    QString engine;
    QString backend;
    QString device;
    int deviceSlot = 0; ///< which of the scan's devices ran the batch (--devices: 0 to N-1, in the order listed)
    bool paramsChanged = false; ///< launch parameters differ from the previous batch's
    /// When each stage of the batch's path began and ended, in milliseconds since the scan started (the batch
    /// timeline; docs/architecture.md: the path of one batch). Read: its files read into the buffer; prepare: the
    /// engine's preparation until queued; scan: the engine's call; starts: the match starts found; resolve: its files
    /// assembled, decided and reported.
    struct Stage
    {
        double began = 0;
        double ended = 0;
    };
    enum StageId { Read, Prepare, Scan, Starts, Resolve, NUM_STAGES };
    Stage stages[NUM_STAGES];
    static const char *stageKey(StageId stage);

    int64_t bytesMoved() const { return bytesUploadedData + bytesUploadedTables + bytesReadBack; }
    double hitDensity() const { return bytes > 0 ? double(hits) / (double(bytes) / (1 << 20)) : 0; }
    double throughputGBs() const { return wallMs > 0 ? double(bytes) / (wallMs * 1e6) : 0; }

    QJsonObject toJson() const;
};

} // namespace Hitscope

Q_DECLARE_METATYPE(Hitscope::BatchTelemetry)
