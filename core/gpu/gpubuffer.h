// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>

#include <QString>

#include "gpu/rhi.h"

namespace Hitscope {

class RhiDevice;

/**
 * Makes `buffer` hold at least `bytes` (rounded up to whole words), growing it with headroom so that a slowly
 * growing scan does not recreate it every batch. False, with the reason, when the device's storage binding limit
 * or its memory does not allow it. `recreated` (optional) is set when a new buffer replaced the old one: bindings
 * naming the old one must be made again.
 */
bool ensureGpuBuffer(RhiDevice &device, std::unique_ptr<QRhiBuffer> &buffer, QRhiBuffer::Type type,
                     QRhiBuffer::UsageFlags usage, int64_t bytes, QString *error, bool *recreated = nullptr);

} // namespace Hitscope
