// served_by() reads the library's describe line (core/dispatch/backend_registry.cpp writes it): the
// format groups, including a fallback plugin's, and nothing from the other groups.
#include <gtest/gtest.h>

#include "served_by.h"

namespace {

TEST(ServedBy, ReadsEveryFormatGroupAndNothingElse) {
    const std::string line =
        "memra-cpu-experts: backend avx512 (auto); f32,q4_0,q8_0,q2_K,q3_K,q4_K,q5_K,q6_K,iq3_s,iq4_xs,bf16: avx512; "
        "nvfp4: avx2; plugins: avx512 ok avxvnni (cpu lacks avx_vnni) avx2 ok scalar ok; cache budget 1024 bytes; "
        "prefetch queued 0 dropped 0 skipped 0 failed 0";
    const std::map<std::string, std::string> s = memra::demo::served_by(line);
    EXPECT_EQ(s.size(), 12u);
    EXPECT_EQ(s.at("q4_K"), "avx512");
    EXPECT_EQ(s.at("f32"), "avx512");
    EXPECT_EQ(s.at("nvfp4"), "avx2");
}

TEST(ServedBy, AnUnusableLibraryServesNothing) {
    const std::string line = "memra-cpu-experts: unusable: MEMRA_CPU_EXPERT_BACKEND=avx9: no such backend plugin is installed";
    EXPECT_TRUE(memra::demo::served_by(line).empty());
    EXPECT_TRUE(memra::demo::served_by("").empty());
}

}  // namespace
