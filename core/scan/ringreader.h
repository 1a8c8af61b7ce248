// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <span>

namespace Hitscope {

/**
 * Opens, checks and reads small files through io_uring, a group of them per system call. Reading a file with
 * plain calls takes four (open, fstat, pread, close), and in a 2-core VM each cost 1.2-1.5 us in entry and exit
 * alone, about as much as copying 20 KiB; a ring takes four calls for a group of up to kGroup files.
 *
 * One reader per thread (forThisThread()). Where the kernel refuses io_uring (before 5.6, seccomp filters in
 * containers, kernel.io_uring_disabled) or HITSCOPE_IO_URING=0 is set, there is none, and callers read with
 * plain calls; so does read() itself for any step the ring could not take.
 */
class RingReader
{
public:
    static constexpr int kGroup = 32;

    struct Request
    {
        const char *path = nullptr;
        int openFlags = 0;
        /// Already open (by open()): read from this descriptor, not `path`. The reader closes it.
        int fd = -1;
        uint8_t *dst = nullptr;
        int64_t size = 0; // bytes wanted; fewer where the file ends first
        int64_t offset = 0;

        bool opened = false; ///< opened, and a regular file
        int error = 0;       ///< the open's errno (EINVAL: not a regular file), or the read's
        int64_t got = 0;     ///< bytes read; -1 after a read error
    };

    /// The calling thread's reader, made on first use; nullptr where io_uring cannot be used.
    static RingReader *forThisThread();
    /// A file to open and size without reading it yet.
    struct Opening
    {
        const char *path = nullptr;
        int openFlags = 0;

        int fd = -1;       ///< open, and a regular file; the caller owns it (or hands it to read())
        int64_t size = -1; ///< its size then
        int error = 0;     ///< the open's errno (EINVAL: not a regular file)
    };

    /// Whether this process can use io_uring for reading (tested once).
    static bool available();
    /// Requests (files to open with open(), to read with read()) that rings took in this process so far (for
    /// tests: proof that the ring was used).
    static int64_t requestsRead();

    ~RingReader();
    RingReader(const RingReader &) = delete;
    RingReader &operator=(const RingReader &) = delete;

    /// Reads the requests, kGroup at a time, as open(), fstat(), pread() and close() would, and closes every
    /// file it opened. A file that is not regular (swapped for a FIFO or a folder since the walk) is not read.
    void read(std::span<Request> requests);

    /// Opens the files, kGroup at a time, as open() and fstat() would, and keeps the regular ones open: a walk
    /// that did not stat each file learns the sizes here, and reads the same files later without opening them
    /// again (Request::fd).
    void open(std::span<Opening> openings);

    /// open() with plain calls, where there is no ring.
    static void openPlain(std::span<Opening> openings);

private:
    void readGroup(std::span<Request> requests);
    void openGroup(std::span<Opening> openings);

    struct Ring;
    explicit RingReader(std::unique_ptr<Ring> ring);

    std::unique_ptr<Ring> m_ring;
};

} // namespace Hitscope
