// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

namespace Hitscope {

/// One entry of the rule editor's list of problems: an error (the rule was refused) or a warning (it runs).
struct RuleDiagnostic
{
    enum class Severity { Error, Warning };

    Severity severity = Severity::Warning;
    QString file;
    int line = 0; ///< 1-based; 0: the whole file
    QString rule;
    QString message;
};

} // namespace Hitscope

Q_DECLARE_METATYPE(Hitscope::RuleDiagnostic)
