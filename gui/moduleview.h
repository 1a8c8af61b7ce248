// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace Hitscope {

struct ModuleObject;

/**
 * A file's YARA module data (what `hitscope-cli dump` and `yara -D` print) as a tree: one top-level item per
 * module, a row per field with its value, arrays by index, dictionaries by key, undefined values as yara
 * names them. libyara reads the file on a thread of its own (it walks every byte, so a large file takes a
 * while); the dialog says so meanwhile, and names the file and the reason when it cannot be read.
 */
class ModuleView : public QDialog
{
    Q_OBJECT
public:
    explicit ModuleView(const QByteArray &path, QWidget *parent = nullptr);
    /// Shown inside another window (the Files view's detail) rather than as a dialog of its own: no Close button.
    void setEmbedded();
    /// A dialog closes on Esc; an embedded view stays.
    void reject() override;
    ~ModuleView() override;

    QTreeWidget *tree() const { return m_tree; }
    QLabel *status() const { return m_status; }
    /// Whether the read has ended (with data or an error).
    bool isLoaded() const { return m_loaded; }

Q_SIGNALS:
    void loaded();

private:
    void addObject(QTreeWidgetItem *parent, const QString &name, const ModuleObject &object);

    QLabel *m_status = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
    bool m_embedded = false;
    QTreeWidget *m_tree = nullptr;
    bool m_loaded = false;
};

} // namespace Hitscope
