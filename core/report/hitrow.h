// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>

#include <QByteArray>
#include <QMetaType>
#include <QString>

namespace Hitscope {

/// One hit as the GUI shows it: enough to fill a table row without going back to the rule set.
struct HitRow
{
    QByteArray path;
    QString rule;
    QString string;
    int64_t offset = 0;
    int64_t length = 0;
    QByteArray preview; ///< up to 64 bytes of the match, read from the file as the file's hits were delivered
};

} // namespace Hitscope

// Its members are all relocatable: a growing QList<HitRow> moves its bytes instead of copying each row (reference
// counts up and down) at every reallocation.
Q_DECLARE_TYPEINFO(Hitscope::HitRow, Q_RELOCATABLE_TYPE);
Q_DECLARE_METATYPE(Hitscope::HitRow)
