// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <utility>
#include <vector>

namespace Hitscope {

/// The dispatches of a frame, by the items of its phases, the lanes launched and the per-lane budget (most
/// recently used first): a phase whose items need more lanes than one dispatch has runs in several.
class DispatchPlans
{
public:
    /// The phase of each dispatch, in order; a new phase is a new compute pass.
    const std::vector<uint32_t> &dispatchPhases(const std::vector<uint32_t> &phaseItems, int lanes, uint32_t budget,
                                                bool *cacheHit);

private:
    std::list<std::pair<uint64_t, std::vector<uint32_t>>> m_plans;
};

} // namespace Hitscope
