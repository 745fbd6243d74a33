// memra-abi-client (the engine's way in: dlopen + dlsym) run in a child process with a given
// environment, and what the environment suites check of it: the library reads its environment
// once, at load, so each case needs a process of its own.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "subprocess.h"

namespace memra::tests {

constexpr int kExitNoBackend = 10 + 5;  // memra-abi-client: 10 + MEMRA_STATUS_NO_BACKEND

// memra-abi-client on `library` (default: the build tree's) with `env` as its only
// MEMRA_CPU_EXPERT_* variables; `client` replaces the program (e.g. a setgid copy).
ProcessResult run_client(const std::map<std::string, std::string> &env,
                         const std::string &library = MEMRA_TEST_LIBRARY,
                         const std::string &client = MEMRA_TEST_ABI_CLIENT);

// The library's describe line as the client printed it ("" when none).
std::string describe_of(const ProcessResult &r);

// Everything about a run, for a failure message.
std::string show(const ProcessResult &r);

// Text a person reads in a log: printable ASCII, no control or binary bytes.
bool printable(const std::string &s);

// A usable configuration: both calls pass and the describe line names the backend, how it was
// chosen ("auto" or "forced by MEMRA_CPU_EXPERT_BACKEND"), and every qtype it serves.
void expect_serves(const ProcessResult &r, const std::string &backend, const std::string &how);

// An unusable configuration: every call fails with status 5 (never a crash), the describe line
// says why, and the failure message contains each of `mentions`.
void expect_unusable(const ProcessResult &r, const std::vector<std::string> &mentions);

// A fresh empty directory (mkdtemp: mode 0700), removed again at the end of the test.
struct TempDir {
    std::filesystem::path path;
    TempDir();
    ~TempDir();
};

}  // namespace memra::tests
