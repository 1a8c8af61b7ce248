// SPDX-License-Identifier: GPL-3.0-or-later
#include "ringreader.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HITSCOPE_HAVE_IO_URING
#include <liburing.h>
#endif

#include "util/logcategories.h"
#include "util/preadfully.h"
#include "util/runtimeswitches.h"

namespace Hitscope {

namespace {
std::atomic<int64_t> g_requestsRead { 0 };

bool disabledByEnvironment()
{
    return RuntimeSwitches::ioUringOff();
}
} // namespace

#ifdef HITSCOPE_HAVE_IO_URING

struct RingReader::Ring
{
    io_uring ring {};
    bool live = false;   // set up: only then is there a ring to close (a failed set-up leaves ring_fd at 0)
    bool broken = false; // a submission failed: what was queued cannot be trusted, plain calls from then on
    // On the heap with the ring, not on read()'s stack: nothing the kernel may still write to goes away first.
    std::array<struct statx, kGroup> stx {};

    ~Ring()
    {
        if (live)
            io_uring_queue_exit(&ring);
    }

    // Queues one operation for each of the first `count` indexes in `which` with prep(sqe, i), submits them and
    // hands each completion to done(i, res). Returns how many the kernel took (the first ones); done() is called
    // for each of those, and for no other.
    template<typename Prep, typename Done>
    int run(const std::array<uint8_t, kGroup> &which, int count, Prep prep, Done done)
    {
        if (count == 0 || broken)
            return 0;
        for (int k = 0; k < count; ++k) {
            io_uring_sqe *sqe = io_uring_get_sqe(&ring);
            prep(sqe, which[k]);
            io_uring_sqe_set_data64(sqe, which[k]);
        }
        int submitted;
        while ((submitted = io_uring_submit_and_wait(&ring, unsigned(count))) == -EINTR) { }
        if (submitted != count) {
            // The rest stay queued, never entered: the ring is not used again.
            broken = true;
            if (submitted <= 0)
                return 0;
        }
        for (int reaped = 0, failures = 0; reaped < submitted;) {
            io_uring_cqe *cqe = nullptr;
            const int r = io_uring_wait_cqe(&ring, &cqe);
            if (r < 0) {
                // Operations the kernel took may still write into the batch's buffer or open files: they are
                // waited for, never redone beside them. No kernel since 5.6 fails here with a ring whose
                // completion queue has room for twice what is in flight.
                if (r != -EINTR && ++failures > 10000) {
                    qCCritical(lcReader, "io_uring gave no completions (%s)", std::strerror(-r));
                    std::abort();
                }
                if (r != -EINTR)
                    std::this_thread::sleep_for(std::chrono::microseconds(100));
                continue;
            }
            done(int(io_uring_cqe_get_data64(cqe)), cqe->res);
            io_uring_cqe_seen(&ring, cqe);
            ++reaped;
        }
        return submitted;
    }
};

namespace {
bool probeRing()
{
    if (disabledByEnvironment())
        return false;
    io_uring ring;
    if (io_uring_queue_init(4, &ring, 0) < 0)
        return false;
    bool ok = false;
    if (io_uring_probe *probe = io_uring_get_probe_ring(&ring)) {
        ok = io_uring_opcode_supported(probe, IORING_OP_OPENAT) && io_uring_opcode_supported(probe, IORING_OP_STATX)
            && io_uring_opcode_supported(probe, IORING_OP_READ) && io_uring_opcode_supported(probe, IORING_OP_CLOSE);
        io_uring_free_probe(probe);
    }
    io_uring_queue_exit(&ring);
    return ok;
}
} // namespace

bool RingReader::available()
{
    static const bool ok = probeRing();
    return ok;
}

RingReader *RingReader::forThisThread()
{
    thread_local std::unique_ptr<RingReader> reader;
    thread_local bool tried = false;
    if (!tried) {
        tried = true;
        if (available()) {
            auto ring = std::make_unique<Ring>();
            // One thread submits and reaps; completions then run in its own io_uring_enter() (Linux 6.1), not
            // in interrupts of whatever it was doing.
            io_uring_params params {};
            params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
            int r = io_uring_queue_init_params(kGroup, &ring->ring, &params);
            if (r == -EINVAL) {
                params = {};
                r = io_uring_queue_init_params(kGroup, &ring->ring, &params);
            }
            ring->live = r == 0;
            if (ring->live)
                reader.reset(new RingReader(std::move(ring)));
        }
    }
    return reader.get();
}

#else

struct RingReader::Ring
{
    std::array<struct statx, kGroup> stx {};
};

bool RingReader::available()
{
    return false;
}

RingReader *RingReader::forThisThread()
{
    return nullptr;
}

#endif

RingReader::RingReader(std::unique_ptr<Ring> ring)
    : m_ring(std::move(ring))
{
}

RingReader::~RingReader() = default;

int64_t RingReader::requestsRead()
{
    return g_requestsRead.load(std::memory_order_relaxed);
}

void RingReader::read(std::span<Request> all)
{
    for (size_t first = 0; first < all.size(); first += kGroup)
        readGroup(all.subspan(first, std::min<size_t>(kGroup, all.size() - first)));
}

void RingReader::open(std::span<Opening> all)
{
    g_requestsRead.fetch_add(int64_t(all.size()), std::memory_order_relaxed);
    for (size_t first = 0; first < all.size(); first += kGroup)
        openGroup(all.subspan(first, std::min<size_t>(kGroup, all.size() - first)));
}

void RingReader::openPlain(std::span<Opening> openings)
{
    for (Opening &o : openings) {
        o.fd = -1;
        o.size = -1;
        const int fd = ::open(o.path, o.openFlags);
        struct stat st {};
        if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            o.error = fd < 0 ? errno : EINVAL;
            if (fd >= 0)
                ::close(fd);
            continue;
        }
        o.error = 0;
        o.fd = fd;
        o.size = int64_t(st.st_size);
    }
}

namespace {
// Which requests of a group the current step is for.
struct Selection
{
    std::array<bool, RingReader::kGroup> pending {}; // the step has not been done for this request yet
    std::array<uint8_t, RingReader::kGroup> which {};
    int count = 0;

    template<typename Wanted>
    void select(int n, Wanted wanted)
    {
        count = 0;
        for (int i = 0; i < n; ++i) {
            pending[i] = wanted(i);
            if (pending[i])
                which[count++] = uint8_t(i);
        }
    }
};
} // namespace

void RingReader::openGroup(std::span<Opening> openings)
{
    const int n = int(openings.size());
    for (Opening &o : openings) {
        o.fd = -1;
        o.size = -1;
        o.error = 0;
    }
    Selection step;
#ifdef HITSCOPE_HAVE_IO_URING
    Ring &ring = *m_ring;
#endif

    step.select(n, [](int) { return true; });
    auto opened = [&](int i, int res) {
        step.pending[i] = false;
        openings[i].fd = res;
        openings[i].error = res < 0 ? -res : 0;
    };
#ifdef HITSCOPE_HAVE_IO_URING
    ring.run(step.which, step.count, [&](io_uring_sqe *sqe, int i) {
        io_uring_prep_openat(sqe, AT_FDCWD, openings[i].path, openings[i].openFlags, 0);
    }, opened);
#endif
    for (int i = 0; i < n; ++i) {
        if (step.pending[i]) {
            const int fd = ::open(openings[i].path, openings[i].openFlags);
            opened(i, fd < 0 ? -errno : fd);
        }
    }

    // What was opened must be a regular file, checked on the descriptor: the path may name something else by now.
    std::array<struct statx, kGroup> &stx = m_ring->stx;
    std::array<bool, kGroup> regular {};
    step.select(n, [&](int i) { return openings[i].fd >= 0; });
    auto checked = [&](int i, int res) {
        step.pending[i] = false;
        regular[i] = res == 0 && S_ISREG(stx[i].stx_mode);
        if (regular[i])
            openings[i].size = int64_t(stx[i].stx_size);
        else
            openings[i].error = EINVAL;
    };
#ifdef HITSCOPE_HAVE_IO_URING
    ring.run(step.which, step.count, [&](io_uring_sqe *sqe, int i) {
        io_uring_prep_statx(sqe, openings[i].fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_TYPE | STATX_SIZE,
                            &stx[i]);
    }, checked);
#endif
    for (int i = 0; i < n; ++i) {
        if (step.pending[i]) {
            struct stat st {};
            const bool ok = ::fstat(openings[i].fd, &st) == 0;
            stx[i].stx_mode = ok ? uint16_t(st.st_mode) : 0;
            stx[i].stx_size = ok ? uint64_t(st.st_size) : 0;
            checked(i, ok ? 0 : -errno);
        }
    }

    // A close the kernel took is never repeated: the number may belong to another thread's file by now.
    step.select(n, [&](int i) { return openings[i].fd >= 0 && !regular[i]; });
#ifdef HITSCOPE_HAVE_IO_URING
    ring.run(step.which, step.count, [&](io_uring_sqe *sqe, int i) { io_uring_prep_close(sqe, openings[i].fd); },
             [&](int i, int) { step.pending[i] = false; });
#endif
    for (int i = 0; i < n; ++i) {
        if (step.pending[i])
            ::close(openings[i].fd);
        if (openings[i].fd >= 0 && !regular[i])
            openings[i].fd = -1;
    }
}

void RingReader::readGroup(std::span<Request> requests)
{
    const int n = int(requests.size());
    g_requestsRead.fetch_add(n, std::memory_order_relaxed);
    for (Request &r : requests) {
        r.opened = false;
        r.error = 0;
        r.got = 0;
    }
    std::array<int, kGroup> fds;
    fds.fill(-1);

    // Open those not open yet.
    std::array<Opening, kGroup> openings;
    std::array<uint8_t, kGroup> opening;
    int toOpen = 0;
    for (int i = 0; i < n; ++i) {
        if (requests[i].fd >= 0) {
            fds[i] = requests[i].fd;
            requests[i].opened = true;
            continue;
        }
        openings[toOpen] = { requests[i].path, requests[i].openFlags };
        opening[toOpen++] = uint8_t(i);
    }
    if (toOpen > 0) {
        openGroup(std::span(openings.data(), size_t(toOpen)));
        for (int k = 0; k < toOpen; ++k) {
            Request &r = requests[opening[k]];
            fds[opening[k]] = openings[k].fd;
            r.opened = openings[k].fd >= 0;
            r.error = openings[k].error;
        }
    }

    Selection step;
#ifdef HITSCOPE_HAVE_IO_URING
    Ring &ring = *m_ring;
#endif
    step.select(n, [&](int i) { return requests[i].opened && requests[i].size > 0; });
    // `res`: what the ring read, or -errno.
    auto readDone = [&](int i, int res) {
        Request &r = requests[i];
        step.pending[i] = false;
        if (res == -EAGAIN || res == -EINTR)
            res = 0;
        if (res < 0) {
            r.got = -1;
            r.error = -res;
            return;
        }
        r.got = res;
        if (res < r.size) {
            // Short: the file ended, or the ring left the rest unread (a kernel may end a read early or with
            // EAGAIN for a file opened O_NONBLOCK, which keeps a FIFO from blocking the open, where its pages are
            // not cached; 6.18 finishes the read itself). A plain read tells which.
            const int64_t more = preadFully(fds[i], r.dst + res, r.size - res, r.offset + res);
            if (more < 0) {
                r.got = -1;
                r.error = errno;
            } else {
                r.got += more;
            }
        }
    };
#ifdef HITSCOPE_HAVE_IO_URING
    ring.run(step.which, step.count, [&](io_uring_sqe *sqe, int i) {
        io_uring_prep_read(sqe, fds[i], requests[i].dst, unsigned(requests[i].size), uint64_t(requests[i].offset));
    }, readDone);
#endif
    for (int i = 0; i < n; ++i) {
        if (step.pending[i])
            readDone(i, 0);
    }

    // A close the kernel took is never repeated: the number may belong to another thread's file by now.
    step.select(n, [&](int i) { return fds[i] >= 0; });
#ifdef HITSCOPE_HAVE_IO_URING
    ring.run(step.which, step.count, [&](io_uring_sqe *sqe, int i) { io_uring_prep_close(sqe, fds[i]); },
             [&](int i, int) { step.pending[i] = false; });
#endif
    for (int i = 0; i < n; ++i) {
        if (step.pending[i])
            ::close(fds[i]);
    }
}

} // namespace Hitscope
