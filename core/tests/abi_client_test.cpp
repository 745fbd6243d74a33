// The engine's way in: memra-abi-client dlopens the library (it links nothing of the project),
// resolves every symbol by name, and checks a token and a rows call on built-in data.
#include <gtest/gtest.h>

#include "subprocess.h"

namespace memra::tests {
namespace {

TEST(AbiClient, LoadsByPathAndComputesCorrectly) {
    const ProcessResult r = run_process({MEMRA_TEST_ABI_CLIENT, MEMRA_TEST_LIBRARY});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("describe: memra-cpu-experts: backend "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nok\n"), std::string::npos) << r.out;
}

TEST(AbiClient, TakesTheLibraryFromTheEnvironment) {
    const ProcessResult r = run_process({MEMRA_TEST_ABI_CLIENT}, {{"MEMRA_CPU_EXPERT_LIB", MEMRA_TEST_LIBRARY}});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(AbiClient, ReportsALibraryThatCannotBeLoaded) {
    const ProcessResult r = run_process({MEMRA_TEST_ABI_CLIENT, "/nonexistent/libmemra-cpu-experts.so.2"});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.out.find("dlopen"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace memra::tests
