// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

#include <QByteArray>

namespace Hitscope {

/// Appends `s` as a quoted JSON string. Bytes that are not valid UTF-8 become U+FFFD, so the output is
/// always valid JSON; callers that need the exact bytes add them separately (hex).
void appendJsonString(std::string &out, const QByteArray &s);

/// True when `s` is valid UTF-8.
bool isValidUtf8(const QByteArray &s);

} // namespace Hitscope
