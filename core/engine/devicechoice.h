// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include <QString>

namespace Hitscope {

/// The GPU devices a user asked for (--devices, the GUI's Devices field): every hardware device, or a list of
/// Vulkan device indices as `hitscope-cli devices` numbers them, in order, where an index listed twice makes two
/// device objects on that device.
struct DeviceChoice
{
    bool all = true;
    std::vector<int> indices;

    /// "all" (or empty) or "0,1,1"; false with `error` otherwise.
    static bool parse(const QString &text, DeviceChoice *choice, QString *error);
    QString toString() const;
};

} // namespace Hitscope
