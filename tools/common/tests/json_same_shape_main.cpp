// memra-json-same-shape OLD NEW: exit 0 when the JSON document in NEW has the shape of the one in
// OLD (json_compare.h, JsonMatch::Shape: the same keys in the same order, the same kinds), else 1
// with the first difference; 2 when a file cannot be read or parsed. The conformance tests hold
// memra-conformance's --json output to the document its hand-written writer produced.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "json_compare.h"

namespace {

bool read(const char *path, memra::tools::Json &doc) {
    std::ifstream f(path);
    std::ostringstream s;
    s << f.rdbuf();
    if (!f) {
        std::fprintf(stderr, "memra-json-same-shape: cannot read %s\n", path);
        return false;
    }
    try {
        doc = memra::tools::Json::parse(s.str());
        return true;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "memra-json-same-shape: %s: %s\n", path, e.what());
        return false;
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: memra-json-same-shape OLD NEW\n");
        return 2;
    }
    memra::tools::Json old_doc, new_doc;
    if (!read(argv[1], old_doc) || !read(argv[2], new_doc)) return 2;
    const std::string d = memra::tools::json_difference(old_doc, new_doc, memra::tools::JsonMatch::Shape);
    if (!d.empty()) {
        std::printf("%s: not shaped like %s: %s\n", argv[2], argv[1], d.c_str());
        return 1;
    }
    std::printf("%s: shaped like %s\n", argv[2], argv[1]);
    return 0;
}
