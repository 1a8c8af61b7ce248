// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <qpa/qplatformscreen.h>

namespace Hitscope {

/// The one screen of the headless platform: a fixed 1920x1080 RGB32 area that nothing is shown on.
class HeadlessScreen : public QPlatformScreen
{
public:
    QRect geometry() const override { return QRect(0, 0, 1920, 1080); }
    int depth() const override { return 32; }
    QImage::Format format() const override { return QImage::Format_RGB32; }
    QString name() const override { return QStringLiteral("hitscopeheadless"); }
};

} // namespace Hitscope
