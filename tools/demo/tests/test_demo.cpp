// memra-demo as a person and packaging/tests/test-debs run it: it passes and says which library,
// backend and plugins it used in the lines test-debs greps; every format runs by both calls from
// both weight sources, with the cache and without; a forced SIMD backend is really what gets
// checked against scalar; a library that cannot serve makes it fail (exit 1, SOME CHECKS FAILED);
// bad arguments are one-line errors; --keep leaves a model memra-gguf inspect reads.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "backend_inventory.h"
#include "memra/qtypes.h"
#include "subprocess.h"
#include "timing.h"

namespace {

// The demo model's layers (demo_model.h): 3 projections each, every format of the list once.
constexpr size_t kLayers = (MEMRA_QTYPE_COUNT + 2) / 3;

using memra::tests::ProcessResult;
using memra::tests::run_process;

ProcessResult demo(std::vector<std::string> args, const std::map<std::string, std::string> &env = {}) {
    args.insert(args.begin(), MEMRA_DEMO_TOOL);
    return run_process(args, env);
}

std::vector<std::string> lines(const std::string &text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

// The table's rows: lines starting with a layer number.
std::vector<std::string> table_rows(const std::string &out) {
    std::vector<std::string> rows;
    for (const std::string &l : lines(out))
        if (!l.empty() && l[0] >= '0' && l[0] <= '9') rows.push_back(l);
    return rows;
}

bool one_line(const std::string &s) { return !s.empty() && s.back() == '\n' && s.find('\n') == s.size() - 1; }

TEST(Demo, PassesAndPrintsTheLinesPackagingGreps) {
    const ProcessResult r = demo({"--threads", "2", "--tokens", "3", "--lib", MEMRA_TEST_LIBRARY});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::vector<std::string> l = lines(r.out);
    ASSERT_GE(l.size(), 3u);
    EXPECT_EQ(l[0], std::string("library: ") + MEMRA_TEST_LIBRARY);
    // Line 2, test-debs' summary: the library's describe line, with the backend and the plugins.
    const std::string best = memra::tests::best_usable_backend(MEMRA_TEST_BACKEND_DIR);
    EXPECT_EQ(l[1].rfind("memra-cpu-experts: backend " + best + " (auto); ", 0), 0u) << l[1];
    EXPECT_NE(l[1].find("; plugins: "), std::string::npos) << l[1];
    EXPECT_EQ(l.back(), "all checks passed");

    // kLayers layers, each by the token call then the rows call (one batch of the 3 tokens), each
    // from memory then file; every format of the list; each row checked and passing.
    const std::vector<std::string> rows = table_rows(r.out);
    ASSERT_EQ(rows.size(), 4 * kLayers) << r.out;
    std::string all;
    for (size_t i = 0; i < rows.size(); ++i) {
        EXPECT_NE(rows[i].find(i % 4 < 2 ? " token " : " rows 3 "), std::string::npos) << rows[i];
        EXPECT_NE(rows[i].find(i % 2 ? " file " : " memory "), std::string::npos) << rows[i];
        EXPECT_NE(rows[i].find(" bit-identical "), std::string::npos) << rows[i];
        EXPECT_EQ(rows[i].substr(rows[i].size() - 3), " ok") << rows[i];
        all += rows[i];
    }
    for (const memra_qtype_info &f : memra_qtype_table)
        EXPECT_NE(all.find(std::string(" ") + f.name + " "), std::string::npos) << f.name << "\n" << r.out;
    // The figures are warm medians, and say so (timing.h).
    EXPECT_NE(r.out.find("median of " + std::to_string(memra::demo::kTimedCalls) + " calls of the same experts, after " +
                         std::to_string(memra::demo::kWarmupCalls) + " warm-up calls"),
              std::string::npos)
        << r.out;
    // The file source read the weights it was given: kLayers layers x 2 experts x 3 projections
    // missed once (the first token), then hit on the 2 other tokens and on the rows call.
    const size_t misses = kLayers * 2 * 3;
    EXPECT_NE(r.out.find("file source: cache hits " + std::to_string(3 * misses) + ", misses " + std::to_string(misses) + ", "),
              std::string::npos)
        << r.out;
}

// Every plugin forced in turn: one this CPU runs is what the table says served, and its results
// still equal the scalar backend's; one it cannot run makes every call fail and the demo exit 1
// (so the test asserts something on a CPU that runs no SIMD plugin too). The scalar backend forced
// serves every row itself. The three SIMD plugins must all be installed in the build tree.
TEST(Demo, ChecksTheForcedPluginAgainstScalar) {
    const std::vector<memra::tests::InstalledBackend> all = memra::tests::installed_backends(MEMRA_TEST_BACKEND_DIR);
    // MEMRA_TEST_HIDE_CPU_FEATURES (a smaller CPU played, backend_inventory.h): the library hides them too.
    std::map<std::string, std::string> env;
    if (const char *hide = std::getenv("MEMRA_TEST_HIDE_CPU_FEATURES")) {
        std::istringstream words(hide);
        std::string list;
        for (std::string w; words >> w;) list += (list.empty() ? "" : ",") + w;
        env["MEMRA_CPU_EXPERT_DISABLE_FEATURES"] = list;
    }
    std::set<std::string> seen;
    for (const memra::tests::InstalledBackend &b : all) {
        seen.insert(b.name);
        env["MEMRA_CPU_EXPERT_BACKEND"] = b.name;
        const ProcessResult r = demo({"--tokens", "2", "--lib", MEMRA_TEST_LIBRARY}, env);
        if (!memra::tests::missing_features(b).empty()) {
            EXPECT_EQ(r.exit_code, 1) << b.name << " cannot run here, yet the demo passed\n" << r.out << r.err;
            EXPECT_NE(r.out.find("call failed: memra_cpu_moe_token_v2 returned 5"), std::string::npos) << b.name << "\n" << r.out;
            EXPECT_EQ(lines(r.out).back(), "SOME CHECKS FAILED") << b.name << "\n" << r.out;
            continue;
        }
        ASSERT_EQ(r.exit_code, 0) << b.name << "\n" << r.out << r.err;
        EXPECT_NE(lines(r.out).at(1).find("backend " + b.name + " (forced"), std::string::npos) << r.out;
        const std::vector<std::string> rows = table_rows(r.out);
        EXPECT_EQ(rows.size(), 4 * kLayers) << b.name << "\n" << r.out;
        for (const std::string &row : rows) {
            EXPECT_NE(row.find(" " + b.name + " "), std::string::npos) << b.name << ": " << row;
            EXPECT_NE(row.find(" bit-identical "), std::string::npos) << b.name << ": " << row;
        }
    }
    const std::vector<std::string> &shipped = memra::tests::backend_names();
    EXPECT_EQ(seen, std::set<std::string>(shipped.begin(), shipped.end())) << "plugins in " << MEMRA_TEST_BACKEND_DIR;
}

// With the cache off the file source streams every projection on every call, and still equals
// the memory source bit for bit: kLayers layers x 6 projections x (3 tokens + 1 batch) misses.
TEST(Demo, FileSourceWithoutTheCache) {
    const ProcessResult r = demo({"--tokens", "3", "--lib", MEMRA_TEST_LIBRARY}, {{"MEMRA_CPU_EXPERT_CACHE_BYTES", "0"}});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("file source: cache hits 0, misses " + std::to_string(kLayers * 6 * 4) + ", "), std::string::npos)
        << r.out;
}

// A library that serves nothing (a forced backend that does not exist): every call fails, the
// demo says so per row and exits 1.
TEST(Demo, FailingCallsFailTheDemo) {
    const ProcessResult r = demo({"--tokens", "2", "--lib", MEMRA_TEST_LIBRARY}, {{"MEMRA_CPU_EXPERT_BACKEND", "avx9"}});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("call failed: memra_cpu_moe_token_v2 returned 5"), std::string::npos) << r.out;
    EXPECT_EQ(lines(r.out).back(), "SOME CHECKS FAILED") << r.out;
}

TEST(Demo, BadArgumentsAreOneLineErrors) {
    struct Bad {
        std::vector<std::string> args;
        int status;
        const char *reason;
    };
    const std::string nowhere = "/nonexistent-dir-" + std::to_string(::getpid()) + "/m.gguf";
    const std::vector<Bad> cases = {
        {{"--threads", "0"}, 2, "--threads must be at least 1"},
        {{"--threads", "many"}, 2, "the argument ('many') for option '--threads' is invalid"},
        {{"--tokens", "0"}, 2, "--tokens must be between 1 and 100000"},
        {{"--rows", "0"}, 2, "--rows must be between 1 and 64 (the ABI's limit)"},
        {{"--rows", "65"}, 2, "--rows must be between 1 and 64 (the ABI's limit)"},
        {{"--bogus"}, 2, "unrecognised option '--bogus'"},
        {{"extra"}, 2, "too many positional"},
        {{"--keep"}, 2, "the required argument for option '--keep' is missing"},
        {{"--model", "m.gguf"}, 2, "--scalar-child and --model go together"},
        {{"--lib", "/nonexistent/libmemra.so"}, 1, "dlopen(/nonexistent/libmemra.so)"},
        {{"--keep", nowhere, "--lib", MEMRA_TEST_LIBRARY}, 1, nowhere.c_str()},
    };
    for (const Bad &c : cases) {
        const ProcessResult r = demo(c.args);
        EXPECT_EQ(r.exit_code, c.status) << c.args[0] << ": " << r.err;
        EXPECT_TRUE(one_line(r.err)) << c.args[0] << ": " << r.err;
        EXPECT_EQ(r.err.rfind("memra-demo: ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find(c.reason), std::string::npos) << c.args[0] << ": " << r.err;
    }
}

TEST(Demo, HelpHasExamples) {
    const ProcessResult r = demo({"--help"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const char *part : {"--threads", "--tokens", "--rows", "--keep", "--lib", "examples:\n  memra-demo "})
        EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
    EXPECT_EQ(r.out.find("scalar-child"), std::string::npos) << "the child's protocol is not for people";
}

// --keep FILE: the model stays, and memra-gguf inspect (an independent reader of the file) finds
// four usable MoE layers that between them use every format.
TEST(Demo, KeptModelIsReadableByMemraGgufInspect) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("memra-demo-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string model = (dir / "demo.gguf").string();
    const ProcessResult r = demo({"--keep", model, "--tokens", "1", "--lib", MEMRA_TEST_LIBRARY});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("model: " + model + ": " + std::to_string(kLayers) + " MoE layers x 4 experts, n_embd 512, n_ff 256, all " +
                         std::to_string(MEMRA_QTYPE_COUNT) + " formats"),
              std::string::npos)
        << r.out;
    const ProcessResult inspect = run_process({MEMRA_GGUF_TOOL, "inspect", model, "--json"});
    std::filesystem::remove_all(dir);
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    for (const std::string &part : {"\"tensor_count\":" + std::to_string(3 * kLayers), std::string("{\"layer\":3,\"n_expert\":4,\"n_embd\":512,\"n_ff\":256,\"gate\":\"iq3_s\"")})
        EXPECT_NE(inspect.out.find(part), std::string::npos) << part << "\n" << inspect.out;
    EXPECT_EQ(inspect.out.find("\"supported\":false"), std::string::npos) << inspect.out;
    for (const memra_qtype_info &f : memra_qtype_table)
        EXPECT_NE(inspect.out.find(std::string("{\"type\":\"") + f.name + "\",\"tensors\":"), std::string::npos)
            << f.name << "\n" << inspect.out;
}

}  // namespace
