// SPDX-License-Identifier: GPL-3.0-or-later
#include "rulesetpanel.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QStyle>
#include <QVBoxLayout>

#include "rules/yaraloader.h"

namespace Hitscope {

namespace {

QString kindOf(const QString &path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("tsv"))
        return RuleSetPanel::tr("regex list");
    if (suffix == QLatin1String("yar") || suffix == QLatin1String("yara"))
        return RuleSetPanel::tr("YARA rules");
    // As RuleLoader reads it: .rule, .yr and the like are YARA when their text declares rules. This runs on the
    // GUI thread, so only the head of the file is read: a YARA file declares a rule early.
    QFile file(path);
    if (file.open(QIODevice::ReadOnly) && YaraLoader::looksLikeYara(file.read(64 << 10)))
        return RuleSetPanel::tr("YARA rules");
    return RuleSetPanel::tr("literal list");
}

} // namespace

RuleSetPanel::RuleSetPanel(QWidget *parent)
    : QWidget(parent)
{
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("ruleList"));
    m_list->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_list->setTextElideMode(Qt::ElideMiddle);
    connect(m_list, &QListWidget::itemChanged, this, &RuleSetPanel::ruleFilesChanged);
    // A rule file is opened in the rule editor by a double click or from its context menu.
    connect(m_list, &QListWidget::itemDoubleClicked, this,
            [this](QListWidgetItem *item) { Q_EMIT editRequested(item->data(Qt::UserRole).toString()); });
    m_list->setContextMenuPolicy(Qt::ActionsContextMenu);
    auto *edit = new QAction(tr("&Edit in the rule editor"), m_list);
    connect(edit, &QAction::triggered, this, [this] {
        if (QListWidgetItem *item = m_list->currentItem())
            Q_EMIT editRequested(item->data(Qt::UserRole).toString());
    });
    m_list->addAction(edit);

    auto *add = new QPushButton(style()->standardIcon(QStyle::SP_FileDialogNewFolder), tr("Add rules…"), this);
    m_remove = new QPushButton(tr("Remove"), this);
    m_remove->setEnabled(false);
    connect(add, &QPushButton::clicked, this, &RuleSetPanel::onAddRules);
    connect(m_remove, &QPushButton::clicked, this, &RuleSetPanel::onRemoveSelected);
    connect(m_list, &QListWidget::itemSelectionChanged, this,
            [this] { m_remove->setEnabled(!m_list->selectedItems().isEmpty()); });

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(add);
    buttons->addStretch();
    buttons->addWidget(m_remove);

    m_externals = new QLineEdit(this);
    m_externals->setObjectName(QStringLiteral("externals"));
    m_externals->setPlaceholderText(tr("name=value; other=1"));
    m_externals->setClearButtonEnabled(true);
    m_externals->setToolTip(tr("YARA external variables, as yara's -d NAME=VALUE, separated by ';'.\n"
                               "A value is an integer, a float (with a dot), true or false, or else a string."));
    connect(m_externals, &QLineEdit::textChanged, this, [this] {
        QString error;
        externals(&error);
        m_externals->setStyleSheet(error.isEmpty() ? QString() : QStringLiteral("QLineEdit { color: #b00020; }"));
        m_externals->setToolTip(error.isEmpty() ? tr("YARA external variables, as yara's -d NAME=VALUE, separated "
                                                     "by ';'.\nA value is an integer, a float (with a dot), true or "
                                                     "false, or else a string.")
                                                : error);
        Q_EMIT externalsChanged();
    });
    auto *form = new QFormLayout;
    form->setContentsMargins(0, 0, 0, 0);
    form->addRow(tr("Externals:"), m_externals);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_list, 1);
    layout->addLayout(buttons);
    layout->addLayout(form);
}

YaraExternals RuleSetPanel::externals(QString *error) const
{
    YaraExternals out;
    const QStringList entries = m_externals->text().split(QLatin1Char(';'), Qt::SkipEmptyParts);
    for (const QString &entry : entries) {
        const QString trimmed = entry.trimmed();
        if (trimmed.isEmpty())
            continue;
        const qsizetype eq = trimmed.indexOf(QLatin1Char('='));
        const QString name = eq > 0 ? trimmed.left(eq).trimmed() : QString();
        if (name.isEmpty()) {
            if (error && error->isEmpty())
                *error = tr("'%1' is not NAME=VALUE").arg(trimmed);
            continue;
        }
        out[name.toUtf8()] = YaraExternal::fromDefinition(trimmed.mid(eq + 1).toUtf8());
    }
    return out;
}

QString RuleSetPanel::externalsText() const
{
    return m_externals->text();
}

void RuleSetPanel::setExternalsText(const QString &text)
{
    m_externals->setText(text);
}

int RuleSetPanel::addRuleFiles(const QStringList &files)
{
    const QStringList known = ruleFiles();
    int added = 0;
    for (const QString &f : files) {
        const QString path = QDir::cleanPath(QFileInfo(f).absoluteFilePath());
        if (path.isEmpty() || known.contains(path))
            continue;
        auto *item = new QListWidgetItem(QFileInfo(path).fileName() + QStringLiteral("  (") + kindOf(path)
                                             + QLatin1Char(')'),
                                         m_list);
        item->setData(Qt::UserRole, path);
        item->setToolTip(QDir::toNativeSeparators(path));
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Checked);
        ++added;
    }
    if (added)
        Q_EMIT ruleFilesChanged();
    return added;
}

QStringList RuleSetPanel::ruleFiles() const
{
    QStringList out;
    for (int i = 0; i < m_list->count(); ++i)
        out.push_back(m_list->item(i)->data(Qt::UserRole).toString());
    return out;
}

QStringList RuleSetPanel::enabledRuleFiles() const
{
    QStringList out;
    for (int i = 0; i < m_list->count(); ++i) {
        if (m_list->item(i)->checkState() == Qt::Checked)
            out.push_back(m_list->item(i)->data(Qt::UserRole).toString());
    }
    return out;
}

void RuleSetPanel::setEnabledAt(int row, bool enabled)
{
    if (QListWidgetItem *item = m_list->item(row))
        item->setCheckState(enabled ? Qt::Checked : Qt::Unchecked);
}

void RuleSetPanel::onAddRules()
{
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Add rule files"), {}, tr("Rule files (*.txt *.tsv *.yar *.yara *.rule *.rules *.yr);;All files (*)"));
    addRuleFiles(files);
}

void RuleSetPanel::onRemoveSelected()
{
    const QList<QListWidgetItem *> items = m_list->selectedItems();
    if (items.isEmpty())
        return;
    for (QListWidgetItem *item : items)
        delete item;
    Q_EMIT ruleFilesChanged();
}

} // namespace Hitscope
