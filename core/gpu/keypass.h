// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <QString>

#include "gpu/rhi.h"

namespace Hitscope {

struct BatchTelemetry;
class KeyFilter;
class RhiDevice;

/**
 * The key kernel (shaders/keyscreen.comp) before the scan kernel in a batch's first frame: it marks, 4 bits per
 * 64-byte block, the length classes of the prefilter's sequences that may end there. Owns its buffers, bindings
 * and pipeline, and the key tables last uploaded (compared by content: another catalog's filter may live where
 * this one's did).
 */
class KeyPass
{
public:
    KeyPass(RhiDevice &device, bool loopLimited);
    ~KeyPass();

    /// Buffers, bindings over `haystack`, pipeline and tables for `keys`, and in `updates` the batch's parameters
    /// and cleared blocks for a batch of `batchBytes`.
    bool prepare(const KeyFilter &keys, QRhiBuffer *haystack, int64_t batchBytes, QRhiResourceUpdateBatch *updates,
                 BatchTelemetry &t, QString *error);
    /// The dispatch and the read-back of the blocks, after a barrier (outside any pass).
    void record(QRhiCommandBuffer *cb);
    /// After the frame: the blocks read back, and every invocation proved complete.
    bool finish(BatchTelemetry &t, QString *error);
    /// A batch without keys: no block marked.
    void clear(int64_t batchBytes);
    /// [0] invocations completed, then a bit per length class and block.
    const std::vector<uint32_t> &blockWords() const { return m_blockWords; }
    /// The tables' upload was queued for a frame that did not run.
    void forgetTables() { m_tablesFingerprint = 0; }

private:
    bool ensureBindings(QRhiBuffer *haystack, QString *error);
    bool ensurePipeline(QString *error);

    RhiDevice &m_device;
    const bool m_loopLimited;
    std::unique_ptr<QRhiBuffer> m_params;
    std::unique_ptr<QRhiBuffer> m_tables;
    std::unique_ptr<QRhiBuffer> m_blocks;
    std::unique_ptr<QRhiShaderResourceBindings> m_bindings;
    std::array<const QRhiBuffer *, 4> m_bound {};
    std::unique_ptr<QRhiComputePipeline> m_pipeline;
    uint64_t m_tablesFingerprint = 0;
    size_t m_tablesWords = 0;
    int m_groups = 0;
    int64_t m_words = 0; // of the current batch's blocks
    std::vector<uint32_t> m_blockWords;
    QRhiBufferReadbackResult m_readBack;
};

} // namespace Hitscope
