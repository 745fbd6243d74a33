// The scalar plugin module must run on any x86-64 CPU: no VEX/EVEX instruction anywhere in it
// (scanned in the built memra-backend-scalar.so) and no static constructor (loading it runs none
// of our code). The scanner itself is unit-tested on known lines so that a silent scanner cannot
// pass the module scan.
#include <gtest/gtest.h>

#include "isa_scan.h"

namespace memra::plugin_tests {
namespace {

const std::string kModule = MEMRA_SCALAR_PLUGIN_PATH;

TEST(IsaScanner, FlagsVexAndEvexInstructions) {
    EXPECT_NE(vex_reason("    1a2b:\tvfmadd231ps %ymm1,%ymm2,%ymm3"), "");
    EXPECT_NE(vex_reason("    1a2b:\tvmovss (%rdi),%xmm0"), "");          // VEX on xmm
    EXPECT_NE(vex_reason("    1a2b:\tvpdpbusd %zmm1,%zmm2,%zmm3{%k1}"), "");
    EXPECT_NE(vex_reason("    1a2b:\tkmovw  %k1,%eax"), "");
    EXPECT_NE(vex_reason("    1a2b:\tkandw  %k1,%k2,%k3"), "");
    EXPECT_NE(vex_reason("    1a2b:\tshlx   %eax,%ebx,%ecx"), "");
    EXPECT_NE(vex_reason("    1a2b:\tandn   %rax,%rbx,%rcx"), "");
    EXPECT_NE(vex_reason("    1a2b:\tpext   %rax,%rbx,%rcx"), "");
    EXPECT_NE(vex_reason("    1a2b:\tbzhil  $0x3,(%rax),%ecx"), "");
    EXPECT_NE(vex_reason("    1a2b:\tvzeroupper"), "");
    EXPECT_NE(vex_reason("    1a2b:\tlock vaddps %ymm0,%ymm0,%ymm0"), "");
}

TEST(IsaScanner, AcceptsBaselineInstructions) {
    EXPECT_EQ(vex_reason("    1a2b:\tmulss  %xmm1,%xmm0"), "");
    EXPECT_EQ(vex_reason("    1a2b:\tcvtsi2ss %eax,%xmm0"), "");
    EXPECT_EQ(vex_reason("    1a2b:\tpmaddwd %xmm1,%xmm2"), "");
    EXPECT_EQ(vex_reason("    1a2b:\tmovzbl (%rdi,%rax,1),%edx"), "");
    EXPECT_EQ(vex_reason("    1a2b:\tcall   1030 <fmaf@plt>"), "");
    EXPECT_EQ(vex_reason("    1a2b:\trep stos %rax,%es:(%rdi)"), "");
    EXPECT_EQ(vex_reason("    1a2b:\tshl    %cl,%eax"), "");
    EXPECT_EQ(vex_reason("    1a2b:\tmov    %r8d,0x4(%rsp)"), "");  // %r8d is no %k register
    // Not instructions at all:
    EXPECT_EQ(vex_reason("0000000000001139 <vfoo>:"), "");
    EXPECT_EQ(vex_reason("Disassembly of section .text:"), "");
    EXPECT_EQ(mnemonic_of("    1a2b:\tnotrack jmp *%rax"), "jmp");
}

TEST(IsaScanner, ScanCountsAndCollects) {
    const IsaScan s = scan_disassembly(
        "0000000000001000 <f>:\n"
        "    1000:\tpush   %rbp\n"
        "    1001:\tvfmadd231ps %ymm1,%ymm2,%ymm3\n"
        "    1006:\tret\n");
    EXPECT_EQ(s.instructions, 3);
    ASSERT_EQ(s.offending.size(), 1u);
    EXPECT_NE(s.offending[0].find("vfmadd231ps"), std::string::npos);
}

TEST(ScalarModule, HasNoVexOrEvexInstructions) {
    int status = 0;
    const std::string dis = run_command("objdump -d --no-show-raw-insn '" + kModule + "' 2>&1", &status);
    ASSERT_EQ(status, 0) << dis;
    const IsaScan s = scan_disassembly(dis);
    EXPECT_GT(s.instructions, 1000) << "objdump output does not look like the module's code";
    std::string shown;
    for (size_t i = 0; i < s.offending.size() && i < 20; ++i) shown += s.offending[i] + "\n";
    EXPECT_TRUE(s.offending.empty()) << s.offending.size() << " VEX/EVEX instructions in " << kModule
                                     << ":\n" << shown;
}

TEST(ScalarModule, HasNoStaticConstructors) {
    int status = 0;
    const std::string syms = run_command("nm '" + kModule + "' 2>&1", &status);
    ASSERT_EQ(status, 0) << syms;
    ASSERT_NE(syms.find("memra_backend_entry_v2"), std::string::npos);
    // GCC names the dynamic initialiser of a translation unit _GLOBAL__sub_I_<file>.
    EXPECT_EQ(syms.find("_GLOBAL__sub_I"), std::string::npos) << "a translation unit has a static constructor";
}

}  // namespace
}  // namespace memra::plugin_tests
