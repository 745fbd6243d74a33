// Runs the memra-gguf binary in a child process (core/tests/subprocess.h) and gives each test its
// own scratch directory.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "subprocess.h"

namespace memra::gguf_tool::test {

inline tests::ProcessResult gguf_tool(std::vector<std::string> args, const std::map<std::string, std::string> &env = {}) {
    args.insert(args.begin(), MEMRA_GGUF_TOOL);
    return tests::run_process(args, env);
}

// A fresh directory for the running test, removed with the fixture.
class ScratchDir : public testing::Test {
protected:
    void SetUp() override {
        const testing::TestInfo *info = testing::UnitTest::GetInstance()->current_test_info();
        dir_ = std::filesystem::temp_directory_path() /
               ("memra-gguf-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string path(const std::string &name) const { return (dir_ / name).string(); }

    std::filesystem::path dir_;
};

// Failure output is one line: "memra-gguf SUBCOMMAND: reason\n".
inline bool one_line(const std::string &s) {
    return !s.empty() && s.back() == '\n' && s.find('\n') == s.size() - 1;
}

}  // namespace memra::gguf_tool::test
