// The backends of the build tree as the conformance suites see them (the core's own loader on
// the build's backend directories, minus MEMRA_CPU_EXPERT_DISABLE_FEATURES), and the one
// preamble every per-backend test starts with.
#pragma once

#include <string>
#include <vector>

#include "backends.h"

namespace memra::conformance {

const BackendSet &build_backends();

// The plugin names of every subject, runnable here or not (the tests' parameters).
std::vector<std::string> subject_names();

// Sets `reference` and `subject` to the scalar plugin and the runnable backend `plugin_name`;
// skips the test with the loader's reason where only a CPU feature it needs is missing here, and
// fails it where the backend is missing or broken. Call from SetUp (or first in a test body,
// then return when IsSkipped() or HasFatalFailure()).
void use_backend(const std::string &plugin_name, const Backend *&reference, const Backend *&subject);

}  // namespace memra::conformance
