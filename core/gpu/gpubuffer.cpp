// SPDX-License-Identifier: GPL-3.0-or-later
#include "gpubuffer.h"

#include <algorithm>
#include <climits>

#include "gpu/rhidevice.h"
#include "gpu/scanlayout.h"

namespace Hitscope {

bool ensureGpuBuffer(RhiDevice &device, std::unique_ptr<QRhiBuffer> &buffer, QRhiBuffer::Type type,
                     QRhiBuffer::UsageFlags usage, int64_t bytes, QString *error, bool *recreated)
{
    bytes = std::max<int64_t>(16, ScanLayout::roundUp4(bytes));
    if (buffer && int64_t(buffer->size()) >= bytes)
        return true;
    const int64_t bindingLimit = device.limits().maxStorageBufferRange;
    const bool storage = usage.testFlag(QRhiBuffer::StorageBuffer);
    if (storage && bindingLimit > 0 && bytes > bindingLimit) {
        *error = QStringLiteral("a GPU buffer of %1 bytes exceeds the device's storage binding limit (%2 bytes)")
                     .arg(bytes)
                     .arg(bindingLimit);
        return false;
    }
    const int64_t grown = buffer ? int64_t(buffer->size()) * 3 / 2 : 0;
    int64_t size = std::min<int64_t>(std::max(bytes, grown), INT32_MAX - 3) & ~int64_t(3);
    if (storage && bindingLimit > 0)
        size = std::min(size, bindingLimit & ~int64_t(3));
    std::unique_ptr<QRhiBuffer> b(device.rhi()->newBuffer(type, usage, int(std::max(size, bytes))));
    if (!b->create()) {
        *error = QStringLiteral("cannot create a GPU buffer of %1 bytes").arg(bytes);
        return false;
    }
    buffer = std::move(b);
    if (recreated)
        *recreated = true;
    return true;
}

} // namespace Hitscope
