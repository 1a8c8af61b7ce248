// SPDX-License-Identifier: GPL-3.0-or-later
// The static plugin object of the "hitscopeheadless" platform. Q_IMPORT_PLUGIN(HitscopeHeadlessPlugin) is in
// core/gpu/headlessplatform.cpp, so every executable that calls Hitscope::useHeadlessPlatformIfNeeded() has it.
#include <qpa/qplatformintegrationplugin.h>

#include "headlessintegration.h"

// At global scope: Q_IMPORT_PLUGIN names the class without a namespace.
class HitscopeHeadlessPlugin : public QPlatformIntegrationPlugin
{
    Q_OBJECT
    Q_PLUGIN_METADATA(IID QPlatformIntegrationFactoryInterface_iid FILE "headless.json")

public:
    QPlatformIntegration *create(const QString &key, const QStringList &) override
    {
        if (key.compare(QLatin1String("hitscopeheadless"), Qt::CaseInsensitive) == 0)
            return new Hitscope::HeadlessIntegration;
        return nullptr;
    }
};

#include "headlessplugin.moc"
