// The demo's figures are of warm calls (timing.h): every case checked is timed kTimedCalls times
// after its warm-up calls, and the file source's timed calls all hit the cache the checked run
// filled (a cold call would miss); timing leaves the checked outputs alone.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "cases.h"
#include "demo_model.h"
#include "timing.h"

namespace memra::demo {
namespace {

struct CacheCounters {
    uint64_t hits = 0, misses = 0, read_bytes = 0, resident = 0;
    explicit CacheCounters(const memra_loaded_abi &abi) { abi.cache_stats(&hits, &misses, &read_bytes, &resident); }
};

TEST(DemoTiming, EveryCaseIsTimedOnWarmCalls) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("memra-demo-timing-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string model = (dir / "demo.gguf").string();
    gguf_tool::write_model(model, demo_model(1, 2));
    memra_loaded_abi abi;
    char error[1024] = "";
    ASSERT_EQ(memra_loaded_abi_open(MEMRA_TEST_LIBRARY, &abi, error, sizeof error), 0) << error;
    {
        const gguf::File file(model);
        std::vector<Case> cases = run_cases(abi, file, 3, 8, 1, 2);
        const std::vector<float> checked = all_outputs(cases);
        const CacheCounters before(abi);
        time_cases(abi, file, cases, 2);
        const CacheCounters after(abi);

        size_t file_cases = 0;
        for (const Case &c : cases) {
            EXPECT_TRUE(c.result.failure.empty()) << c.result.failure;
            ASSERT_EQ(c.timed_s.size(), size_t(kTimedCalls));
            for (double s : c.timed_s) EXPECT_GT(s, 0);
            file_cases += c.source == gguf_tool::WeightSource::File;
        }
        // Each file-backed call (a token, or a batch of one rows call per expert) looks up the
        // 3 projections of its 2 experts, warm-up calls included; none misses.
        EXPECT_EQ(after.misses - before.misses, 0u);
        EXPECT_EQ(after.hits - before.hits, file_cases * size_t(kWarmupCalls + kTimedCalls) * 2 * 3);
        EXPECT_EQ(all_outputs(cases), checked);
    }
    memra_loaded_abi_close(&abi);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace memra::demo
