// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

class QAbstractItemModel;
class QString;
class QTableView;
class QWidget;

namespace Hitscope {

/// A table of results as the window's lists show them (hits, files, a rule test's hits): whole rows selected,
/// one line a row with long texts elided in the middle (paths keep their start and their file name), rows as
/// tall as the font, no row numbers, the last column taking the room left.
QTableView *makeResultTable(const QString &objectName, QAbstractItemModel *model, QWidget *parent);

} // namespace Hitscope
