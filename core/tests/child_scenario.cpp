#include "child_scenario.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "subprocess.h"

namespace memra::tests {
namespace {

constexpr const char *kScenarioVariable = "MEMRA_TEST_CHILD_SCENARIO";

class Scenario : public ::testing::Test {
public:
    explicit Scenario(ScenarioFn fn) : fn_(fn) {}
    void TestBody() override { fn_(); }

private:
    ScenarioFn fn_;
};

}  // namespace

bool register_child_scenario(const char *name, ScenarioFn fn) {
    const char *wanted = std::getenv(kScenarioVariable);
    if (!wanted || std::string(wanted) != name) return false;
    ::testing::RegisterTest("ChildScenario", name, nullptr, nullptr, __FILE__, __LINE__,
                            [fn]() -> ::testing::Test * { return new Scenario(fn); });
    return true;
}

std::string expect_child_passes(const std::string &name, const std::map<std::string, std::string> &env) {
    std::map<std::string, std::string> child_env = env;
    child_env[kScenarioVariable] = name;
    const ProcessResult r =
        run_process({"/proc/self/exe", "--gtest_filter=ChildScenario." + name}, child_env);
    const bool ran = r.out.find("[  PASSED  ] 1 test") != std::string::npos;
    EXPECT_TRUE(r.exit_code == 0 && ran) << "scenario " << name << ": exit " << r.exit_code << " signal "
                                         << r.signal << "\nstdout:\n" << r.out << "stderr:\n" << r.err;
    return r.out;
}

}  // namespace memra::tests
