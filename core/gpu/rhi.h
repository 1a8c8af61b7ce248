// SPDX-License-Identifier: GPL-3.0-or-later
// The one header through which Hitscope includes QRhi. In Qt 6.4 QRhi is private API (QtGui/private, target
// Qt6::GuiPrivate); Qt 6.6 made it semi-public as <rhi/qrhi.h>. A Qt upgrade should only touch this file.
#pragma once

#include <QtGlobal>
#include <QtGui/qtguiglobal.h>

#if QT_VERSION >= QT_VERSION_CHECK(6, 6, 0)
#include <rhi/qrhi.h>
#else
#include <QtGui/private/qrhi_p.h>
#include <QtGui/private/qrhigles2_p.h>
#include <QtGui/private/qrhinull_p.h>
#if QT_CONFIG(vulkan)
#include <QtGui/private/qrhivulkan_p.h>
#endif
#endif
