// ggml's type table (gguf_types.cpp, every type a GGUF file may hold) against the library's format
// list (memra/qtypes.h): each format of the list is a ggml type of the same name and block
// geometry, so a new format that ggml already sizes needs no change to the reader.
#include <gtest/gtest.h>

#include "gguf_types.h"
#include "memra/qtypes.h"

namespace memra::gguf {
namespace {

TEST(GgufTypes, EveryFormatOfTheListIsAGgmlTypeOfTheSameGeometry) {
    for (const memra_qtype_info &f : memra_qtype_table) {
        const auto t = tensor_type_info(uint32_t(f.id));
        ASSERT_TRUE(t.has_value()) << f.name;
        EXPECT_STREQ(t->name, f.name);
        EXPECT_EQ(t->block_elems, uint32_t(f.block_elems)) << f.name;
        EXPECT_EQ(t->block_bytes, uint32_t(f.block_bytes)) << f.name;
        EXPECT_EQ(tensor_type_from_name(f.name), uint32_t(f.id)) << f.name;
    }
}

}  // namespace
}  // namespace memra::gguf
