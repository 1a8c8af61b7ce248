// SPDX-License-Identifier: GPL-3.0-or-later
#include "dispatchplans.h"

#include <algorithm>

namespace Hitscope {

namespace {
constexpr size_t kMaxCachedPlans = 32;
}

const std::vector<uint32_t> &DispatchPlans::dispatchPhases(const std::vector<uint32_t> &phaseItems, int lanes,
                                                           uint32_t budget, bool *cacheHit)
{
    uint64_t key = 1469598103934665603ull ^ uint64_t(lanes) ^ (uint64_t(budget) << 32);
    for (uint32_t q : phaseItems)
        key = (key ^ q) * 1099511628211ull;
    for (auto it = m_plans.begin(); it != m_plans.end(); ++it) {
        if (it->first == key) {
            m_plans.splice(m_plans.begin(), m_plans, it);
            *cacheHit = true;
            return m_plans.front().second;
        }
    }
    *cacheHit = false;
    std::vector<uint32_t> phases;
    const int64_t perDispatch = budget == 0 ? INT64_MAX : int64_t(lanes) * budget;
    for (uint32_t r = 0; r < phaseItems.size(); ++r) {
        const int64_t waves = budget == 0 ? 1 : (int64_t(phaseItems[r]) + perDispatch - 1) / perDispatch;
        for (int64_t w = 0; w < std::max<int64_t>(1, waves); ++w)
            phases.push_back(r);
    }
    m_plans.emplace_front(key, std::move(phases));
    if (m_plans.size() > kMaxCachedPlans)
        m_plans.pop_back();
    return m_plans.front().second;
}

} // namespace Hitscope
