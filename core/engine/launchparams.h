// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QMetaType>
#include <QString>

namespace Hitscope {

/// How a scan is cut into batches and launched. A change made while a scan runs applies from the next batch.
struct LaunchParams
{
    int64_t batchBytes = 64 << 20;   ///< haystack bytes per batch; 0: the engine's (Scanner::setParams)
    int64_t segmentBytes = 256 << 10; ///< bytes a work item owns in a bounded group (plus the overlap); 0: likewise
    int threads = 0;                  ///< CPU engine workers; 0: one per core
    int workgroupSize = 256;          ///< GPU: invocations per workgroup (fastest measured on the H200)
    int workerGroups = 0;             ///< GPU: persistent workgroups; 0: automatic
    int64_t hitCapacity = 0;          ///< GPU: hit ring entries; 0: automatic
    int timeoutMs = 10000;            ///< GPU: a batch slower than this is re-run on the CPU
    bool rampBatches = false;         ///< smaller batches where the scan starts and ends (Batcher::setRamp)

    bool operator==(const LaunchParams &) const = default;
};

} // namespace Hitscope

Q_DECLARE_METATYPE(Hitscope::LaunchParams)
