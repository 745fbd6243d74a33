#include "isa_scan.h"

#include <cstdio>
#include <regex>
#include <sstream>
#include <sys/wait.h>

namespace memra::plugin_tests {

namespace {

// Instruction prefixes objdump prints as separate words before the mnemonic.
bool is_prefix(const std::string &w) {
    static const char *const kPrefixes[] = {"lock", "rep", "repz", "repe", "repnz", "repne", "notrack", "bnd",
                                            "cs", "ds", "es", "fs", "gs", "ss", "data16", "data32",
                                            "addr32", "addr16", "rex", "rex.W", "xacquire", "xrelease"};
    for (const char *p : kPrefixes)
        if (w == p) return true;
    return false;
}

// "  1234:\tmnemonic operands" -> the text after the tab; "" when the line is no instruction.
std::string instruction_text(const std::string &line) {
    const size_t colon = line.find(":\t");
    if (colon == std::string::npos) return "";
    for (size_t i = 0; i < colon; ++i) {
        const char c = line[i];
        if (!(c == ' ' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return "";
    }
    return line.substr(colon + 2);
}

}  // namespace

std::string mnemonic_of(const std::string &line) {
    std::istringstream words(instruction_text(line));
    for (std::string w; words >> w;)
        if (!is_prefix(w)) return w;
    return "";
}

std::string vex_reason(const std::string &line) {
    const std::string text = instruction_text(line);
    if (text.empty()) return "";
    static const std::regex kWideRegister("%(ymm|zmm)[0-9]+|%k[0-7]\\b");
    if (std::regex_search(text, kWideRegister)) return "uses a ymm/zmm/opmask register";
    const std::string m = mnemonic_of(line);
    if (m.empty()) return "";
    if (m[0] == 'v') return "VEX/EVEX mnemonic '" + m + "'";
    if (m.compare(0, 4, "kmov") == 0) return "opmask move '" + m + "'";
    static const char *const kBmi[] = {"andn", "bextr", "blsi", "blsmsk", "blsr", "bzhi", "mulx",
                                       "pdep", "pext",  "rorx", "sarx", "shlx",   "shrx"};
    for (const char *b : kBmi) {
        const std::string base(b);
        // objdump may add an operand-size suffix (l / q) when the size is not implied.
        if (m == base || m == base + "l" || m == base + "q") return "VEX-encoded BMI op '" + m + "'";
    }
    return "";
}

IsaScan scan_disassembly(const std::string &output) {
    IsaScan r;
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
        if (mnemonic_of(line).empty()) continue;
        ++r.instructions;
        const std::string why = vex_reason(line);
        if (!why.empty()) r.offending.push_back(line + "  <- " + why);
    }
    return r;
}

std::string run_command(const std::string &command, int *exit_status) {
    std::string out;
    FILE *p = popen(command.c_str(), "r");
    if (!p) {
        *exit_status = -1;
        return out;
    }
    char buf[65536];
    for (size_t got; (got = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, got);
    const int st = pclose(p);
    *exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

}  // namespace memra::plugin_tests
