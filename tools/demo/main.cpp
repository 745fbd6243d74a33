// memra-demo: a tour of the library as the engine sees it. It loads libmemra-cpu-experts.so.2
// with dlopen/dlsym (testkit/abi_loader.h), prints which backend serves what, evaluates synthetic
// experts of several formats with the token and the rows call, and compares every result with
// the double-precision references of the testkit. Exit status 0 only if every check passes.
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "abi_loader.h"
#include "accuracy.h"
#include "library_path.h"
#include "problems.h"

namespace po = boost::program_options;
using memra::testkit::ExpertSpec;

namespace {

struct DemoCase {
    const char *name;
    std::vector<ExpertSpec> experts;  // the token call mixes them; the rows call uses the first
};

std::vector<DemoCase> demo_cases() {
    using memra::testkit::uniform_spec;
    return {
        {"q4_K", {uniform_spec(MEMRA_QTYPE_Q4_K, 0.5f), uniform_spec(MEMRA_QTYPE_Q4_K, 0.3f), uniform_spec(MEMRA_QTYPE_Q4_K, 0.2f)}},
        {"q8_0", {uniform_spec(MEMRA_QTYPE_Q8_0, 0.6f), uniform_spec(MEMRA_QTYPE_Q8_0, 0.4f)}},
        {"iq4_xs", {uniform_spec(MEMRA_QTYPE_IQ4_XS, 0.7f), uniform_spec(MEMRA_QTYPE_IQ4_XS, 0.3f)}},
        {"bf16", {uniform_spec(MEMRA_QTYPE_BF16, 1.0f)}},
        {"nvfp4", {uniform_spec(MEMRA_QTYPE_NVFP4, 0.8f), uniform_spec(MEMRA_QTYPE_NVFP4, -0.2f)}},
        {"mixed q4_K/iq4_xs/q6_K",
         {ExpertSpec{MEMRA_QTYPE_Q4_K, MEMRA_QTYPE_IQ4_XS, MEMRA_QTYPE_Q6_K, 1.0f, 1.0f, 0.5f, 0.6f},
          ExpertSpec{MEMRA_QTYPE_BF16, MEMRA_QTYPE_Q8_0, MEMRA_QTYPE_Q2_K, 2.0f, 1.0f, 1.0f, 0.4f}}},
    };
}

constexpr int32_t kEmbd = 512, kFf = 256, kRows = 8;

struct Row {
    std::string name, call;
    memra::testkit::Verdict verdict;
    std::string failure;  // the library's error, when the call itself failed
};

Row run_token(const memra_testkit_abi &abi, const DemoCase &c, int32_t threads, uint64_t seed) {
    const memra::testkit::TokenProblem p = memra::testkit::make_token_problem(c.experts, kEmbd, kFf, seed);
    std::vector<float> out(kEmbd);
    char error[512] = "";
    Row row{c.name, "token x" + std::to_string(c.experts.size()), {}, {}};
    if (abi.moe_token(p.experts.data(), p.experts.count(), p.input.data(), out.data(), threads, error, sizeof error) != 0)
        row.failure = error;
    else
        row.verdict = memra::testkit::judge(memra::testkit::evaluate_token(p.experts.data(), p.experts.count(), p.input.data()), out.data());
    return row;
}

Row run_rows(const memra_testkit_abi &abi, const DemoCase &c, int32_t threads, uint64_t seed) {
    const memra::testkit::RowsProblem p = memra::testkit::make_rows_problem(c.experts[0], kRows, kEmbd, kFf, seed);
    std::vector<float> out(size_t(kRows) * kEmbd);
    char error[512] = "";
    Row row{c.name, "rows " + std::to_string(kRows), {}, {}};
    if (abi.expert_rows(p.experts.data(), p.inputs.data(), kRows, p.route_weights.data(), out.data(), threads, error, sizeof error) != 0)
        row.failure = error;
    else
        row.verdict = memra::testkit::judge(memra::testkit::evaluate_rows(p.experts[0], p.inputs.data(), kRows, p.route_weights.data()), out.data());
    return row;
}

}  // namespace

int main(int argc, char **argv) {
    std::string lib;
    int32_t threads = 2;
    uint64_t seed = 1;
    po::options_description opts("memra-demo: synthetic experts through libmemra-cpu-experts, checked against a double reference");
    opts.add_options()
        ("help,h", "show this help")
        ("lib", po::value(&lib), "library to dlopen (default: $MEMRA_CPU_EXPERT_LIB, else the one beside this program, else the soname)")
        ("threads", po::value(&threads)->default_value(2), "OpenMP threads per call")
        ("seed", po::value(&seed)->default_value(1), "seed of the synthetic weights and inputs");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, opts), vm);
        po::notify(vm);
    } catch (const po::error &e) {
        std::cerr << "memra-demo: " << e.what() << "\n" << opts;
        return 2;
    }
    if (vm.count("help")) {
        std::cout << opts;
        return 0;
    }
    if (lib.empty()) lib = memra::tools::default_library_path();

    memra_testkit_abi abi;
    char error[1024] = "";
    if (memra_testkit_abi_open(lib.c_str(), &abi, error, sizeof error) != 0) {
        std::cerr << "memra-demo: " << error << "\n";
        return 2;
    }
    std::printf("library: %s\n", lib.c_str());
    if (abi.describe) {
        char line[2048];
        abi.describe(line, sizeof line);
        std::printf("%s\n", line);
    }
    std::printf("threads %d, seed %llu, n_embd %d, n_ff %d\n\n", threads, (unsigned long long)seed, kEmbd, kFf);
    std::printf("%-24s %-9s %12s %12s %12s %12s  %s\n", "format", "call", "err(exact)", "tolerance",
                "err(ggml)", "tolerance", "ok");

    bool all_ok = true;
    for (const DemoCase &c : demo_cases()) {
        for (const Row &row : {run_token(abi, c, threads, seed), run_rows(abi, c, threads, seed + 1)}) {
            const bool ok = row.failure.empty() && row.verdict.ok();
            all_ok = all_ok && ok;
            if (!row.failure.empty()) {
                std::printf("%-24s %-9s call failed: %s\n", row.name.c_str(), row.call.c_str(), row.failure.c_str());
                continue;
            }
            const memra::testkit::Verdict &v = row.verdict;
            std::printf("%-24s %-9s %12.3e %12.3e %12.3e %12.3e  %s\n", row.name.c_str(), row.call.c_str(),
                        v.err_exact, v.tol_exact, v.err_quant, v.tol_quant, ok ? "ok" : "FAIL");
        }
    }
    std::printf("\nerr(exact): relative L2 error against the dequantized weights and the f32 input in double;\n"
                "err(ggml):  against the same with activations rounded as ggml does (only float order differs).\n");
    memra_testkit_abi_close(&abi);
    std::printf("%s\n", all_ok ? "all checks passed" : "SOME CHECKS FAILED");
    return all_ok ? 0 : 1;
}
