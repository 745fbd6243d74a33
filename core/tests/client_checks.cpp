#include "client_checks.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>

#include "formats.h"

namespace memra::tests {

ProcessResult run_client(const std::map<std::string, std::string> &env, const std::string &library,
                         const std::string &client) {
    return run_process({client, library}, env);
}

std::string describe_of(const ProcessResult &r) {
    const std::string tag = "describe: ";
    const size_t at = r.out.find(tag);
    if (at == std::string::npos) return "";
    return r.out.substr(at + tag.size(), r.out.find('\n', at) - at - tag.size());
}

std::string show(const ProcessResult &r) {
    return "exit " + std::to_string(r.exit_code) + " signal " + std::to_string(r.signal) +
           "\nstdout:\n" + r.out + "stderr:\n" + r.err;
}

bool printable(const std::string &s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

void expect_serves(const ProcessResult &r, const std::string &backend, const std::string &how) {
    ASSERT_EQ(r.exit_code, 0) << show(r);
    const std::string line = describe_of(r);
    EXPECT_TRUE(printable(line)) << line;
    EXPECT_EQ(line.rfind("memra-cpu-experts: backend " + backend + " (" + how + ")", 0), 0u) << line;
    for (int32_t q : expertkit::all_qtypes())
        EXPECT_NE(line.find(expertkit::qtype_name(q)), std::string::npos) << "no " << expertkit::qtype_name(q) << " in: " << line;
}

void expect_unusable(const ProcessResult &r, const std::vector<std::string> &mentions) {
    ASSERT_EQ(r.signal, 0) << show(r);
    ASSERT_EQ(r.exit_code, kExitNoBackend) << show(r);
    EXPECT_EQ(describe_of(r).rfind("memra-cpu-experts: unusable: ", 0), 0u) << show(r);
    const std::string failure = r.out.substr(r.out.find("token: status 5"));
    for (const std::string &m : mentions) EXPECT_NE(failure.find(m), std::string::npos) << "no '" << m << "' in: " << failure;
}

TempDir::TempDir() {
    char templ[] = "/tmp/memra-selection-XXXXXX";
    path = mkdtemp(templ);
}

TempDir::~TempDir() { std::filesystem::remove_all(path); }

}  // namespace memra::tests
