// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include <QString>

namespace Hitscope {

struct PatternCatalog;

/**
 * A catalog's DFAs as the scan kernel reads them: the transitions of every group back to back, and aux: the
 * group descriptors, the unbounded groups, byte classes, accept indexes and entries. Entries of `counted`
 * patterns (empty: none) are flagged, and states whose ends are all counted and at the byte are marked for the
 * kernel to count visits to.
 */
struct ScanTables
{
    std::vector<uint32_t> transitions;
    std::vector<uint32_t> aux;

    /// False, with the reason, when the tables are too large for the kernel's 32-bit words.
    static bool build(const PatternCatalog &catalog, const std::vector<bool> &counted, ScanTables &out,
                      QString *error);
};

} // namespace Hitscope
