// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStringList>
#include <QWidget>

class QListWidget;
class QPushButton;

namespace Hitscope {

/// The loaded rule files: add, remove, and a check box per file to enable it for the next scan.
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

public Q_SLOTS:
    void onAddRules();
    void onRemoveSelected();

Q_SIGNALS:
    void ruleFilesChanged();

private:
    QListWidget *m_list = nullptr;
    QPushButton *m_remove = nullptr;
};

} // namespace Hitscope
