// memra-gguf run: its arguments, its agreement with the library called directly on the same
// experts and inputs, memory and file sources giving identical outputs, the scalar check, and the
// cache counters it reports.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

#include "abi_loader.h"
#include "json.h"
#include "memra/cpu_experts.h"
#include "scalar_check.h"
#include "tool_runner.h"

namespace memra::gguf_tool::test {
namespace {

// Rows against token calls: CONTRACT.md promises the same bits only for one call repeated, so this
// admits the float rounding of a reordered expert sum: 3 experts, each term off by at most one
// rounding (u = 2^-24 ~ 6e-8) of its own size, 2 additions: relative L2 <= ~4u ~ 2.4e-7 for
// terms of one sign, more under cancellation; 1e-6 leaves a factor of 4 for that. (Today: 0.)
constexpr double kRowsVsToken = 1e-6;

// The scalar check passes only bit for bit: one ulp off in one value of one token fails it.
TEST(ScalarCheck, OneUlpFails) {
    std::vector<float> reference(2 * 512);
    for (size_t i = 0; i < reference.size(); ++i) reference[i] = std::ldexp(float(i % 97) - 48.0f, -5);
    EXPECT_TRUE(compare_with_scalar(reference, reference, 512).pass());
    std::vector<float> off = reference;
    off[700] = std::nextafter(off[700], 1e30f);
    const Agreement a = compare_with_scalar(off, reference, 512);
    EXPECT_FALSE(a.identical);
    EXPECT_GT(a.max_rel_l2, 0.0);
    EXPECT_LT(a.max_rel_l2, 1e-6) << "a one-ulp difference, which a 1e-6 tolerance let through";
    EXPECT_FALSE(a.pass());
}

// The reference side of the direct-call test, written from the GGUF v3 specification and ggml's
// block sizes, sharing no code with the tool (its reader, memra_gguf, and its LayerExperts): the
// file's tensor table read byte by byte, each expert's slice of a merged [in, out, n_expert]
// tensor computed here.
struct RawTensor {
    uint32_t ggml_type = 0;
    std::vector<uint64_t> dims;  // ne[0] (in_features), ne[1] (out_features), ne[2] (experts)
    uint64_t offset = 0;         // from the start of the data section
};
struct RawGguf {
    std::string bytes;
    uint64_t data_start = 0;
    std::map<std::string, RawTensor> tensors;
};

RawGguf read_gguf_by_hand(const std::string &path) {
    RawGguf g;
    std::ifstream in(path, std::ios::binary);
    g.bytes.assign(std::istreambuf_iterator<char>(in), {});
    size_t at = 0;
    auto take = [&](size_t n) {
        if (at + n > g.bytes.size()) throw std::runtime_error(path + ": truncated");
        const char *p = g.bytes.data() + at;
        at += n;
        return p;
    };
    auto u32 = [&] { uint32_t v; std::memcpy(&v, take(4), 4); return v; };
    auto u64 = [&] { uint64_t v; std::memcpy(&v, take(8), 8); return v; };
    auto str = [&] { const uint64_t n = u64(); return std::string(take(n), n); };
    // Value sizes of GGUF's scalar types (0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 f32, 7 bool,
    // 10 u64, 11 i64, 12 f64); 8 is a string, 9 an array.
    auto scalar_size = [](uint32_t t) -> size_t {
        static const size_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
        return t < 13 ? sizes[t] : 0;
    };
    if (std::string(take(4), 4) != "GGUF") throw std::runtime_error(path + ": not GGUF");
    if (u32() != 3) throw std::runtime_error(path + ": not GGUF version 3");
    const uint64_t n_tensors = u64(), n_kv = u64();
    uint64_t alignment = 32;
    for (uint64_t i = 0; i < n_kv; ++i) {
        const std::string key = str();
        const uint32_t type = u32();
        if (type == 8) {
            str();
        } else if (type == 9) {
            const uint32_t elem = u32();
            const uint64_t count = u64();
            for (uint64_t k = 0; k < count; ++k)
                if (elem == 8) str(); else take(scalar_size(elem));
        } else if (key == "general.alignment" && type == 4) {
            alignment = u32();
        } else {
            if (scalar_size(type) == 0) throw std::runtime_error(path + ": unknown value type");
            take(scalar_size(type));
        }
    }
    for (uint64_t i = 0; i < n_tensors; ++i) {
        const std::string name = str();
        RawTensor t;
        const uint32_t n_dims = u32();
        for (uint32_t d = 0; d < n_dims; ++d) t.dims.push_back(u64());
        t.ggml_type = u32();
        t.offset = u64();
        g.tensors[name] = t;
    }
    g.data_start = (at + alignment - 1) / alignment * alignment;
    return g;
}

// ggml's block geometry of the formats the fixture's model uses: {elements, bytes} per block.
std::pair<uint64_t, uint64_t> ggml_block(uint32_t ggml_type) {
    switch (ggml_type) {
    case 8: return {32, 34};     // Q8_0: f16 scale + 32 int8
    case 12: return {256, 144};  // Q4_K: f16 d, f16 dmin, 12 bytes of scales, 128 bytes of nibbles
    case 23: return {256, 136};  // IQ4_XS: f16 d, u16 scales_h, 4 bytes scales_l, 128 bytes
    default: throw std::runtime_error("the fixture uses no ggml type " + std::to_string(ggml_type));
    }
}

// Expert e's projection of tensor `name`: its rows are out_features consecutive rows of the merged
// tensor starting at row e * out_features; from memory (a pointer into g.bytes) or from fd.
CpuProjectionV2 expert_projection(const RawGguf &g, const std::string &name, uint32_t e, int fd) {
    const RawTensor &t = g.tensors.at(name);
    if (t.dims.size() != 3 || e >= t.dims[2]) throw std::runtime_error(name + ": not a merged expert tensor");
    const auto [elems, block_bytes] = ggml_block(t.ggml_type);
    const uint64_t row_bytes = t.dims[0] / elems * block_bytes, bytes = row_bytes * t.dims[1];
    const uint64_t at = g.data_start + t.offset + uint64_t(e) * bytes;
    if (at + bytes > g.bytes.size()) throw std::runtime_error(name + ": slice past the end of the file");
    CpuProjectionV2 p{};
    p.qtype = int32_t(t.ggml_type);
    p.in_features = int32_t(t.dims[0]);
    p.out_features = int32_t(t.dims[1]);
    p.row_bytes = row_bytes;
    p.byte_len = bytes;
    p.scale = 1.0f;
    p.weights = fd >= 0 ? nullptr : reinterpret_cast<const uint8_t *>(g.bytes.data()) + at;
    p.file_fd = fd;
    p.file_offset = fd >= 0 ? at : 0;
    return p;
}

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

// The tool's outputs equal, bit for bit, what the library returns when this test builds the
// CpuExpertV2 records itself (read_gguf_by_hand, expert_projection: none of the tool's layout
// code) and calls memra_cpu_moe_token_v2 on the tool's inputs; the file source gives the very same
// bytes as the memory source.
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

    const RawGguf g = read_gguf_by_hand(model_);
    const int fd = ::open(model_.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    for (const bool from_file : {false, true}) {
        std::vector<CpuExpertV2> experts;
        const uint32_t ids[] = {3, 0, 2};
        const float weights[] = {0.5f, 0.25f, -0.125f};
        for (int i = 0; i < 3; ++i) {
            CpuExpertV2 e{};
            e.gate = expert_projection(g, "blk.1.ffn_gate_exps.weight", ids[i], from_file ? fd : -1);
            e.up = expert_projection(g, "blk.1.ffn_up_exps.weight", ids[i], from_file ? fd : -1);
            e.down = expert_projection(g, "blk.1.ffn_down_exps.weight", ids[i], from_file ? fd : -1);
            e.route_weight = weights[i];
            experts.push_back(e);
        }
        // The fixture's shapes and formats, as synth was asked for them.
        EXPECT_EQ(experts[0].gate.qtype, 12);
        EXPECT_EQ(experts[0].up.qtype, 23);
        EXPECT_EQ(experts[0].down.qtype, 8);
        EXPECT_EQ(experts[0].gate.in_features, 512);
        EXPECT_EQ(experts[0].gate.out_features, 256);
        EXPECT_EQ(experts[0].down.out_features, 512);
        memra_loaded_abi abi;
        char error[1024] = "";
        ASSERT_EQ(memra_loaded_abi_open(MEMRA_TEST_LIBRARY, &abi, error, sizeof error), 0) << error;
        std::vector<float> direct(inputs.size());
        for (size_t t = 0; t < 5; ++t)
            ASSERT_EQ(abi.moe_token(experts.data(), int32_t(experts.size()), inputs.data() + t * 512, direct.data() + t * 512,
                                    2, error, sizeof error), 0) << error;
        memra_loaded_abi_close(&abi);
        EXPECT_EQ(std::memcmp(direct.data(), from_memory.data(), direct.size() * sizeof(float)), 0)
            << (from_file ? "file" : "memory") << " source";
    }
    ::close(fd);
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
                             "\"cache\":{\"hits\":12,\"misses\":6,", "\"scalar_check\":{\"done\":true,\"max_rel_l2\":",
                             "\"identical\":true,\"pass\":true"})
        EXPECT_NE(json.out.find(part), std::string::npos) << part << "\n" << json.out;
    EXPECT_EQ(memra::tools::Json::parse(json.out).at("scalar_check").at("max_rel_l2"), 0.0) << json.out;
}

// --rows M: the same tokens in batches of M through memra_cpu_expert_rows_v2, one call per expert,
// agree with the token call (the same kernels and the same float sum of the experts, in the same
// order: only last-bit noise may differ, kRowsVsToken), from memory and from the file, and the
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
        EXPECT_LE(max_relative_l2(read_floats(path("rows.f32")), read_floats(path("token.f32")), 512), kRowsVsToken) << source;
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
