// The scalar backend table as the core sees it: header fields, one kernel per weight format in
// memra_qtype_table order, and the same table through the built module (dlopen + entry symbol),
// whose kernels compute what the in-process ones do, with the manifest written beside it.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <fstream>
#include <sstream>

#include "reference_data.h"
#include "test_util.h"

namespace memra::plugin_tests {
namespace {

void expect_scalar_table(const memra_backend_v2 *b) {
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->interface_version, MEMRA_BACKEND_INTERFACE_VERSION);
    EXPECT_EQ(b->struct_size, sizeof(memra_backend_v2));
    EXPECT_STREQ(b->name, "scalar");
    ASSERT_NE(b->description, nullptr);
    EXPECT_GT(std::string(b->description).size(), 0u);
    EXPECT_EQ(b->required_features, MEMRA_CPU_BIT(MEMRA_CPU_SSE2));
    for (int f = 0; f < MEMRA_ACT_FORMAT_COUNT; ++f) EXPECT_NE(b->quantize[f], nullptr) << "format " << f;
    ASSERT_EQ(b->kernel_count, MEMRA_QTYPE_COUNT);
    for (int i = 0; i < MEMRA_QTYPE_COUNT; ++i) {
        const memra_kernel_v2 &k = b->kernels[i];
        EXPECT_EQ(k.qtype, memra_qtype_table[i].id);
        EXPECT_EQ(k.act_format, memra_qtype_table[i].act_format) << memra_qtype_table[i].name;
        EXPECT_NE(k.gemv, nullptr);
        EXPECT_NE(k.gemm, nullptr);
        EXPECT_NE(k.dequantize_row, nullptr);
    }
}

TEST(ScalarTable, FieldsAndKernels) { expect_scalar_table(memra_scalar_backend()); }

TEST(ScalarModule, LoadsAndServesTheSameKernels) {
    void *h = dlopen(MEMRA_SCALAR_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();
    auto entry = reinterpret_cast<memra_backend_entry_fn>(dlsym(h, MEMRA_BACKEND_ENTRY_SYMBOL));
    ASSERT_NE(entry, nullptr) << dlerror();
    const memra_backend_v2 *b = entry();
    expect_scalar_table(b);
    // One ggml trial per format through the module's own copy of the kernels, against the copy
    // linked into this test.
    for (const char *name : kQuantizedNames) {
        const memra_qtype_info &info = qtype_by_name(name);
        const auto trials = testkit::load_dot_trials(name);
        const auto &t = trials.front();
        const memra_kernel_v2 *k = nullptr;
        for (int i = 0; i < b->kernel_count; ++i)
            if (b->kernels[i].qtype == info.id) k = &b->kernels[i];
        ASSERT_NE(k, nullptr) << name;
        float y = 0, linked = 1;
        k->gemv(t.w.data(), t.w.size(), 1, int32_t(t.act_f32.size()), t.act_q.data(), &y);
        scalar_kernel(info.id).gemv(t.w.data(), t.w.size(), 1, int32_t(t.act_f32.size()), t.act_q.data(), &linked);
        EXPECT_EQ(bits(y), bits(linked)) << name;  // the module computes what the linked kernels do
    }
    dlclose(h);
}

TEST(ScalarModule, ManifestMatchesTable) {
    std::string path = MEMRA_SCALAR_PLUGIN_PATH;
    path.replace(path.size() - 3, 3, ".manifest");
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string m = ss.str();
    EXPECT_NE(m.find("\nname scalar\n"), std::string::npos) << m;
    EXPECT_NE(m.find("\ninterface " + std::to_string(MEMRA_BACKEND_INTERFACE_VERSION) + "\n"), std::string::npos) << m;
    EXPECT_NE(m.find("\npriority 0\n"), std::string::npos) << m;
    EXPECT_NE(m.find("\nrequires sse2\n"), std::string::npos) << m;
    EXPECT_NE(m.find("\nmodule memra-backend-scalar.so\n"), std::string::npos) << m;
}

}  // namespace
}  // namespace memra::plugin_tests
