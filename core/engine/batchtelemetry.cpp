// SPDX-License-Identifier: GPL-3.0-or-later
#include "batchtelemetry.h"

namespace Hitscope {

const char *BatchTelemetry::stageKey(StageId stage)
{
    static const char *const keys[NUM_STAGES] = { "read", "prepare", "scan", "starts", "resolve" };
    return keys[stage];
}

QJsonObject BatchTelemetry::toJson() const
{
    QJsonObject o;
    o[QLatin1String("type")] = QStringLiteral("batch");
    o[QLatin1String("index")] = index;
    o[QLatin1String("files")] = files;
    o[QLatin1String("bytes")] = qint64(bytes);
    o[QLatin1String("haystack_bytes")] = qint64(haystackBytes);
    o[QLatin1String("segments")] = segments;
    o[QLatin1String("work_items")] = qint64(workItems);
    o[QLatin1String("worker_groups")] = workerGroups;
    o[QLatin1String("workgroup_size")] = workgroupSize;
    o[QLatin1String("occupancy")] = occupancy;
    o[QLatin1String("bytes_uploaded_data")] = qint64(bytesUploadedData);
    o[QLatin1String("bytes_uploaded_tables")] = qint64(bytesUploadedTables);
    o[QLatin1String("bytes_staged")] = qint64(bytesStaged);
    o[QLatin1String("bytes_uploaded")] = qint64(bytesUploadedData + bytesUploadedTables);
    o[QLatin1String("bytes_read_back")] = qint64(bytesReadBack);
    o[QLatin1String("bytes_moved")] = qint64(bytesMoved());
    o[QLatin1String("hits")] = qint64(hits);
    o[QLatin1String("hits_rerun")] = qint64(hitsRerun);
    o[QLatin1String("hit_density")] = hitDensity();
    o[QLatin1String("gpu_ms")] = gpuMs;
    o[QLatin1String("host_screen_ms")] = hostScreenMs;
    o[QLatin1String("key_blocks")] = qint64(keyBlocks);
    o[QLatin1String("wall_ms")] = wallMs;
    o[QLatin1String("read_ms")] = readMs;
    o[QLatin1String("buffer_wait_ms")] = bufferWaitMs;
    o[QLatin1String("engine_ms")] = engineMs;
    o[QLatin1String("resolve_ms")] = resolveMs;
    o[QLatin1String("fixup_passes")] = fixupPasses;
    o[QLatin1String("rescanned_segments")] = qint64(rescannedSegments);
    o[QLatin1String("throughput_gbs")] = throughputGBs();
    o[QLatin1String("pipeline_cache_hits")] = pipelineCacheHits;
    o[QLatin1String("plan_cache_hits")] = planCacheHits;
    o[QLatin1String("engine")] = engine;
    o[QLatin1String("backend")] = backend;
    o[QLatin1String("device")] = device;
    o[QLatin1String("device_slot")] = deviceSlot;
    o[QLatin1String("params_changed")] = paramsChanged;
    // Flat, so that the CSV export has a column each.
    for (int k = 0; k < NUM_STAGES; ++k) {
        const QString key = QLatin1String(stageKey(StageId(k)));
        o[key + QLatin1String("_began_ms")] = stages[k].began;
        o[key + QLatin1String("_ended_ms")] = stages[k].ended;
    }
    return o;
}

} // namespace Hitscope
