// memra-bench-check-output JSON CSV SVG [MODES]: exit 0 when the three files memra-bench wrote
// conform to docs/benchmarks.md ("Output schema"), else 1 with the first problem of each.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "output_check.h"

namespace {

bool read(const char *path, std::string &text) {
    std::ifstream f(path);
    std::ostringstream s;
    s << f.rdbuf();
    text = s.str();
    return bool(f);
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 4 || argc > 5) {
        std::fprintf(stderr, "usage: memra-bench-check-output JSON CSV SVG [MODES]\n");
        return 2;
    }
    bool ok = true;
    auto report = [&](const char *what, const char *path, const std::string &problem) {
        if (problem.empty()) {
            std::printf("%s %s: ok\n", what, path);
            return;
        }
        std::printf("%s %s: %s\n", what, path, problem.c_str());
        ok = false;
    };
    std::string json, csv, svg;
    if (!read(argv[1], json) || !read(argv[2], csv) || !read(argv[3], svg)) {
        std::fprintf(stderr, "memra-bench-check-output: cannot read an input file\n");
        return 2;
    }
    report("json", argv[1], memra::bench::check_json(json, argc == 5 ? argv[4] : ""));
    report("csv", argv[2], memra::bench::check_csv(csv));
    report("svg", argv[3], memra::bench::check_svg(svg));
    return ok ? 0 : 1;
}
