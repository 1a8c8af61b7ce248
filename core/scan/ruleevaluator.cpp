// SPDX-License-Identifier: GPL-3.0-or-later
#include "ruleevaluator.h"

#include <algorithm>
#include <map>

#include <fcntl.h>
#include <unistd.h>

#include "modules/moduleaccess.h"
#include "modules/moduleruntime.h"
#include "util/elapsed.h"

namespace Hitscope {

namespace {

/// Reads bytes for uint8(..)/uint32be(..) and the like; most conditions read near the start of the file, so
/// its first block is read once.
class FileBytes
{
public:
    /// `known`: the file's first bytes as scanned, if known (reads within them open nothing).
    FileBytes(const QByteArray &path, int64_t size, std::span<const uint8_t> known)
        : m_path(path)
        , m_size(size)
        , m_known(known)
    {
    }
    ~FileBytes()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }

    bool read(int64_t offset, int size, uint8_t *out)
    {
        if (offset < 0 || size <= 0 || offset + size > m_size)
            return false;
        if (offset + size <= int64_t(m_known.size())) {
            std::copy_n(m_known.data() + offset, size, out);
            return true;
        }
        if (!open())
            return false;
        if (offset + size <= int64_t(m_head.size())) {
            std::copy_n(m_head.data() + offset, size, out);
            return true;
        }
        return ::pread(m_fd, out, size_t(size), offset) == ssize_t(size);
    }

private:
    bool open()
    {
        if (m_fd >= 0)
            return true;
        if (m_failed)
            return false;
        m_fd = ::open(m_path.constData(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0) {
            m_failed = true;
            return false;
        }
        m_head.resize(size_t(std::min<int64_t>(m_size, kHead)));
        const ssize_t n = ::pread(m_fd, m_head.data(), m_head.size(), 0);
        m_head.resize(n > 0 ? size_t(n) : 0);
        return true;
    }

    static constexpr int64_t kHead = 4096;
    const QByteArray &m_path;
    const int64_t m_size;
    int m_fd = -1;
    bool m_failed = false;
    const std::span<const uint8_t> m_known;
    std::vector<uint8_t> m_head;
};

} // namespace

RuleEvaluator::RuleEvaluator(const RuleSet &rules, const std::vector<int> &rejectedPatterns)
    : m_rules(rules)
{
    m_disabled.assign(rules.rules.size(), 0);
    m_needsMatch.assign(rules.rules.size(), 0);
    for (size_t r = 0; r < rules.rules.size(); ++r)
        m_needsMatch[r] = rules.rules[r].isYara() && rules.rules[r].condition->needsAMatch();
    for (int p : rejectedPatterns)
        m_disabled[size_t(rules.patterns[size_t(p)].ruleIndex)] = 1;
    m_localIndex.assign(rules.patterns.size(), -1);
    m_namespace.assign(rules.rules.size(), -1);
    std::map<QString, int> namespaces;
    m_matches.resize(rules.rules.size());
    for (size_t r = 0; r < rules.rules.size(); ++r) {
        const Rule &rule = rules.rules[r];
        for (size_t i = 0; i < rule.patterns.size(); ++i)
            m_localIndex[size_t(rule.patterns[i])] = int(i);
        if (!rule.isYara())
            continue;
        m_anyYara = true;
        const auto [it, inserted] = namespaces.emplace(rule.ns, int(namespaces.size()));
        m_namespace[r] = it->second;
        m_matches[r].resize(rule.patterns.size());
    }
    m_counts.resize(rules.rules.size());
    for (size_t r = 0; r < rules.rules.size(); ++r)
        m_counts[r].assign(m_matches[r].size(), -1);
    m_namespaces = int(namespaces.size());
    m_result.assign(rules.rules.size(), 0);
    m_isTouched.assign(rules.rules.size(), 0);
    m_hit.assign(rules.rules.size(), 0);
    m_failedGlobal.assign(size_t(m_namespaces), 0);

    std::vector<QByteArray> modules;
    std::vector<int> regexes;
    bool entryPoint = false;
    for (const Rule &rule : rules.rules) {
        if (!rule.isYara())
            continue;
        for (const QByteArray &m : rule.condition->modulesUsed())
            if (std::find(modules.begin(), modules.end(), m) == modules.end())
                modules.push_back(m);
        for (int id : rule.condition->moduleRegexes())
            if (std::find(regexes.begin(), regexes.end(), id) == regexes.end())
                regexes.push_back(id);
        entryPoint = entryPoint || rule.condition->readsEntryPoint();
    }
    if (!modules.empty() || entryPoint)
        m_modules = std::make_unique<ModuleRuntime>(std::move(modules), entryPoint, std::move(regexes));
}

RuleEvaluator::~RuleEvaluator() = default;

void RuleEvaluator::setProfiling(bool on)
{
    m_tally.reset();
    if (!on)
        return;
    m_tally = std::make_unique<RuleTally>();
    m_tally->conditionNs.assign(m_rules.rules.size(), 0);
    m_tally->files.assign(m_rules.rules.size(), 0);
    m_tally->matches.assign(m_rules.rules.size(), 0);
}

bool RuleEvaluator::readsModules(const RuleSet &rules)
{
    return std::any_of(rules.rules.begin(), rules.rules.end(), [](const Rule &rule) {
        return rule.isYara() && (!rule.condition->modulesUsed().empty() || rule.condition->readsEntryPoint());
    });
}

void RuleEvaluator::touch(int rule)
{
    if (!m_isTouched[size_t(rule)]) {
        m_isTouched[size_t(rule)] = 1;
        m_touched.push_back(rule);
    }
}

void RuleEvaluator::evaluate(FileResult &file, std::span<const uint8_t> known)
{
    std::vector<Hit> &hits = file.hits;
    // A YARA string's start may be found from two batches of one file: once is enough.
    hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
    file.rules.clear();
    file.capped.clear();
    file.console.clear();
    file.moduleError.clear();
    std::fill(m_hit.begin(), m_hit.end(), 0);
    for (const Hit &h : hits) {
        const Pattern &p = m_rules.patterns[size_t(h.pattern)];
        m_hit[size_t(p.ruleIndex)] = 1;
        if (p.yara) {
            touch(p.ruleIndex);
            auto &matches = m_matches[size_t(p.ruleIndex)][size_t(m_localIndex[size_t(h.pattern)])];
            // YARA stops recording a string after YR_MAX_STRING_MATCHES matches (and warns): its count, its
            // offsets and its -s lines all stop there, so they do here too.
            if (matches.size() == size_t(kMaxStringMatches)) {
                if (file.capped.empty() || file.capped.back() != h.pattern)
                    file.capped.push_back(h.pattern);
                continue;
            }
            matches.push_back({ h.offset, h.length });
        }
    }
    for (const auto &[pattern, count] : file.counts) {
        const Pattern &p = m_rules.patterns[size_t(pattern)];
        m_hit[size_t(p.ruleIndex)] = 1;
        if (!p.yara)
            continue;
        touch(p.ruleIndex);
        m_counts[size_t(p.ruleIndex)][size_t(m_localIndex[size_t(pattern)])] = std::min<int64_t>(count, kMaxStringMatches);
        if (count > kMaxStringMatches)
            file.capped.push_back(pattern);
    }
    if (m_tally)
        tallyMatches(hits);
    if (!m_anyYara) {
        for (size_t r = 0; r < m_rules.rules.size(); ++r)
            if (m_hit[r])
                file.rules.push_back(int(r));
        if (m_tally)
            for (int r : file.rules)
                ++m_tally->files[size_t(r)];
        return;
    }

    FileBytes bytes(file.path, file.size, known);
    ConditionContext context;
    context.fileSize = file.size;
    context.read = [&bytes](int64_t offset, int size, uint8_t *out) { return bytes.read(offset, size, out); };
    // A rule may name itself (`1 of (a*)` inside rule a): as in YARA, it has not matched while it is evaluated.
    size_t current = 0;
    context.ruleMatched = [this, &current](int rule) {
        return rule >= 0 && size_t(rule) < current && m_result[size_t(rule)];
    };
    std::fill(m_failedGlobal.begin(), m_failedGlobal.end(), 0);
    context.modules = m_modules ? &ModuleAccess::unloaded() : nullptr;
    evaluateFrom(0, context, current, file, known);
    // Once per rule and file: most rules do not hold, and cost one test.
    for (size_t r = 0; r < m_rules.rules.size(); ++r) {
        if (!m_result[r])
            continue;
        const Rule &rule = m_rules.rules[r];
        const bool failedGlobal = rule.isYara() && m_failedGlobal[size_t(m_namespace[r])];
        // A private rule that holds matches the file, unreported.
        if (m_tally && !failedGlobal)
            ++m_tally->files[r];
        if (failedGlobal || (rule.isYara() && rule.isPrivate))
            m_result[r] = 0;
        else
            file.rules.push_back(int(r));
    }
    // What is shown: hits of list rules, and the public strings of reported YARA rules.
    std::sort(file.capped.begin(), file.capped.end());
    file.capped.erase(std::unique(file.capped.begin(), file.capped.end()), file.capped.end());
    std::erase_if(hits, [&](const Hit &h) {
        const Pattern &p = m_rules.patterns[size_t(h.pattern)];
        if (!p.yara)
            return false;
        if (p.isPrivate || !m_result[size_t(p.ruleIndex)])
            return true;
        // Past the cap: later than the last match kept.
        const auto &kept = m_matches[size_t(p.ruleIndex)][size_t(m_localIndex[size_t(h.pattern)])];
        return kept.size() == size_t(kMaxStringMatches) && h.offset > kept.back().offset;
    });
    std::erase_if(file.counts, [&](std::pair<int, int64_t> &c) {
        const Pattern &p = m_rules.patterns[size_t(c.first)];
        c.second = std::min<int64_t>(c.second, kMaxStringMatches);
        return p.yara && (p.isPrivate || !m_result[size_t(p.ruleIndex)]);
    });
    for (int r : m_touched) {
        for (auto &list : m_matches[size_t(r)])
            list.clear();
        std::fill(m_counts[size_t(r)].begin(), m_counts[size_t(r)].end(), -1);
        m_isTouched[size_t(r)] = 0;
    }
    m_touched.clear();
}

// Apart from the loops above, which a scan of millions of hits runs unprofiled: a test per hit there cost 1% of
// the instructions of elastic's rules over /usr/include.
void RuleEvaluator::tallyMatches(const std::vector<Hit> &hits)
{
    for (int r : m_touched) {
        for (const auto &list : m_matches[size_t(r)])
            m_tally->matches[size_t(r)] += int64_t(list.size());
        for (int64_t counted : m_counts[size_t(r)])
            m_tally->matches[size_t(r)] += std::max<int64_t>(counted, 0);
    }
    for (const Hit &h : hits) {
        const Pattern &p = m_rules.patterns[size_t(h.pattern)];
        if (!p.yara)
            ++m_tally->matches[size_t(p.ruleIndex)];
    }
}

void RuleEvaluator::addConditionNs(size_t rule, Clock::time_point since, int64_t timedInside)
{
    const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - since).count() - timedInside;
    m_tally->conditionNs[rule] += ns;
    m_tally->timedNs += ns;
}

void RuleEvaluator::evaluateFrom(size_t first, ConditionContext &context, size_t &current, FileResult &file,
                                 std::span<const uint8_t> known)
{
    for (size_t r = first; r < m_rules.rules.size(); ++r) {
        current = r;
        const Rule &rule = m_rules.rules[r];
        if (!rule.isYara()) {
            m_result[r] = m_hit[r];
            continue;
        }
        if (m_needsMatch[r] && !m_hit[r]) {
            m_result[r] = 0;
        } else {
            context.strings = &m_matches[r];
            context.counts = &m_counts[r];
            const auto c0 = m_tally ? Clock::now() : Clock::time_point {};
            try {
                m_result[r] = !m_disabled[r] && rule.condition->evaluate(context) ? 1 : 0;
                if (m_tally)
                    addConditionNs(r, c0);
            } catch (const ModulesNeeded &) {
                // The rules from r on are timed again inside; what is left is libyara loading the file's modules,
                // which this rule's condition asked for.
                const int64_t timedBefore = m_tally ? m_tally->timedNs : 0;
                // Conditions have no side effects: this one is evaluated again, with the modules loaded. A file
                // whose modules libyara cannot load reads them all as undefined.
                const bool loaded = m_modules->run(
                    file.path, file.size, known,
                    [&](const ModuleAccess &live) {
                        context.modules = &live;
                        evaluateFrom(r, context, current, file, known);
                    },
                    &file.moduleError, &file.console);
                if (!loaded) {
                    context.modules = &ModuleAccess::none();
                    evaluateFrom(r, context, current, file, known);
                }
                context.modules = nullptr;
                if (m_tally)
                    addConditionNs(r, c0, m_tally->timedNs - timedBefore);
                return;
            }
        }
        if (!m_result[r] && rule.isGlobal)
            m_failedGlobal[size_t(m_namespace[r])] = 1;
    }
}

} // namespace Hitscope
