// Runs a program in a child process with its own environment and collects what it printed:
// the library reads its environment once when it loads, so each environment needs a process.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace memra::tests {

struct ProcessResult {
    int exit_code = -1;  // -1 when it did not exit normally (then `signal` says why)
    int signal = 0;
    std::string out, err;
};

// argv[0] is the program path. The child inherits this process's environment minus every
// MEMRA_CPU_EXPERT_* variable, plus `env` (so a test states all the settings it depends on).
ProcessResult run_process(const std::vector<std::string> &argv,
                          const std::map<std::string, std::string> &env = {});

}  // namespace memra::tests
