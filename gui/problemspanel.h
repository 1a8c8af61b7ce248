// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

class QTreeWidget;

namespace Hitscope {

/// What went wrong without stopping the scan: unreadable files, rejected rules, the fall back to the CPU
/// engine. Non-blocking: rows are appended, never a dialog.
class ProblemsPanel : public QWidget
{
    Q_OBJECT
public:
    enum class Kind { File, Rule, Engine };

    explicit ProblemsPanel(QWidget *parent = nullptr);

    void addProblem(Kind kind, const QString &path, const QString &reason);
    int count() const;
    void clear();

Q_SIGNALS:
    void countChanged(int count);

private:
    QTreeWidget *m_tree = nullptr;
};

} // namespace Hitscope
