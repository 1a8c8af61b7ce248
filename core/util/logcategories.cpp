// SPDX-License-Identifier: GPL-3.0-or-later
#include "logcategories.h"

namespace Hitscope {

Q_LOGGING_CATEGORY(lcPipeline, "hitscope.pipeline", QtInfoMsg)
Q_LOGGING_CATEGORY(lcGpu, "hitscope.gpu", QtInfoMsg)
Q_LOGGING_CATEGORY(lcReader, "hitscope.reader", QtInfoMsg)

} // namespace Hitscope
