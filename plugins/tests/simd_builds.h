// Which SIMD builds the plugin tests check and how they get each one's table: the plugin modules
// of plugins/backends.table (dlopened like the core does, only when the running CPU has every
// feature the manifest requires) and the test-only build linked in statically (amx_emulated,
// for the tile tests; the emulated-VNNI build is conformance/'s, as a module).
#pragma once

#include <string>
#include <vector>

#include "memra/backend.h"

namespace memra::plugin_tests {

// The rows of plugins/backends.table other than the scalar reference: the shipped plugins, and
// with the test-only builds the SIMD and tile builds.
std::vector<const char *> simd_rows(bool with_test_builds);

// The features a row requires, and the manifest's.
std::vector<std::string> row_features(const std::string &name);
std::vector<std::string> manifest_requires(const std::string &name);

// "" when the CPU (/proc/cpuinfo flags, minus MEMRA_TEST_HIDE_CPU_FEATURES) has all of them,
// else the missing ones.
std::string missing_features(const std::vector<std::string> &features);

// The table of build `name`, or nullptr with *why set; *cpu_lacks says whether the reason is
// only that this machine cannot run the build (a CPU feature, or the OS's AMX tile permission:
// a skip). Anything else (no manifest, a module that does not load, no entry point) is a
// broken plugin, and its tests fail.
const memra_backend_v2 *build_table(const std::string &name, std::string *why, bool *cpu_lacks);

// The preamble of every per-build test: sets `table` to build `name`'s table, or skips the test
// with the reason where this machine cannot run it, or fails it where the build is broken. Call
// from SetUp, or first in a test body and then return when IsSkipped() or HasFatalFailure().
void use_build(const std::string &name, const memra_backend_v2 *&table);

const memra_kernel_v2 *find_kernel(const memra_backend_v2 *t, int32_t qtype);

// Whether a table serves the token path at all (a rows-only build, plugins/amx, does not).
bool serves_token_path(const memra_backend_v2 *t);

// "" when equal bit for bit, else the first differing position and both values.
std::string first_difference(const float *got, const float *want, size_t count);

}  // namespace memra::plugin_tests
