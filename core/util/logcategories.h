// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QLoggingCategory>

namespace Hitscope {

// The program's logging categories, all of them. Traces that a RuntimeSwitches switch turns on are written at
// info level; QT_LOGGING_RULES can silence any of them.
Q_DECLARE_LOGGING_CATEGORY(lcPipeline) // hitscope.pipeline: HITSCOPE_PIPELINE_TRACE
/// hitscope.gpu: device creation, fallbacks, Vulkan validation messages; HITSCOPE_GPU_PROFILE's phases.
Q_DECLARE_LOGGING_CATEGORY(lcGpu)
Q_DECLARE_LOGGING_CATEGORY(lcReader) // hitscope.reader: io_uring failures

} // namespace Hitscope
