// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QString>

namespace Hitscope::Format {

/// "0 B", "512 B", "1.5 KiB", "64.0 MiB", "1.25 GiB".
QString bytes(int64_t bytes);
/// "850 ms", "12 s", "3:05", "1:02:03".
QString duration(double ms);

} // namespace Hitscope::Format
