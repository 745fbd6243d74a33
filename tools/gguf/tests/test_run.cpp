// memra-gguf run: its arguments, its agreement with the library called directly on the same
// experts and inputs, memory and file sources giving identical outputs, the scalar check, and the
// cache counters it reports.
#include <cstring>

#include "abi_loader.h"
#include "layer_experts.h"
#include "scalar_check.h"
#include "tool_runner.h"

namespace memra::gguf_tool::test {
namespace {

class Run : public ScratchDir {
protected:
    void SetUp() override {
        ScratchDir::SetUp();
        model_ = path("m.gguf");
        // Three formats of different families in one layer, four experts, two layers.
        const auto r = gguf_tool({"synth", model_, "--n-embd", "512", "--n-ff", "256", "--n-expert", "4", "--layers", "2",
                                  "--qtype-gate", "q4_K", "--qtype-up", "iq4_xs", "--qtype-down", "q8_0", "--seed", "3"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    std::string model_;
};

TEST_F(Run, BadArgumentsAreOneLineErrors) {
    struct Bad {
        std::vector<std::string> args;
        int status;
        const char *reason;
    };
    const std::vector<Bad> cases = {
        {{"run", model_}, 2, "'--layer' is required"},
        {{"run", model_, "--layer", "7"}, 2, "the file has no MoE layer 7 (it has 2: 0..1)"},
        {{"run", model_, "--layer", "0", "--experts", "0,9"}, 1, "expert 9 does not exist: layer 0 has 4"},
        {{"run", model_, "--layer", "0", "--experts", "0,x"}, 2, "--experts: 'x' is not a valid value"},
        {{"run", model_, "--layer", "0", "--experts", "-1"}, 2, "--experts: '-1' is not a valid value"},
        {{"run", model_, "--layer", "0", "--experts", "0,1", "--weights", "1"}, 2, "--weights has 1 values for 2 experts"},
        {{"run", model_, "--layer", "0", "--weights", "nan,1"}, 2, "--weights: 'nan' is not a valid value"},
        {{"run", model_, "--layer", "0", "--source", "disk"}, 2, "--source must be memory or file, not 'disk'"},
        {{"run", model_, "--layer", "0", "--tokens", "0"}, 2, "--tokens must be at least 1"},
        {{"run", model_, "--layer", "0", "--threads", "0"}, 2, "--threads must be at least 1"},
        {{"run", model_, "--layer", "0", "--rows", "65"}, 2, "--rows must be between 1 and 64 (the ABI's limit)"},
        {{"run", model_, "--layer", "0", "--rows", "-1"}, 2, "--rows must be between 1 and 64"},
        {{"run", model_, "--layer", "0", "--rows", "5"}, 2, "--tokens 16 is not a whole number of batches of --rows 5"},
        {{"run", model_, "--layer", "0", "--lib", path("nolib.so")}, 1, "dlopen"},
        {{"run", path("missing.gguf"), "--layer", "0"}, 1, "No such file"},
    };
    for (const Bad &c : cases) {
        const auto r = gguf_tool(c.args);
        EXPECT_EQ(r.exit_code, c.status) << c.args.back() << ": " << r.err;
        EXPECT_TRUE(one_line(r.err)) << r.err;
        EXPECT_NE(r.err.find(c.reason), std::string::npos) << r.err;
    }
}

// The tool's outputs equal, bit for bit, what the library returns when this test builds the same
// CpuExpertV2 records itself and calls memra_cpu_moe_token_v2 on the tool's inputs; the file
// source gives the very same bytes as the memory source.
TEST_F(Run, OutputsEqualDirectLibraryCallsFromMemoryAndFile) {
    const std::vector<std::string> common = {"run", model_, "--layer", "1", "--experts", "3,0,2", "--weights", "0.5,0.25,-0.125",
                                             "--tokens", "5", "--threads", "2", "--no-check", "--lib", MEMRA_TEST_LIBRARY};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = common;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    const auto mem = gguf_tool(with({"--source", "memory", "--dump-inputs", path("in.f32"), "--dump-outputs", path("mem.f32")}));
    ASSERT_EQ(mem.exit_code, 0) << mem.err;
    const auto file = gguf_tool(with({"--source", "file", "--dump-outputs", path("file.f32")}));
    ASSERT_EQ(file.exit_code, 0) << file.err;
    const std::vector<float> inputs = read_floats(path("in.f32")), from_memory = read_floats(path("mem.f32")),
                             from_file = read_floats(path("file.f32"));
    ASSERT_EQ(inputs.size(), 5u * 512);
    ASSERT_EQ(from_memory.size(), 5u * 512);
    EXPECT_EQ(std::memcmp(from_memory.data(), from_file.data(), from_memory.size() * sizeof(float)), 0);

    const gguf::File f(model_);
    const gguf::MoeLayer layer = gguf::find_moe_layers(f.model()).at(1);
    for (WeightSource source : {WeightSource::Memory, WeightSource::File}) {
        const LayerExperts experts(f, layer, {3, 0, 2}, {0.5f, 0.25f, -0.125f}, source);
        memra_testkit_abi abi;
        char error[1024] = "";
        ASSERT_EQ(memra_testkit_abi_open(MEMRA_TEST_LIBRARY, &abi, error, sizeof error), 0) << error;
        std::vector<float> direct(inputs.size());
        for (size_t t = 0; t < 5; ++t)
            ASSERT_EQ(abi.moe_token(experts.data(), experts.count(), inputs.data() + t * 512, direct.data() + t * 512, 2,
                                    error, sizeof error), 0) << error;
        memra_testkit_abi_close(&abi);
        EXPECT_EQ(std::memcmp(direct.data(), from_memory.data(), direct.size() * sizeof(float)), 0)
            << (source == WeightSource::File ? "file" : "memory") << " source";
    }
}

TEST_F(Run, ReportsLatencyCacheAndScalarAgreement) {
    const auto table = gguf_tool({"run", model_, "--layer", "0", "--tokens", "3"});
    ASSERT_EQ(table.exit_code, 0) << table.err;
    for (const char *part : {"layer 0: 4 experts, n_embd 512, n_ff 256, gate q4_K, up iq4_xs, down q8_0", "experts     0:0.5000 1:0.5000",
                             "latency     first ", "median ", "bandwidth   ", "cache       hits 0, misses 0",
                             "scalar      max relative L2 difference", ": pass"})
        EXPECT_NE(table.out.find(part), std::string::npos) << part << "\n" << table.out;

    // From the file: the first token misses on each of the 2 x 3 projections and reads each once;
    // the other two tokens hit. (Counters are deltas over this run.)
    const auto json = gguf_tool({"run", model_, "--layer", "0", "--tokens", "3", "--source", "file", "--json"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    // Per expert: gate q4_K 256 rows x 288 bytes, up iq4_xs 256 x 272, down q8_0 512 x 272.
    const std::string read = "\"read_bytes\":" + std::to_string(2 * (256 * 288 + 256 * 272 + 512 * 272)) + ",";
    EXPECT_NE(json.out.find(read), std::string::npos) << read << "\n" << json.out;
    for (const char *part : {"\"experts\":[0,1]", "\"source\":\"file\"", "\"latency_us\":{\"first\":", "\"gb_per_s\":",
                             "\"cache\":{\"hits\":12,\"misses\":6,", "\"scalar_check\":{\"done\":true,\"max_rel_l2\":0,",
                             "\"identical\":true,\"pass\":true"})
        EXPECT_NE(json.out.find(part), std::string::npos) << part << "\n" << json.out;
}

// --rows M: the same tokens in batches of M through memra_cpu_expert_rows_v2, one call per expert,
// agree with the token call (the same kernels and the same float sum of the experts, in the same
// order: only last-bit noise may differ, kScalarTolerance), from memory and from the file, and the
// scalar check runs the rows path too.
TEST_F(Run, RowsBatchesAgreeWithTheTokenCall) {
    const std::vector<std::string> common = {"run", model_, "--layer", "1", "--experts", "3,0,2", "--weights", "0.5,0.25,-0.125",
                                             "--tokens", "8", "--threads", "2", "--lib", MEMRA_TEST_LIBRARY};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = common;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    const auto token = gguf_tool(with({"--no-check", "--dump-outputs", path("token.f32")}));
    ASSERT_EQ(token.exit_code, 0) << token.err;
    for (const char *source : {"memory", "file"}) {
        const auto rows = gguf_tool(with({"--rows", "4", "--source", source, "--dump-outputs", path("rows.f32"), "--json"}));
        ASSERT_EQ(rows.exit_code, 0) << source << ": " << rows.err;
        for (const char *part : {"\"tokens\":8,\"rows\":4,", "\"scalar_check\":{\"done\":true,", "\"pass\":true"})
            EXPECT_NE(rows.out.find(part), std::string::npos) << part << "\n" << rows.out;
        EXPECT_LE(max_relative_l2(read_floats(path("rows.f32")), read_floats(path("token.f32")), 512), kScalarTolerance) << source;
    }
    const auto table = gguf_tool(with({"--rows", "8", "--no-check"}));
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find(" per batch of 8 rows (one rows call per expert)\n"), std::string::npos) << table.out;
}

// The progress bar appears on request (stderr is a file here, not a terminal, so never otherwise)
// and ends its line.
TEST_F(Run, ProgressBarOnlyWhenAskedOrOnATerminal) {
    const auto quiet = gguf_tool({"run", model_, "--layer", "0", "--tokens", "3", "--no-check"});
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_EQ(quiet.err, "");
    const auto shown = gguf_tool({"run", model_, "--layer", "0", "--tokens", "3", "--no-check", "--progress"});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_NE(shown.err.find("\rrun ["), std::string::npos) << shown.err;
    EXPECT_NE(shown.err.find("] 100% (3/3)\n"), std::string::npos) << shown.err;
}

}  // namespace
}  // namespace memra::gguf_tool::test
