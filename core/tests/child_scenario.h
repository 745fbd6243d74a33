// Tests that need their own environment (the library reads it once, at load) run in a child
// process: this same test binary, started again with MEMRA_TEST_CHILD_SCENARIO=<name>, which
// then registers and runs only that scenario (GoogleTest assertions work as usual in it).
//
//   MEMRA_CHILD_SCENARIO(SmallBudget) { ...assertions... }
//   TEST(Suite, Case) { expect_child_passes("SmallBudget", {{"MEMRA_CPU_EXPERT_CACHE_BYTES", "64K"}}); }
//
// Scenarios are not registered in the parent, so ctest lists only the tests that start them.
#pragma once

#include <map>
#include <string>

namespace memra::tests {

using ScenarioFn = void (*)();
bool register_child_scenario(const char *name, ScenarioFn fn);

// Runs the scenario in a child with `env` (and no other MEMRA_CPU_EXPERT_* variable); a test
// failure when it does not pass, with the child's output. Returns the child's stdout (for
// figures a scenario prints).
std::string expect_child_passes(const std::string &name, const std::map<std::string, std::string> &env);

}  // namespace memra::tests

#define MEMRA_CHILD_SCENARIO(name)                                                             \
    static void child_scenario_##name();                                                       \
    [[maybe_unused]] static const bool child_scenario_registered_##name =                     \
        ::memra::tests::register_child_scenario(#name, &child_scenario_##name);                \
    static void child_scenario_##name()
