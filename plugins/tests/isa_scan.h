// A scanner for `objdump -d --no-show-raw-insn` output that flags every instruction a baseline
// x86-64 CPU (SSE2) might not run: anything VEX or EVEX encoded. Used to prove the scalar
// plugin module contains none.
#pragma once

#include <string>
#include <vector>

namespace memra::plugin_tests {

// Non-empty (the reason) when this objdump line is an instruction that needs VEX/EVEX: a %ymm,
// %zmm or %k register, a mnemonic starting with 'v', kmov*, or a VEX-encoded BMI1/BMI2 GPR op
// (andn bextr blsi blsmsk blsr bzhi mulx pdep pext rorx sarx shlx shrx). Empty otherwise,
// including for non-instruction lines.
std::string vex_reason(const std::string &objdump_line);

// The mnemonic of an objdump instruction line (prefixes such as lock / rep / notrack / cs
// skipped), or "" for a line that is not an instruction.
std::string mnemonic_of(const std::string &objdump_line);

struct IsaScan {
    int instructions = 0;                 // instruction lines seen
    std::vector<std::string> offending;   // "line  <- reason"
};
IsaScan scan_disassembly(const std::string &objdump_output);

// Runs a shell command, returns its stdout; *exit_status gets the exit status.
std::string run_command(const std::string &command, int *exit_status);

}  // namespace memra::plugin_tests
