// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <QByteArray>
#include <QString>

#include "benchoptions.h"
#include "cpu/cpuengine.h"
#include "peers.h"
#include "session/rulesetup.h"

namespace Hitscope {

class GpuEngine;

/// One bench run: the sections of the table in the order they are printed; run() is what main() does after
/// the command line.
class BenchRun
{
public:
    explicit BenchRun(const BenchOptions &options);
    /// The exit status.
    int run();

private:
    struct Row
    {
        QString name;
        double seconds = 0;
        int64_t bytes = 0;
        QString hits;
        QString note;
    };

    bool loadRules();
    void printCatalog() const;
    void printScreens() const;
    void compareCompile();
    void walkCorpus();
    void measureReadAndWalk();
    bool chooseEngine();
    Engine &engine();
    void runHitscope();
    void measureResidentKernel();
    void runPeers();
    void printTable() const;

    /// The best of `repeat` runs of fn, or the first that fails.
    template<typename Fn>
    PeerResult best(Fn &&fn) const
    {
        PeerResult bestR;
        bestR.seconds = 1e30;
        for (int k = 0; k < m_options.repeat; ++k) {
            PeerResult r = fn();
            if (r.seconds < bestR.seconds || !r.note.isEmpty())
                bestR = r;
            if (!r.note.isEmpty())
                break;
        }
        return bestR;
    }

    BenchOptions m_options;
    RuleSetup m_setup;
    std::vector<QByteArray> m_files;
    int64_t m_corpusBytes = 0;
    std::vector<Row> m_rows;
    CpuEngine m_cpuEngine;
    std::unique_ptr<Engine> m_gpuEngines;
    GpuEngine *m_gpuEngine = nullptr; // one device: its kernel is also timed with the data resident
};

} // namespace Hitscope
