#include "rejection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>

namespace memra::tests {
namespace {

constexpr unsigned char kFill = 0x5A;  // pre-fill of error buffers, to see what was written

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

struct Snapshot {
    std::vector<std::vector<unsigned char>> bytes;
    explicit Snapshot(const std::vector<std::pair<const void *, size_t>> &regions) {
        for (const auto &[p, n] : regions) {
            const auto *b = static_cast<const unsigned char *>(p);
            bytes.emplace_back(b, b + n);
        }
    }
};

void expect_unchanged(const Snapshot &before, const std::vector<std::pair<const void *, size_t>> &regions,
                      const char *when) {
    for (size_t i = 0; i < regions.size(); ++i)
        EXPECT_EQ(std::memcmp(before.bytes[i].data(), regions[i].first, regions[i].second), 0)
            << "watched region " << i << " (" << regions[i].second << " bytes) changed " << when;
}

}  // namespace

void check_rejection(const FailingCall &call, const Rejection &expected,
                     const std::vector<std::pair<const void *, size_t>> &watched) {
    const Snapshot before(watched);

    // A roomy buffer: the full message.
    char full[1024];
    std::memset(full, kFill, sizeof full);
    ASSERT_EQ(call(full, sizeof full), expected.status) << "message: " << std::string(full, strnlen(full, sizeof full));
    ASSERT_NE(std::memchr(full, '\0', sizeof full), nullptr) << "message not NUL-terminated";
    const std::string message = full;
    ::testing::Test::RecordProperty("message", message);  // in --gtest_output=xml, for review
    expect_unchanged(before, watched, "by the rejected call");
    EXPECT_FALSE(message.empty()) << "a failure must say why";
    const std::string low = lower(message);
    for (const std::string &m : expected.mentions)
        EXPECT_NE(low.find(lower(m)), std::string::npos) << "message does not mention '" << m << "': " << message;
    if (expected.expert >= 0) {
        const std::regex names_expert("expert[^0-9]{0,4}" + std::to_string(expected.expert) + "([^0-9]|$)");
        EXPECT_TRUE(std::regex_search(low, names_expert))
            << "message does not name expert " << expected.expert << ": " << message;
    }

    // Small buffers: the message truncated to error_len - 1 characters, NUL-terminated, and not a
    // byte written past error_len.
    for (size_t len : {size_t(1), size_t(2), size_t(8)}) {
        char small[64];
        std::memset(small, kFill, sizeof small);
        EXPECT_EQ(call(small, len), expected.status);
        const size_t written = strnlen(small, len);
        EXPECT_LT(written, len) << "error_len " << len << ": not NUL-terminated within error_len";
        EXPECT_EQ(written, std::min(len - 1, message.size())) << "error_len " << len;
        EXPECT_EQ(std::string(small, written), message.substr(0, written)) << "error_len " << len;
        for (size_t i = len; i < sizeof small; ++i)
            ASSERT_EQ((unsigned char)small[i], kFill) << "error_len " << len << ": byte " << i << " written";
    }

    // No buffer at all, or a zero length: same status, nothing written.
    EXPECT_EQ(call(nullptr, 64), expected.status);
    char untouched[16];
    std::memset(untouched, kFill, sizeof untouched);
    EXPECT_EQ(call(untouched, 0), expected.status);
    for (char c : untouched) ASSERT_EQ((unsigned char)c, kFill) << "error_len 0 but the buffer was written";

    expect_unchanged(before, watched, "by the repeated rejected calls");
}

}  // namespace memra::tests
