// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <map>

#include <QTreeWidget>

#include "rulediagnostic.h"

namespace Hitscope {

/**
 * The rule editor's errors and warnings, by line. Entries come from sources, each replaced as a whole by the
 * next call for it (the YARA front end's check, the test scan's compiler, a cost checker...), so that a source
 * never leaves stale entries and a new one needs one call.
 */
class DiagnosticsList : public QTreeWidget
{
    Q_OBJECT
public:
    enum Columns { LineColumn, RuleColumn, MessageColumn, NUM_COLUMNS };

    explicit DiagnosticsList(QWidget *parent = nullptr);

    /// The entries of `source`, replacing those it gave before (none: removes them).
    void setDiagnostics(const QString &source, const QList<RuleDiagnostic> &diagnostics);
    /// Every entry, or those of one source, in the order shown.
    QList<RuleDiagnostic> diagnostics(const QString &source = {}) const;
    QStringList sources() const;
    int count(RuleDiagnostic::Severity severity) const;
    /// Lines of the file being edited are shown as numbers alone, others as `name:line`.
    void setMainFile(const QString &path);

Q_SIGNALS:
    /// Clicked or activated (Enter).
    void diagnosticActivated(const Hitscope::RuleDiagnostic &diagnostic);
    void diagnosticsChanged();

private:
    void rebuild();

    std::map<QString, QList<RuleDiagnostic>> m_bySource;
    QList<RuleDiagnostic> m_shown;
    QString m_mainFile;
};

} // namespace Hitscope
