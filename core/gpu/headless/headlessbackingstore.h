// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QImage>
#include <qpa/qplatformbackingstore.h>

namespace Hitscope {

/// Paints into an image that is never shown: enough for a widget or QPainter code path not to crash.
class HeadlessBackingStore : public QPlatformBackingStore
{
public:
    explicit HeadlessBackingStore(QWindow *window) : QPlatformBackingStore(window) { }

    QPaintDevice *paintDevice() override { return &m_image; }
    void flush(QWindow *, const QRegion &, const QPoint &) override { }
    void resize(const QSize &size, const QRegion &) override
    {
        if (m_image.size() != size)
            m_image = QImage(size, QImage::Format_RGB32);
    }

private:
    QImage m_image;
};

} // namespace Hitscope
