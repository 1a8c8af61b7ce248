// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <chrono>

namespace Hitscope {

/// The clock every stage time and telemetry figure is taken with.
using Clock = std::chrono::steady_clock;

/// Milliseconds from a to b.
inline double msBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

/// Milliseconds since t0.
inline double msSince(Clock::time_point t0)
{
    return msBetween(t0, Clock::now());
}

} // namespace Hitscope
