// The reader on crafted bytes: a valid file parses to exactly its fields; each kind of
// malformation (and every truncation, and random garbage) is a ParseError naming the problem,
// never a crash or an out-of-bounds read (the ASan build checks the latter).
#include <gtest/gtest.h>

#include <random>

#include "gguf_bytes.h"
#include "gguf_model.h"

namespace memra::gguf {
namespace {

using test::Bytes;

// Two F32 tensors [32] and [64 x 2] at offsets 0 and 128 (32-aligned) and three kvs.
Bytes valid_file() {
    Bytes f;
    f.header(2, 3).kv_str("general.architecture", "qwen3moe").kv_u32("general.alignment", 32);
    f.str("tokens").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(2).str("a").str("bc");
    f.tensor("t0", 0, {32}, 0).tensor("t1", 0, {64, 2}, 128).pad_to(32);
    return f.zeros(128 + 512);
}

Model parse_bytes(const Bytes &f) { return parse(f.b.data(), f.b.size()); }

// The ParseError message of parsing f; fails the test if it parses.
std::string error_of(const Bytes &f) {
    try {
        parse_bytes(f);
    } catch (const ParseError &e) {
        return e.what();
    }
    ADD_FAILURE() << "parsed without error";
    return "";
}

TEST(GgufReader, ParsesEveryFieldOfAValidFile) {
    const Bytes f = valid_file();
    const Model m = parse_bytes(f);
    EXPECT_EQ(m.version, 3u);
    EXPECT_EQ(m.alignment, 32u);
    ASSERT_EQ(m.kvs.size(), 3u);
    EXPECT_EQ(m.architecture(), "qwen3moe");
    const Value *tokens = m.find_value("tokens");
    ASSERT_NE(tokens, nullptr);
    EXPECT_EQ(tokens->count, 2u);
    EXPECT_EQ(tokens->summary(), "[string x 2: \"a\", \"bc\"]");
    ASSERT_EQ(m.tensors.size(), 2u);
    EXPECT_EQ(m.tensors[1].dims, (std::vector<uint64_t>{64, 2}));
    EXPECT_EQ(m.tensors[1].offset, 128u);
    EXPECT_EQ(*m.tensors[1].bytes, 512u);
    EXPECT_EQ(m.data_offset % 32, 0u);
    EXPECT_EQ(m.data_offset + 128 + 512, f.b.size());
}

TEST(GgufReader, EveryTruncationIsAClearError) {
    const Bytes full = valid_file();
    for (size_t n = 0; n < full.b.size(); ++n) {
        Bytes cut{std::vector<uint8_t>(full.b.begin(), full.b.begin() + long(n))};
        const std::string msg = error_of(cut);
        EXPECT_NE(msg.find("truncated"), std::string::npos) << "prefix " << n << ": " << msg;
    }
}

struct Corruption {
    const char *name;
    Bytes file;
    const char *message_part;
};

std::vector<Corruption> corruptions() {
    std::vector<Corruption> c;
    c.push_back({"bad magic", Bytes().put<uint32_t>(0x46554748).put<uint32_t>(3).zeros(16), "not a GGUF file"});
    c.push_back({"version 1", Bytes().header(0, 0, 1), "version 1 is not supported"});
    c.push_back({"big-endian version", Bytes().header(0, 0, 0x03000000), "big-endian"});
    c.push_back({"huge kv count", Bytes().header(0, uint64_t(1) << 60), "cannot fit"});
    c.push_back({"huge tensor count", Bytes().header(uint64_t(1) << 60, 0), "cannot fit"});
    c.push_back({"huge string", Bytes().header(0, 1).put<uint64_t>(uint64_t(1) << 62).zeros(8), "string length"});
    c.push_back({"unknown value type", Bytes().header(0, 1).str("k").put<uint32_t>(13).zeros(8), "unknown value type 13"});
    c.push_back({"huge array", Bytes().header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(4).put<uint64_t>(uint64_t(1) << 61), "cannot fit"});
    c.push_back({"bool 2", Bytes().header(0, 1).str("k").put<uint32_t>(7).put<uint8_t>(2), "neither 0 nor 1"});
    c.push_back({"duplicate key", Bytes().header(0, 2).kv_u32("k", 1).kv_u32("k", 2), "duplicate metadata key 'k'"});
    c.push_back({"alignment 48", Bytes().header(0, 1).kv_u32("general.alignment", 48), "not a power of two"});
    c.push_back({"alignment as string", Bytes().header(0, 1).kv_str("general.alignment", "32"), "expected uint32"});
    c.push_back({"5 dimensions", Bytes().header(1, 0).tensor("t", 0, {1, 1, 1, 1, 1}, 0), "5 dimensions"});
    c.push_back({"zero dimension", Bytes().header(1, 0).tensor("t", 0, {32, 0}, 0), "is zero"});
    c.push_back({"overflowing shape", Bytes().header(1, 0).tensor("t", 0, {uint64_t(1) << 40, uint64_t(1) << 40}, 0), "overflows"});
    c.push_back({"row not whole blocks", Bytes().header(1, 0).tensor("t", 12, {100}, 0).pad_to(32).zeros(256), "not a multiple of q4_K's block"});
    c.push_back({"misaligned offset", Bytes().header(1, 0).tensor("t", 0, {8}, 4).pad_to(32).zeros(64), "not a multiple of the alignment"});
    c.push_back({"data past the end", Bytes().header(1, 0).tensor("t", 0, {64}, 0).pad_to(32).zeros(100), "truncated file: tensor 't'"});
    c.push_back({"overlap", Bytes().header(2, 0).tensor("a", 0, {64}, 0).tensor("b", 0, {64}, 128).pad_to(32).zeros(512), "overlap"});
    c.push_back({"duplicate tensor", Bytes().header(2, 0).tensor("a", 0, {8}, 0).tensor("a", 0, {8}, 32).pad_to(32).zeros(64), "duplicate tensor name"});
    return c;
}

TEST(GgufReader, CorruptionsAreRejectedWithTheirReason) {
    for (const Corruption &c : corruptions()) {
        const std::string msg = error_of(c.file);
        EXPECT_NE(msg.find(c.message_part), std::string::npos) << c.name << ": " << msg;
    }
}

// Random garbage after a valid magic and version, and random single-byte flips of a valid file:
// the parser either accepts or throws ParseError; anything else (a crash, another exception)
// fails the test.
TEST(GgufReader, GarbageNeverCrashes) {
    std::mt19937_64 rng(7);
    const Bytes valid = valid_file();
    for (int trial = 0; trial < 4000; ++trial) {
        Bytes f = valid;
        if (trial % 2 == 0) {
            f.b.resize(8 + rng() % 200);
            for (size_t k = 8; k < f.b.size(); ++k) f.b[k] = uint8_t(rng() % 4 ? rng() % 4 : rng());
        } else {
            for (int flips = 0; flips < 3; ++flips) f.b[rng() % f.b.size()] ^= uint8_t(1u << (rng() % 8));
        }
        try {
            parse_bytes(f);
        } catch (const ParseError &) {
        }
    }
}

}  // namespace
}  // namespace memra::gguf
