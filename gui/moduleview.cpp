// SPDX-License-Identifier: GPL-3.0-or-later
#include "moduleview.h"

#include <memory>

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QThread>
#include <QThreadPool>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "modules/modulereader.h"

namespace Hitscope {

namespace {

QString valueText(const ModuleObject &o)
{
    if (!o.defined)
        return QStringLiteral("YR_UNDEFINED");
    switch (o.kind) {
    case ModuleObject::Kind::Integer:
        return QString::number(o.integer);
    case ModuleObject::Kind::Float:
        return QString::number(o.real, 'f', 6);
    case ModuleObject::Kind::String: {
        QString s = QStringLiteral("\"");
        for (char c : o.string) {
            const auto b = uint8_t(c);
            s += b >= 0x20 && b < 0x7f ? QString(QLatin1Char(c))
                                       : QStringLiteral("\\x%1").arg(b, 2, 16, QLatin1Char('0'));
        }
        return s + QLatin1Char('"');
    }
    default:
        return {};
    }
}

} // namespace

ModuleView::ModuleView(const QByteArray &path, QWidget *parent)
    : QDialog(parent)
{
    const QString name = QFile::decodeName(path);
    setWindowTitle(tr("Module data of %1").arg(QFileInfo(name).fileName()));
    auto *label = new QLabel(QDir::toNativeSeparators(name), this);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setWordWrap(true);
    m_status = new QLabel(tr("Reading the modules…"), this);
    m_status->setWordWrap(true);
    m_tree = new QTreeWidget(this);
    m_tree->setObjectName(QStringLiteral("moduleTree"));
    m_tree->setHeaderLabels({ tr("Field"), tr("Value") });
    m_tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(label);
    layout->addWidget(m_status);
    layout->addWidget(m_tree, 1);
    layout->addWidget(m_buttons);
    resize(640, 560);

    QPointer<ModuleView> self(this);
    // On the global pool, which the application waits for as it ends: a view closed (or a file of the Files view
    // left) before its read ends is not waited for; the reader finds it gone and drops its result.
    QThreadPool::globalInstance()->start([self, name] {
        auto modules = std::make_shared<std::vector<ModuleReader::Module>>();
        QString error;
        QFile file(name);
        if (!file.open(QIODevice::ReadOnly)) {
            error = file.errorString();
        } else {
            const qint64 size = file.size();
            const uchar *bytes = size > 0 ? file.map(0, size) : nullptr;
            if (size > 0 && !bytes) {
                error = file.errorString();
            } else {
                ModuleReader reader(ModuleReader::fileModules());
                if (!reader.isValid())
                    error = reader.errorString();
                else
                    reader.read(bytes, size_t(size), *modules, &error);
            }
        }
        QMetaObject::invokeMethod(QCoreApplication::instance(), [self, modules, error, name] {
            if (!self)
                return;
            if (!error.isEmpty()) {
                self->m_status->setText(tr("Cannot read the modules of %1: %2").arg(QDir::toNativeSeparators(name), error));
            } else {
                self->m_status->setText(tr("%n module(s), as yara -D prints them", nullptr, int(modules->size())));
                for (const ModuleReader::Module &m : *modules)
                    self->addObject(nullptr, QString::fromUtf8(m.name), m.root);
                if (self->m_tree->topLevelItemCount() > 0)
                    self->m_tree->topLevelItem(0)->setExpanded(true);
            }
            self->m_loaded = true;
            Q_EMIT self->loaded();
        });
    });
}

ModuleView::~ModuleView() = default;

void ModuleView::addObject(QTreeWidgetItem *parent, const QString &name, const ModuleObject &object)
{
    if (object.kind == ModuleObject::Kind::Function)
        return;
    auto *item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(m_tree);
    item->setText(0, name);
    switch (object.kind) {
    case ModuleObject::Kind::Structure:
        for (const ModuleObject &m : object.children)
            addObject(item, QString::fromUtf8(m.identifier), m);
        break;
    case ModuleObject::Kind::Array:
        item->setText(1, tr("%n item(s)", nullptr, int(object.children.size())));
        for (size_t i = 0; i < object.children.size(); ++i)
            addObject(item, QStringLiteral("[%1]").arg(object.indices[i]), object.children[i]);
        break;
    case ModuleObject::Kind::Dictionary:
        item->setText(1, tr("%n entr(y/ies)", nullptr, int(object.children.size())));
        for (size_t i = 0; i < object.children.size(); ++i)
            addObject(item, QString::fromUtf8(object.keys[i]), object.children[i]);
        break;
    default:
        item->setText(1, valueText(object));
        if (!object.defined)
            item->setForeground(1, palette().color(QPalette::Disabled, QPalette::Text));
    }
}

void ModuleView::setEmbedded()
{
    setWindowFlags(Qt::Widget);
    m_buttons->hide();
    m_embedded = true;
}

void ModuleView::reject()
{
    if (!m_embedded)
        QDialog::reject();
}

} // namespace Hitscope
