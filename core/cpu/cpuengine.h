// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>

#include "engine/engine.h"

namespace Hitscope {

class AtomMarks;
class LazyCaches;

/**
 * The reference engine: walks the DFA tables the GPU uses, on all cores. With the catalog's atom prefilter,
 * one vector screen finds the fixed sequences (literals, hex strings) whole and the other patterns' atoms,
 * and covered groups are walked only in windows around those atoms. Each thread scans eight work items of
 * one group interleaved, so that eight independent table look-ups are in flight at once (a single DFA walk
 * is bound by the latency of one load per byte).
 */
class CpuEngine : public Engine
{
public:
    QString name() const override;
    /// 8 MiB on up to 4 cores, else 32 MiB. The scan's batch buffers are first touched by reading, and the
    /// kernel zeroes each page then: in the 2-core VM, where the host takes back memory freed for 2 s, a fresh
    /// 2 MiB page cost 4.4 ms, so 16 MiB buffers cost 0.14 s of CPU per scan (docs/benchmarks.md).
    int64_t preferredBatchBytes() const override;
    /// Four: one being read, one scanned, one whose starts are found, one whose files are reported. The GPU
    /// engine's others hold batches on their way to the device; here they would only be more fresh memory
    /// (zeroed by the kernel on first touch: 16% of the CPU time of a 1 GiB scan on the 2-core machine).
    int scanBuffers() const override { return 4; }
    void setCountedPatterns(const std::vector<bool> &counted) override;
    /// Times its items per group and the screens, and counts the screens' candidates per pattern, to split the
    /// time among patterns (CpuEngineProfile).
    void setProfiling(bool on) override { m_profiling = on; }
    /// Whether the catalog's atom prefilter is used (the default). Off, every group gets a pass of its own,
    /// so that a state is carried from chunk to chunk for every unbounded group, as by another engine: the
    /// GPU engine's fallback takes over the carry of GPU batches.
    void setAtomPrefilter(bool on) { m_atomPrefilter = on; }
    CpuEngine();
    ~CpuEngine() override;
    bool scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
              const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error) override;

    /// Where the GPU found that the prefilter's sequences may end (AtomPrefilter::keyFilter): per 64-byte block of
    /// the batch's haystack, four bits, the length classes of those sequences (KeyFilter::classOf), eight
    /// blocks a word.
    struct KeyBlocks
    {
        const uint32_t *classes = nullptr;
        int64_t blocks = 0;
        uint32_t at(int64_t block) const { return (classes[size_t(block) / 8] >> (4 * (block % 8))) & 15u; }
    };
    /// The GPU engine's host half, for a catalog of tableless groups (CompileOptions::tableless): the prefilter's
    /// screens over the ends that `blocks` allow and the windows around the atoms they find. No group gets a
    /// pass: the GPU walks the groups with tables. The hits are those of scan() but for those groups'.
    bool scanScreens(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
                     const KeyBlocks &blocks, BatchResult &result);

private:
    std::vector<uint8_t> m_counted; ///< per pattern; empty: none counted
    bool m_atomPrefilter = true;
    bool m_profiling = false;
    const KeyBlocks *m_keyBlocks = nullptr; ///< during scanScreens()
    std::unique_ptr<LazyCaches> m_lazyCaches; ///< the windows' LazyDfa states, kept from batch to batch
    std::unique_ptr<AtomMarks> m_marks;       ///< kept too: fresh zeroed bits per batch were page faults
};

} // namespace Hitscope
