// Writer then reader: every kv, tensor info, offset and data byte comes back, at any alignment.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "gguf_file.h"
#include "gguf_writer.h"

namespace memra::gguf {
namespace {

std::string temp_path(const std::string &name) {
    return (std::filesystem::temp_directory_path() / ("memra-gguf-" + std::to_string(::getpid()) + "-" + name)).string();
}

class WriterRoundTrip : public testing::TestWithParam<uint32_t> {};

TEST_P(WriterRoundTrip, ReaderSeesWhatWasWritten) {
    const uint32_t alignment = GetParam();
    Writer w(alignment);
    w.add_string("general.architecture", "qwen3moe");
    w.add_u32("qwen3moe.expert_count", 8);
    w.add_f32("scale", 0.5f);
    w.add_u64("big", uint64_t(1) << 40);
    w.add_tensor("a", 12, {256, 3, 2});   // q4_K: 6 rows of 144 bytes
    w.add_tensor("b", 8, {32, 5});        // q8_0: 5 rows of 34 bytes
    w.add_tensor("c", 0, {7});            // f32
    const std::string path = temp_path("rt" + std::to_string(alignment) + ".gguf");
    w.write(path, [&](size_t index, const Writer::Sink &out) {
        std::vector<uint8_t> data(*w.tensors()[index].bytes);
        for (size_t k = 0; k < data.size(); ++k) data[k] = uint8_t(k * 31 + index);
        out(data.data(), data.size() / 2);
        out(data.data() + data.size() / 2, data.size() - data.size() / 2);
    });

    const File f(path);
    const Model &m = f.model();
    EXPECT_EQ(m.version, 3u);
    EXPECT_EQ(m.alignment, alignment);
    EXPECT_EQ(m.data_offset % alignment, 0u);
    EXPECT_EQ(m.architecture(), "qwen3moe");
    EXPECT_EQ(m.find_value("qwen3moe.expert_count")->as_uint(), 8u);
    EXPECT_EQ(m.find_value("scale")->f, 0.5);
    EXPECT_EQ(m.find_value("big")->type, ValueType::UINT64);
    EXPECT_EQ(m.find_value("big")->as_uint(), uint64_t(1) << 40);
    ASSERT_EQ(m.tensors.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        const TensorInfo &t = m.tensors[i];
        EXPECT_EQ(t.name, w.tensors()[i].name);
        EXPECT_EQ(t.type, w.tensors()[i].type);
        EXPECT_EQ(t.dims, w.tensors()[i].dims);
        EXPECT_EQ(t.offset, w.tensors()[i].offset);
        EXPECT_EQ(t.offset % alignment, 0u);
        EXPECT_EQ(t.bytes, w.tensors()[i].bytes);
        const uint8_t *data = f.tensor_data(t);
        for (size_t k = 0; k < *t.bytes; ++k) ASSERT_EQ(data[k], uint8_t(k * 31 + i)) << t.name << " byte " << k;
    }
    EXPECT_EQ(*m.tensors[0].bytes, 6u * 144);
    EXPECT_EQ(m.tensors[0].rows(), 6u);
    std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Alignments, WriterRoundTrip, testing::Values(1u, 32u, 64u, 4096u));

TEST(GgufFile, MissingAndEmptyFilesAreClearErrors) {
    EXPECT_THROW(File("/nonexistent/x.gguf"), ParseError);
    const std::string path = temp_path("empty.gguf");
    std::ofstream(path).close();
    try {
        File f(path);
        ADD_FAILURE() << "an empty file parsed";
    } catch (const ParseError &e) {
        EXPECT_NE(std::string(e.what()).find(path + ": at byte 0: truncated file"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace memra::gguf

namespace memra::gguf {
namespace {

// A fill that delivers the wrong number of bytes is a logic error, and the incomplete file is gone.
TEST(GgufWriter, ShortDataIsAnErrorAndLeavesNoFile) {
    Writer w;
    w.add_tensor("t", 0, {16});
    const std::string path = temp_path("short.gguf");
    const float data[8] = {};
    EXPECT_THROW(w.write(path, [&](size_t, const Writer::Sink &out) { out(data, sizeof data); }), std::logic_error);
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_THROW(w.write("/nonexistent-dir/x.gguf", [&](size_t, const Writer::Sink &) {}), std::runtime_error);
}

}  // namespace
}  // namespace memra::gguf
