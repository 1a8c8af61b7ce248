// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStringList>
#include <QWidget>

#include "rules/yaraconditioncompiler.h"

class QLineEdit;
class QListWidget;
class QPushButton;

namespace Hitscope {

/// The loaded rule files: add, remove, and a check box per file to enable it for the next scan; and the YARA
/// external variables the rules may use (yara's -d NAME=VALUE).
class RuleSetPanel : public QWidget
{
    Q_OBJECT
public:
    explicit RuleSetPanel(QWidget *parent = nullptr);

    /// Adds rule files (absolute paths), enabled; ignores ones already listed. Returns how many were added.
    int addRuleFiles(const QStringList &files);
    QStringList ruleFiles() const;
    QStringList enabledRuleFiles() const;
    void setEnabledAt(int row, bool enabled);

    /// The external variables as typed: `NAME=VALUE` pairs separated by ';' (a value may hold spaces), typed as
    /// yara types -d values. An entry without '=' or a name is reported in `error`, and left out.
    YaraExternals externals(QString *error = nullptr) const;
    QString externalsText() const;
    void setExternalsText(const QString &text);

public Q_SLOTS:
    void onAddRules();
    void onRemoveSelected();

Q_SIGNALS:
    void ruleFilesChanged();
    void externalsChanged();
    /// The user asked to open this rule file in the rule editor.
    void editRequested(const QString &path);

private:
    QListWidget *m_list = nullptr;
    QPushButton *m_remove = nullptr;
    QLineEdit *m_externals = nullptr;
};

} // namespace Hitscope
