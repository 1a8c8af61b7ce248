// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <QString>

#include "automata/patterncatalog.h"
#include "scan/batchresult.h"
#include "scan/filebatch.h"
#include "scan/launchparams.h"

namespace Hitscope {

/**
 * Scans batches against a catalog. Every engine must report exactly the same RawHits for the same
 * input (the CPU engine is the reference the GPU engine is tested against).
 */
class Engine
{
public:
    virtual ~Engine() = default;

    virtual QString name() const = 0;
    /// `carryIn` has, per batch file and unbounded group, the state to resume from (see BatchResult);
    /// entries of first chunks are ignored. Returns false with `error` set when the batch could not run.
    virtual bool scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                      const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error) = 0;
};

} // namespace Hitscope
