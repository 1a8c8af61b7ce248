// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QLoggingCategory>

namespace Hitscope {
/// "hitscope.gpu": device creation, fallbacks, Vulkan validation messages.
Q_DECLARE_LOGGING_CATEGORY(lcGpu)
} // namespace Hitscope
