// Dequantization, bit for bit against ggml's own decoder: for each format of the list, the
// blocks of truth_blocks.h (random, synthetic and edge-case blocks) decoded by ggml's to_float
// (libggml-base, ggml_get_type_traits(type)->to_float; F32 has none and ggml copies it) and by the
// dequantize_row of every plugin this CPU runs, the scalar reference included. Equal means the
// same bits, or NaN on both sides.
#include <gtest/gtest.h>

#include <vector>

#include "backends.h"
#include "formats.h"
#include "param_names.h"
#include "truth_blocks.h"
#include "truth_env.h"

namespace memra::truth {
namespace {

class GgmlDecode : public ::testing::TestWithParam<int32_t> {};

TEST_P(GgmlDecode, EveryPluginDecodesAsGgml) {
    MEMRA_TRUTH_REQUIRE_GGML();
    const int32_t qtype = GetParam();
    const Blocks blocks = truth_blocks(qtype, 0x19050 + uint64_t(qtype));
    const int64_t n = int64_t(blocks.count()) * expertkit::qtype_info(qtype).block_elems;
    std::vector<float> want(size_t(n), 0.0f);
    ggml_peer()->to_float(qtype, blocks.bytes.data(), want.data(), n);

    ASSERT_FALSE(runnable_plugins().empty()) << "no plugin runnable, not even the scalar one";
    for (const Plugin &p : runnable_plugins()) {
        const memra_kernel_v2 *k = kernel_of(p, qtype);
        if (!k) {
            // A rows-only build (plugins/amx) may leave a format to the plugins below it.
            if (conformance::serves_token_path(*p.table))
                ADD_FAILURE() << p.label << " has no kernel for " << expertkit::qtype_name(qtype);
            continue;
        }
        std::vector<float> got(size_t(n), -12345.0f);
        k->dequantize_row(blocks.bytes.data(), int32_t(n), got.data());
        int64_t bad = 0;
        for (int64_t i = 0; i < n; ++i) {
            if (same_float(got[size_t(i)], want[size_t(i)])) continue;
            if (bad++ < 5)
                ADD_FAILURE() << p.label << " " << expertkit::qtype_name(qtype) << ": "
                              << label_of_value(blocks, qtype, i) << ": memra " << show(got[size_t(i)])
                              << ", ggml " << show(want[size_t(i)]);
        }
        EXPECT_EQ(bad, 0) << p.label << ": values decoded unlike ggml, of " << n << " in " << blocks.count()
                          << " blocks";
    }
    for (const std::string &s : skipped_plugins()) RecordProperty("skipped_plugin", s);
}

INSTANTIATE_TEST_SUITE_P(Formats, GgmlDecode, ::testing::ValuesIn(expertkit::all_qtypes()), qtype_param_name);

}  // namespace
}  // namespace memra::truth
