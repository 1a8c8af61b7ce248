// SPDX-License-Identifier: GPL-3.0-or-later
#include "dfacache.h"

#include <algorithm>
#include <cstring>

#include <sys/stat.h>

#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QScopeGuard>

#include "util/cachefile.h"
#include "util/hash.h"

namespace Hitscope {

namespace {

constexpr char kMagic[8] = { 'H', 'S', 'D', 'F', 'A', '1', 0, 0 };
/// Merged DFAs are up to a few MiB each (the groups of a rule set and its atom prefilter's): the folder keeps the
/// latest ones up to a count and a size. A large rule set has hundreds of groups, and a compile that pruned its
/// own groups would build them again on every run.
constexpr qsizetype kMaxFiles = 1024;
constexpr qint64 kMaxBytes = qint64(512) << 20;

struct Header
{
    char magic[8];
    uint64_t key; // as in the file's name: a file renamed or copied over another is not taken for it
    uint32_t exceeded, statesBeforeMinimization;
    uint32_t numStates, numClasses, dead, reserved;
    uint32_t start[3], reserved2;
    uint64_t transitions, acceptIndex, acceptEntries;
};

template<typename T, typename A>
void append(QByteArray &out, const std::vector<T, A> &v)
{
    out.append(reinterpret_cast<const char *>(v.data()), qsizetype(v.size() * sizeof(T)));
}

// From a mapped file (offsets of whole elements: the tables follow the header at multiples of 4 bytes), without
// zero-filling the vector first: the tables of a rule set are megabytes, every page of them a fault.
template<typename T, typename A>
bool take(const uchar *in, qint64 size, qint64 &at, uint64_t count, std::vector<T, A> &v)
{
    if (count > uint64_t(size - at) / sizeof(T) || at % qint64(alignof(T)) != 0)
        return false;
    const T *first = reinterpret_cast<const T *>(in + at);
    v.assign(first, first + count);
    at += qint64(count * sizeof(T));
    return true;
}

} // namespace

DfaCache::DfaCache(const QString &dir)
    : m_dir(dir)
{
    struct stat st {};
    if (dir.isEmpty() || ::stat("/proc/self/exe", &st) != 0)
        return;
    const int64_t fields[] = { int64_t(st.st_size), int64_t(st.st_mtim.tv_sec), int64_t(st.st_mtim.tv_nsec),
                               int64_t(st.st_ino), int64_t(st.st_dev) };
    m_program = hashBytes(kHashSeed, fields, sizeof fields);
}

DfaBuilder::Result DfaCache::build(const std::vector<DfaBuilder::Input> &inputs, int maxStates, bool *fromCache,
                                   double keepAfterMs) const
{
    if (fromCache)
        *fromCache = false;
    if (m_program == 0)
        return DfaBuilder::build(inputs, maxStates);
    uint64_t key = hashBytes(m_program, &maxStates, sizeof maxStates);
    for (const DfaBuilder::Input &in : inputs) {
        key = hashBytes(key, &in.patternId, sizeof in.patternId);
        key = in.regex->hash(key);
    }
    const QString path = m_dir + QLatin1String("/") + QString::number(key, 16).rightJustified(16, QLatin1Char('0'))
        + QLatin1String(".dfa");
    DfaBuilder::Result result;
    if (read(path, key, result)) {
        // Kept by age: one in use stays young.
        QFile used(path);
        if (used.open(QIODevice::Append))
            used.setFileTime(QDateTime::currentDateTime(), QFileDevice::FileModificationTime);
        if (fromCache)
            *fromCache = true;
        return result;
    }
    QElapsedTimer timer;
    timer.start();
    result = DfaBuilder::build(inputs, maxStates);
    if (double(timer.nsecsElapsed()) / 1e6 >= keepAfterMs)
        write(path, key, result);
    return result;
}

bool DfaCache::read(const QString &path, uint64_t key, DfaBuilder::Result &out) const
{
    // Mapped rather than read into a buffer and copied again: in a VM each fresh page costs a fault of several
    // microseconds, and the mapping's pages are the page cache's own.
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    const qint64 size = file.size();
    Header h {};
    if (size < qint64(sizeof h + sizeof(uint64_t) + 256))
        return false;
    const uchar *in = file.map(0, size);
    if (!in)
        return false;
    const auto unmap = qScopeGuard([&] { file.unmap(const_cast<uchar *>(in)); });
    std::memcpy(&h, in, sizeof h);
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.key != key)
        return false;
    uint64_t sum = 0;
    std::memcpy(&sum, in + size - qint64(sizeof sum), sizeof sum);
    if (sum != hashBytes(kHashSeed, in, size_t(size) - sizeof sum))
        return false;
    Dfa &d = out.dfa;
    qint64 at = sizeof h;
    std::memcpy(d.byteClass.data(), in + at, 256);
    at += 256;
    d.numStates = h.numStates;
    d.numClasses = h.numClasses;
    d.dead = h.dead;
    for (int i = 0; i < 3; ++i)
        d.start[size_t(i)] = h.start[i];
    const qint64 tables = size - qint64(sizeof sum);
    if (!take(in, tables, at, h.transitions, d.transitions) || !take(in, tables, at, h.acceptIndex, d.acceptIndex)
        || !take(in, tables, at, h.acceptEntries, d.acceptEntries))
        return false;
    out.exceededBudget = h.exceeded != 0;
    out.statesBeforeMinimization = int(h.statesBeforeMinimization);
    if (out.exceededBudget)
        return d.numStates == 0;
    // What the walks index must be in range: a table from another format is no DFA.
    const uint64_t cells = uint64_t(d.numStates) * d.numClasses;
    if (d.numStates == 0 || d.transitions.size() != cells || d.acceptIndex.size() != size_t(d.numStates) + 1
        || d.acceptIndex.back() != d.acceptEntries.size())
        return false;
    for (uint8_t c : d.byteClass)
        if (c >= d.numClasses)
            return false;
    for (uint32_t s : d.start)
        if (s >= cells || s % d.numClasses != 0)
            return false;
    // Without an early exit, so that these loops over megabytes vectorize: every start-up reads the tables.
    uint32_t farthest = 0;
    for (uint32_t t : d.transitions)
        farthest = std::max(farthest, t & Dfa::kStateMask);
    bool ascending = true;
    for (size_t i = 0; i + 1 < d.acceptIndex.size(); ++i)
        ascending &= d.acceptIndex[i] <= d.acceptIndex[i + 1];
    return farthest < cells && ascending;
}

void DfaCache::write(const QString &path, uint64_t key, const DfaBuilder::Result &result) const
{
    const Dfa &d = result.dfa;
    Header h {};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.key = key;
    h.exceeded = result.exceededBudget ? 1 : 0;
    h.statesBeforeMinimization = uint32_t(result.statesBeforeMinimization);
    h.numStates = d.numStates;
    h.numClasses = d.numClasses;
    h.dead = d.dead;
    for (int i = 0; i < 3; ++i)
        h.start[i] = d.start[size_t(i)];
    h.transitions = d.transitions.size();
    h.acceptIndex = d.acceptIndex.size();
    h.acceptEntries = d.acceptEntries.size();
    QByteArray out(reinterpret_cast<const char *>(&h), sizeof h);
    out.append(reinterpret_cast<const char *>(d.byteClass.data()), 256);
    append(out, d.transitions);
    append(out, d.acceptIndex);
    append(out, d.acceptEntries);
    const uint64_t sum = hashBytes(kHashSeed, out.constData(), size_t(out.size()));
    out.append(reinterpret_cast<const char *>(&sum), sizeof sum);
    writeCacheFile(path, out, QStringLiteral("????????????????.dfa"), kMaxFiles, kMaxBytes);
}

} // namespace Hitscope
