// memra_cpu_experts_describe(): the project's extension that says which backend serves what. It
// follows snprintf's convention: returns the full length, writes at most buf_len bytes, NUL
// included.
#include <gtest/gtest.h>

#include <cstring>

#include "formats.h"
#include "lib_call.h"

namespace memra::tests {
namespace {

TEST(Describe, NamesTheBackendOfEveryQtype) {
    const std::string line = describe_line();
    ASSERT_EQ(line.rfind("memra-cpu-experts: backend ", 0), 0u) << line;
    for (int32_t q : expertkit::all_qtypes())
        EXPECT_NE(line.find(expertkit::qtype_name(q)), std::string::npos) << expertkit::qtype_name(q) << " in: " << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << "one line";
}

TEST(Describe, ReturnsTheLengthItNeedsAndTruncates) {
    const std::string line = describe_line();
    EXPECT_EQ(memra_cpu_experts_describe(nullptr, 0), line.size());
    for (size_t len : {size_t(1), size_t(2), size_t(10)}) {
        char buf[32];
        std::memset(buf, 0x5A, sizeof buf);
        EXPECT_EQ(memra_cpu_experts_describe(buf, len), line.size()) << "buf_len " << len;
        ASSERT_LT(strnlen(buf, len), len) << "buf_len " << len << ": not NUL-terminated";
        EXPECT_EQ(std::string(buf), line.substr(0, len - 1)) << "buf_len " << len;
        for (size_t i = len; i < sizeof buf; ++i) ASSERT_EQ((unsigned char)buf[i], 0x5A) << "buf_len " << len << ": byte " << i;
    }
}

}  // namespace
}  // namespace memra::tests
