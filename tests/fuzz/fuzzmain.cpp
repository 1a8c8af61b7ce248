// SPDX-License-Identifier: GPL-3.0-or-later
// The fuzz targets' main() where libFuzzer is not there (GCC): it runs LLVMFuzzerTestOneInput over every file
// of a seed corpus, then over random mutations of them, for a time or a number of runs. There is no coverage
// feedback, so it finds less than libFuzzer; it is what runs in CI, with the same seed every time.
//
//   fuzz_TARGET CORPUS SECONDS [SEED [RUNS]]
//
// CORPUS is a folder of seeds or one file (to replay a crash); SECONDS 0 only replays; RUNS 0 means no limit.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define FUZZMAIN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZMAIN_SANITIZED 1
#endif
#endif
#ifdef FUZZMAIN_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

using Bytes = std::vector<uint8_t>;

// As libFuzzer's -max_len in CI: small inputs run many times more often.
constexpr size_t kMaxLength = 4096;

// Tokens of both targets' languages (tests/fuzz/yara.dict holds more, for libFuzzer): random bytes seldom make
// a keyword, and most of the front end is behind one.
const char *const kDictionary[] = {
    "rule ", "private ", "global ", "import \"pe\"\n", "include \"x.yar\"\n", "meta:", "strings:", "condition:",
    " and ", " or ", "not ", "defined ", " of ", " them", "all", "any", "none", "for ", " in ", "(0..10)", " at ",
    "filesize", "entrypoint", "#a", "@a[1]", "!a[1]", "$a", "$a*", "$*", "(rule*)", "50%", "uint16be(0)",
    "int32(4)", "contains", "icontains", "startswith", "istartswith", "endswith", "iendswith", "iequals",
    "matches", " nocase", " wide", " ascii", " fullword", " private", " xor", " xor(1-5)", " base64",
    " base64wide", "\"", "{", "}", "[2]", "[1-3]", "[4-]", "??", "?A", "( 01 | 02 )", "/", "/is", "\\x00", "\\",
    "0x10", "1KB", "2MB", "0o17", "1.5", "==", "!=", "<=", ">=", "<<", ">>", "..", "//", "/*", "*/", "(?:", "(",
    ")", "[^", "[a-z]", "]", "|", "*", "+", "?", "*?", "{1000}", "{2,5}", "{3,}", "\\b", "\\B", "\\w", "\\d", "\\s",
    "^", "$", ".", "[[:alpha:]]",
};

// The input being run, written out by the crash handler so that the crash can be replayed.
const uint8_t *g_current = nullptr;
size_t g_currentSize = 0;

void writeCurrentInput()
{
    const int fd = ::open("fuzz-crash-input", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    size_t written = 0;
    while (written < g_currentSize) {
        const ssize_t n = ::write(fd, g_current + written, g_currentSize - written);
        if (n <= 0)
            break;
        written += size_t(n);
    }
    ::close(fd);
    static const char message[] = "\nfuzzmain: the input that crashed is in ./fuzz-crash-input\n";
    (void)!::write(STDERR_FILENO, message, sizeof message - 1);
}

#ifndef FUZZMAIN_SANITIZED
void onCrashSignal(int signal)
{
    writeCurrentInput();
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}
#endif

void installCrashHandlers()
{
#ifdef FUZZMAIN_SANITIZED
    // The sanitizers handle the signals themselves and report before they exit: own handlers would hide that.
    __sanitizer_set_death_callback(writeCurrentInput);
#else
    for (const int signal : { SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTRAP })
        std::signal(signal, onCrashSignal);
#endif
}

int runOne(const Bytes &input)
{
    g_current = input.data();
    g_currentSize = input.size();
    return LLVMFuzzerTestOneInput(input.data(), input.size());
}

Bytes readFile(const std::filesystem::path &path)
{
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class Mutator
{
public:
    Mutator(const std::vector<Bytes> &corpus, uint64_t seed)
        : m_corpus(corpus)
        , m_random(seed)
    {
    }

    Bytes next()
    {
        Bytes out = m_corpus.empty() ? Bytes() : m_corpus[below(m_corpus.size())];
        // Several small edits at once: one edit mostly leaves a seed valid, several reach the error paths.
        const size_t edits = 1 + below(6);
        for (size_t i = 0; i < edits; ++i)
            mutate(out);
        if (out.size() > kMaxLength)
            out.resize(kMaxLength);
        return out;
    }

private:
    size_t below(size_t n) { return n == 0 ? 0 : size_t(m_random() % n); }

    void mutate(Bytes &out)
    {
        switch (below(8)) {
        case 0: // flip a bit
            if (!out.empty())
                out[below(out.size())] ^= uint8_t(1u << below(8));
            break;
        case 1: // set a byte to anything
            if (!out.empty())
                out[below(out.size())] = uint8_t(m_random());
            break;
        case 2: { // insert random bytes
            const size_t at = below(out.size() + 1);
            const size_t n = 1 + below(8);
            for (size_t k = 0; k < n; ++k)
                out.insert(out.begin() + std::ptrdiff_t(at), uint8_t(m_random()));
            break;
        }
        case 3: { // delete a range
            if (out.empty())
                break;
            const size_t at = below(out.size());
            const size_t n = std::min(out.size() - at, 1 + below(16));
            out.erase(out.begin() + std::ptrdiff_t(at), out.begin() + std::ptrdiff_t(at + n));
            break;
        }
        case 4: { // duplicate a range (repeats, nesting)
            if (out.empty())
                break;
            const size_t at = below(out.size());
            const size_t n = std::min(out.size() - at, 1 + below(32));
            const Bytes piece(out.begin() + std::ptrdiff_t(at), out.begin() + std::ptrdiff_t(at + n));
            out.insert(out.begin() + std::ptrdiff_t(below(out.size() + 1)), piece.begin(), piece.end());
            break;
        }
        case 5: { // splice: this input's head with another seed's tail
            if (m_corpus.empty())
                break;
            const Bytes &other = m_corpus[below(m_corpus.size())];
            out.resize(below(out.size() + 1));
            const size_t from = below(other.size() + 1);
            out.insert(out.end(), other.begin() + std::ptrdiff_t(from), other.end());
            break;
        }
        case 6: // a number at its edge
            insertText(out, std::to_string(std::vector<int64_t> { 0, -1, 1, 255, 256, 1000, 1001, 65535, 2147483647,
                                                                  -2147483648LL, 9223372036854775807LL }[below(11)]));
            break;
        default:
            insertText(out, kDictionary[below(std::size(kDictionary))]);
            break;
        }
    }

    void insertText(Bytes &out, const std::string &text)
    {
        out.insert(out.begin() + std::ptrdiff_t(below(out.size() + 1)), text.begin(), text.end());
    }

    const std::vector<Bytes> &m_corpus;
    std::mt19937_64 m_random;
};

} // namespace

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        std::fprintf(stderr, "usage: %s CORPUS SECONDS [SEED [RUNS]]\n", argv[0]);
        return 2;
    }
    const std::filesystem::path corpusPath = argv[1];
    const double seconds = std::strtod(argv[2], nullptr);
    const uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 0) : 1;
    const uint64_t maxRuns = argc > 4 ? std::strtoull(argv[4], nullptr, 0) : 0;
    installCrashHandlers();

    std::vector<std::filesystem::path> files;
    std::error_code error;
    if (std::filesystem::is_directory(corpusPath, error)) {
        for (const auto &entry : std::filesystem::directory_iterator(corpusPath, error))
            if (entry.is_regular_file())
                files.push_back(entry.path());
    } else if (std::filesystem::is_regular_file(corpusPath, error)) {
        files.push_back(corpusPath);
    }
    if (files.empty()) {
        std::fprintf(stderr, "%s: no input in %s\n", argv[0], corpusPath.c_str());
        return 2;
    }
    // Sorted, so that the same seed gives the same runs whatever order the folder lists them in.
    std::sort(files.begin(), files.end());

    std::vector<Bytes> corpus;
    for (const auto &file : files) {
        corpus.push_back(readFile(file));
        runOne(corpus.back());
    }
    std::printf("replayed %zu inputs from %s\n", corpus.size(), corpusPath.c_str());

    Mutator mutator(corpus, seed);
    const auto begin = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    };
    uint64_t runs = 0;
    while (elapsed() < seconds && (maxRuns == 0 || runs < maxRuns)) {
        runOne(mutator.next());
        ++runs;
    }
    const double took = elapsed();
    std::printf("%llu mutated runs in %.1f s (%.0f/s), seed %llu: no crash\n", static_cast<unsigned long long>(runs),
                took, took > 0 ? double(runs) / took : 0.0, static_cast<unsigned long long>(seed));
    return 0;
}
