// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <mutex>

#include <QElapsedTimer>

#include "engine/engine.h"

namespace Hitscope {

// Times the engine's part of a scan (Scanner resolves hit starts and reports files on another thread).
class TimedEngine : public Engine
{
public:
    explicit TimedEngine(Engine &inner)
        : m_inner(inner)
    {
    }
    QString name() const override { return m_inner.name(); }
    int concurrentScans() const override { return m_inner.concurrentScans(); }
    int scanBuffers() const override { return m_inner.scanBuffers(); }
    int64_t maxBatchBytes() const override { return m_inner.maxBatchBytes(); }
    int64_t preferredSegmentBytes() const override { return m_inner.preferredSegmentBytes(); }
    void setHostThreads(int threads) override { m_inner.setHostThreads(threads); }
    void setCountedPatterns(const std::vector<bool> &counted) override { m_inner.setCountedPatterns(counted); }
    Haystack newHaystack(int64_t bytes) override { return m_inner.newHaystack(bytes); }
    void prepare(const PatternCatalog &catalog, const LaunchParams &params, int64_t batchBytes) override
    {
        m_inner.prepare(catalog, params, batchBytes);
    }
    void prepareBatch(FileBatch &batch, const PatternCatalog &catalog) const override
    {
        m_inner.prepareBatch(batch, catalog);
    }
    void copyAhead(const FileBatch &batch) override { m_inner.copyAhead(batch); }
    void setNext(const FileBatch &next) override { m_inner.setNext(next); }
    void forgetNext() override { m_inner.forgetNext(); }
    bool scan(const FileBatch &batch, const PatternCatalog &catalog, const LaunchParams &params,
              const std::vector<uint32_t> &carryIn, BatchResult &result, QString *error) override
    {
        QElapsedTimer t;
        t.start();
        const bool ok = m_inner.scan(batch, catalog, params, carryIn, result, error);
        std::lock_guard lock(m_mutex); // several devices' scans at once
        ms += double(t.nsecsElapsed()) / 1e6;
        return ok;
    }
    double ms = 0;

private:
    Engine &m_inner;
    std::mutex m_mutex;
};

} // namespace Hitscope
