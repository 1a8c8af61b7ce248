// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Include <qcustomplot.h> only through this header. QCustomPlot 2.1's header uses the `signals`/`slots` keywords
// and `foreach` in template bodies, which the project-wide QT_NO_KEYWORDS and QT_NO_FOREACH remove. The macros
// live only while the header is read, so our own code still cannot use them.
#if defined(QT_NO_KEYWORDS) && !defined(signals)
#define HITSCOPE_QCP_KEYWORDS
#define signals Q_SIGNALS
#define slots Q_SLOTS
#define emit Q_EMIT
#endif
#if defined(QT_NO_FOREACH) && !defined(foreach)
#define HITSCOPE_QCP_FOREACH
#define foreach(variable, container) for (variable : container)
#endif

#include <qcustomplot.h>

#ifdef HITSCOPE_QCP_KEYWORDS
#undef signals
#undef slots
#undef emit
#undef HITSCOPE_QCP_KEYWORDS
#endif
#ifdef HITSCOPE_QCP_FOREACH
#undef foreach
#undef HITSCOPE_QCP_FOREACH
#endif
