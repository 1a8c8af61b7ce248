// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QMetaType>
#include <QString>

namespace Hitscope {

/// The engine a user asks for (--engine, the GUI's combo, settings): a hardware GPU when one offers compute, else
/// the CPU with a notice (Auto); any GPU device, or fail with the reason (Gpu); the CPU engine (Cpu).
enum class EngineChoice { Auto, Gpu, Cpu };

/// "auto", "gpu" or "cpu" (any case); false for anything else.
bool parseEngineChoice(const QString &name, EngineChoice *choice);
/// The name parseEngineChoice reads back.
QString engineChoiceName(EngineChoice choice);

} // namespace Hitscope

Q_DECLARE_METATYPE(Hitscope::EngineChoice)
