// SPDX-License-Identifier: GPL-3.0-or-later
#include "peers.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hs/hs.h>

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>

namespace {

QByteArray escapeLiteral(const QByteArray &bytes)
{
    static const char hex[] = "0123456789abcdef";
    QByteArray out;
    for (const char ch : bytes) {
        const auto c = uint8_t(ch);
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
    }
    return out;
}

// `hex: 4D 5A ?? 0?` as a PCRE class sequence.
bool hexToRegex(const QByteArray &spec, QByteArray *out)
{
    QByteArray s = spec;
    s.replace(' ', "");
    if (s.size() % 2)
        return false;
    for (int i = 0; i < s.size(); i += 2) {
        const char hi = s[i], lo = s[i + 1];
        auto val = [](char c) { return QByteArray(1, c).toInt(nullptr, 16); };
        if (hi == '?' && lo == '?') {
            *out += "[\\x00-\\xff]";
        } else if (hi == '?') {
            *out += '(';
            for (int h = 0; h < 16; ++h)
                *out += (h ? "|" : "") + escapeLiteral(QByteArray(1, char(h * 16 + val(lo))));
            *out += ')';
        } else if (lo == '?') {
            const int base = val(hi) * 16;
            *out += "[" + escapeLiteral(QByteArray(1, char(base))) + "-" + escapeLiteral(QByteArray(1, char(base + 15)))
                + "]";
        } else {
            *out += escapeLiteral(QByteArray(1, char(val(hi) * 16 + val(lo))));
        }
    }
    return true;
}

int64_t readAll(int fd, std::vector<char> &buf)
{
    int64_t total = 0;
    for (;;) {
        if (buf.size() < size_t(total) + (1 << 20))
            buf.resize(size_t(total) + (4 << 20));
        const ssize_t n = ::read(fd, buf.data() + total, buf.size() - size_t(total));
        if (n <= 0)
            break;
        total += n;
    }
    return total;
}

template<typename Fn>
double parallelFiles(const std::vector<QByteArray> &files, int threads, Fn &&perFile)
{
    QElapsedTimer t;
    t.start();
    std::atomic<size_t> next { 0 };
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k)
        pool.emplace_back([&, k] {
            std::vector<char> buf;
            for (size_t i = next++; i < files.size(); i = next++) {
                const int fd = ::open(files[i].constData(), O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                    continue;
                const int64_t n = readAll(fd, buf);
                ::close(fd);
                perFile(k, buf.data(), n);
            }
        });
    for (auto &th : pool)
        th.join();
    return double(t.nsecsElapsed()) / 1e9;
}

} // namespace

std::vector<PeerPattern> readPeerPatterns(const QStringList &ruleFiles, QString *error)
{
    std::vector<PeerPattern> out;
    for (const QString &path : ruleFiles) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) {
            *error = path + QLatin1String(": ") + f.errorString();
            return {};
        }
        const bool tsv = path.endsWith(QLatin1String(".tsv"));
        int line = 0;
        for (QByteArray l : f.readAll().split('\n')) {
            ++line;
            if (l.endsWith('\r'))
                l.chop(1);
            if (l.isEmpty() || l.startsWith('#'))
                continue;
            PeerPattern p;
            if (tsv) {
                const QList<QByteArray> cols = l.split('\t');
                if (cols.size() < 3)
                    continue;
                p.caseless = cols[0].contains('i');
                p.dotAll = cols[0].contains('s');
                p.name = QString::fromUtf8(cols[1]);
                p.regex = cols.mid(2).join('\t');
            } else {
                p.name = QFileInfo(path).completeBaseName() + QLatin1Char(':') + QString::number(line);
                if (l.startsWith("hex:")) {
                    if (!hexToRegex(l.mid(4), &p.regex))
                        continue;
                } else {
                    p.regex = escapeLiteral(l);
                }
            }
            out.push_back(p);
        }
    }
    return out;
}

bool writeYaraRules(const std::vector<PeerPattern> &patterns, const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    int i = 0;
    for (const PeerPattern &p : patterns) {
        QByteArray re;
        for (int k = 0; k < p.regex.size(); ++k) {
            // A '/' ends a YARA regex: escape the unescaped ones.
            if (p.regex[k] == '\\' && k + 1 < p.regex.size()) {
                re += p.regex.mid(k, 2);
                ++k;
                continue;
            }
            if (p.regex[k] == '/')
                re += '\\';
            re += p.regex[k];
        }
        f.write("rule R" + QByteArray::number(i++) + " { strings: $r = /" + re + "/" + (p.caseless ? "i" : "")
                + (p.dotAll ? "s" : "") + " condition: $r }\n");
    }
    return true;
}

PeerResult readCeiling(const std::vector<QByteArray> &files, int threads)
{
    // What the batcher does, without the scan: files cut into pieces of at most 8 MiB, read with pread into one
    // large buffer touched beforehand (the batcher's buffers are recycled), by `threads` threads. A buffer
    // grown per file instead would time page faults and zeroing, not reading.
    constexpr int64_t kPiece = 8 << 20;
    constexpr int64_t kRing = int64_t(1) << 30;
    static std::unique_ptr<char[]> ring;
    if (!ring) {
        ring.reset(new char[size_t(kRing)]);
        std::memset(ring.get(), 0, size_t(kRing));
    }
    struct Piece
    {
        uint32_t file;
        int64_t offset, size, dest;
    };
    std::vector<Piece> pieces;
    int64_t at = 0;
    for (size_t i = 0; i < files.size(); ++i) {
        struct stat st;
        if (::stat(files[i].constData(), &st) != 0)
            continue;
        int64_t off = 0;
        do {
            const int64_t n = std::min<int64_t>(kPiece, st.st_size - off);
            if (at + n > kRing)
                at = 0;
            pieces.push_back({ uint32_t(i), off, n, at });
            at += n;
            off += n;
        } while (off < st.st_size);
    }
    std::atomic<size_t> next { 0 };
    QElapsedTimer t;
    t.start();
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k)
        pool.emplace_back([&] {
            for (size_t i = next++; i < pieces.size(); i = next++) {
                const Piece &p = pieces[i];
                const int fd = ::open(files[p.file].constData(), O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                    continue;
                for (int64_t done = 0; done < p.size;) {
                    const ssize_t n = ::pread(fd, ring.get() + p.dest + done, size_t(p.size - done), p.offset + done);
                    if (n <= 0)
                        break;
                    done += n;
                }
                ::close(fd);
            }
        });
    for (auto &th : pool)
        th.join();
    PeerResult r;
    r.seconds = double(t.nsecsElapsed()) / 1e9;
    r.matches = 0;
    return r;
}

PeerResult runVectorscan(const std::vector<PeerPattern> &patterns, const std::vector<QByteArray> &files, int threads)
{
    PeerResult r;
    std::vector<const char *> exprs;
    std::vector<unsigned> flags, ids;
    for (size_t i = 0; i < patterns.size(); ++i) {
        exprs.push_back(patterns[i].regex.constData());
        flags.push_back((patterns[i].caseless ? HS_FLAG_CASELESS : 0u) | (patterns[i].dotAll ? HS_FLAG_DOTALL : 0u));
        ids.push_back(unsigned(i));
    }
    hs_database_t *db = nullptr;
    hs_compile_error_t *err = nullptr;
    if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), unsigned(exprs.size()), HS_MODE_BLOCK, nullptr, &db,
                         &err)
        != HS_SUCCESS) {
        r.note = QStringLiteral("Vectorscan rejected pattern %1: %2").arg(err->expression).arg(QString::fromUtf8(err->message));
        hs_free_compile_error(err);
        return r;
    }
    std::vector<hs_scratch_t *> scratch(size_t(threads), nullptr);
    for (auto &s : scratch)
        hs_alloc_scratch(db, &s);
    std::atomic<int64_t> matches { 0 };
    r.seconds = parallelFiles(files, threads, [&](int k, const char *data, int64_t n) {
        int64_t local = 0;
        hs_scan(
            db, data, unsigned(n), 0, scratch[size_t(k)],
            [](unsigned, unsigned long long, unsigned long long, unsigned, void *ctx) -> int {
                ++*static_cast<int64_t *>(ctx);
                return 0;
            },
            &local);
        matches += local;
    });
    r.matches = matches;
    for (auto &s : scratch)
        hs_free_scratch(s);
    hs_free_database(db);
    return r;
}

PeerResult runCommand(const QString &program, const QStringList &args)
{
    PeerResult r;
    std::vector<QByteArray> argv8 { QFile::encodeName(program) };
    for (const QString &a : args)
        argv8.push_back(QFile::encodeName(a));
    std::vector<char *> argv;
    for (QByteArray &a : argv8)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    QElapsedTimer t;
    t.start();
    // Closed on exec: reading it waits until the child is the new program (before, its memory is the bench's).
    int execPipe[2];
    if (::pipe2(execPipe, O_CLOEXEC) != 0) {
        r.note = QStringLiteral("pipe failed");
        return r;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(execPipe[0]);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(execPipe[1]);
    if (pid < 0) {
        ::close(execPipe[0]);
        r.note = QStringLiteral("cannot start %1").arg(program);
        return r;
    }
    char byte;
    while (::read(execPipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    ::close(execPipe[0]);
    // wait4's ru_maxrss would be the bench's own: a forked child starts with its parent's resident pages, and
    // exec keeps that high-water mark. The new program's own mark (VmHWM) is read while it runs, every 2 ms.
    int status = 0;
    const QByteArray statusPath = "/proc/" + QByteArray::number(pid) + "/status";
    for (;;) {
        QFile f(QString::fromLatin1(statusPath));
        if (f.open(QIODevice::ReadOnly))
            for (const QByteArray &line : f.readAll().split('\n'))
                if (line.startsWith("VmHWM:"))
                    r.peakRssKiB = std::max<int64_t>(r.peakRssKiB, line.mid(6).trimmed().split(' ').front().toLongLong());
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid || done < 0)
            break;
        ::usleep(2000);
    }
    r.seconds = double(t.nsecsElapsed()) / 1e9;
    // 2 is a finished scan that skipped something (rejected rules, for Hitscope).
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 2))
        r.note = QStringLiteral("%1 failed (status %2)").arg(program).arg(status);
    return r;
}

PeerResult runYara(const QString &yaraRules, const QString &dir, int threads, const QStringList &extra)
{
    PeerResult r;
    const QString yara = QStandardPaths::findExecutable(QStringLiteral("yara"));
    if (yara.isEmpty()) {
        r.note = QStringLiteral("yara not found");
        return r;
    }
    QProcess p;
    QElapsedTimer t;
    t.start();
    p.start(yara, QStringList { QStringLiteral("-r"), QStringLiteral("-w"), QStringLiteral("-p"), QString::number(threads) }
                      + extra + QStringList { yaraRules, dir });
    p.waitForFinished(-1);
    r.seconds = double(t.nsecsElapsed()) / 1e9;
    r.matches = p.readAllStandardOutput().count('\n');
    if (p.exitCode() != 0)
        r.note = QString::fromLocal8Bit(p.readAllStandardError()).trimmed().left(200);
    return r;
}
