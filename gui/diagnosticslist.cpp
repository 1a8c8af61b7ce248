// SPDX-License-Identifier: GPL-3.0-or-later
#include "diagnosticslist.h"

#include <algorithm>

#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QStyle>

namespace Hitscope {

namespace {

bool sameFile(const QString &a, const QString &b)
{
    return QDir::cleanPath(QFileInfo(a).absoluteFilePath()) == QDir::cleanPath(QFileInfo(b).absoluteFilePath());
}

} // namespace

DiagnosticsList::DiagnosticsList(QWidget *parent)
    : QTreeWidget(parent)
{
    setObjectName(QStringLiteral("diagnostics"));
    setColumnCount(NUM_COLUMNS);
    setHeaderLabels({ tr("Line"), tr("Rule"), tr("Message") });
    setRootIsDecorated(false);
    setUniformRowHeights(true);
    setAlternatingRowColors(true);
    setSelectionMode(QAbstractItemView::SingleSelection);
    header()->setStretchLastSection(true);
    header()->setSectionResizeMode(LineColumn, QHeaderView::ResizeToContents);
    header()->setSectionResizeMode(RuleColumn, QHeaderView::ResizeToContents);
    const auto activate = [this](QTreeWidgetItem *item) {
        const int row = indexOfTopLevelItem(item);
        if (row >= 0 && row < m_shown.size())
            Q_EMIT diagnosticActivated(m_shown.at(row));
    };
    connect(this, &QTreeWidget::itemClicked, this, activate);
    connect(this, &QTreeWidget::itemActivated, this, activate);
}

void DiagnosticsList::setDiagnostics(const QString &source, const QList<RuleDiagnostic> &diagnostics)
{
    if (diagnostics.isEmpty()) {
        if (m_bySource.erase(source) == 0)
            return;
    } else {
        m_bySource[source] = diagnostics;
    }
    rebuild();
}

QList<RuleDiagnostic> DiagnosticsList::diagnostics(const QString &source) const
{
    if (source.isEmpty())
        return m_shown;
    const auto it = m_bySource.find(source);
    return it == m_bySource.end() ? QList<RuleDiagnostic>() : it->second;
}

QStringList DiagnosticsList::sources() const
{
    QStringList out;
    for (const auto &entry : m_bySource)
        out.push_back(entry.first);
    return out;
}

int DiagnosticsList::count(RuleDiagnostic::Severity severity) const
{
    return int(std::count_if(m_shown.begin(), m_shown.end(),
                             [severity](const RuleDiagnostic &d) { return d.severity == severity; }));
}

void DiagnosticsList::setMainFile(const QString &path)
{
    m_mainFile = path;
    rebuild();
}

void DiagnosticsList::rebuild()
{
    m_shown.clear();
    for (const auto &entry : m_bySource)
        m_shown += entry.second;
    // The edited file's entries first, by line; errors before warnings on a line.
    std::stable_sort(m_shown.begin(), m_shown.end(), [this](const RuleDiagnostic &a, const RuleDiagnostic &b) {
        const bool aMain = sameFile(a.file, m_mainFile);
        const bool bMain = sameFile(b.file, m_mainFile);
        if (aMain != bMain)
            return aMain;
        if (a.file != b.file)
            return a.file < b.file;
        if (a.line != b.line)
            return a.line < b.line;
        return a.severity < b.severity;
    });
    clear();
    const QIcon error = style()->standardIcon(QStyle::SP_MessageBoxCritical);
    const QIcon warning = style()->standardIcon(QStyle::SP_MessageBoxWarning);
    for (const RuleDiagnostic &d : std::as_const(m_shown)) {
        QString where = d.line > 0 ? QString::number(d.line) : QString();
        if (!sameFile(d.file, m_mainFile))
            where = QFileInfo(d.file).fileName() + (d.line > 0 ? QLatin1Char(':') + where : QString());
        auto *item = new QTreeWidgetItem(this, { where, d.rule, d.message });
        item->setIcon(LineColumn, d.severity == RuleDiagnostic::Severity::Error ? error : warning);
        item->setToolTip(MessageColumn, d.message);
        item->setToolTip(LineColumn, QDir::toNativeSeparators(d.file));
    }
    Q_EMIT diagnosticsChanged();
}

} // namespace Hitscope
