// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "gpu/rhi.h"

namespace Hitscope {

/**
 * An offscreen frame: begins in the constructor, ends in end() or, at the latest, in the destructor, so that
 * an early return cannot leave the QRhi inside a frame. On Vulkan, endOffscreenFrame() waits on a fence: after
 * end(), read-backs and timestamps of the frame are complete. On OpenGL it only flushes.
 */
class RhiFrame
{
public:
    explicit RhiFrame(QRhi *rhi) : m_rhi(rhi) { m_result = m_rhi->beginOffscreenFrame(&m_cb); }
    ~RhiFrame() { end(); }

    RhiFrame(const RhiFrame &) = delete;
    RhiFrame &operator=(const RhiFrame &) = delete;

    /// False when beginOffscreenFrame() failed: then there is no command buffer; see result().
    bool isActive() const { return m_cb != nullptr; }
    QRhiCommandBuffer *commandBuffer() const { return m_cb; }
    /// The result of beginning the frame, then of ending it.
    QRhi::FrameOpResult result() const { return m_result; }

    QRhi::FrameOpResult end()
    {
        if (m_cb) {
            m_result = m_rhi->endOffscreenFrame();
            m_cb = nullptr;
        }
        return m_result;
    }

private:
    QRhi *m_rhi;
    QRhiCommandBuffer *m_cb = nullptr;
    QRhi::FrameOpResult m_result = QRhi::FrameOpError;
};

} // namespace Hitscope
