// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace Hitscope {

class RhiDevice;

struct SmokeTestResult
{
    bool passed = false;
    QString error;    ///< for people, when not passed
    int values = 0;   ///< values checked
    double gpuMs = 0; ///< dispatch time from timestamps; 0 when unsupported
};

/**
 * Runs shaders/smoke.comp on the device: uploads `count` values, dispatches, reads them back and checks each
 * against the CPU's result. Proves the device really computes (the Null backend would read back zeros).
 * Call on the device's thread.
 */
SmokeTestResult runSmokeTest(RhiDevice &device, int count = 4096);

} // namespace Hitscope
