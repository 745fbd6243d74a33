#include "library.h"

#include <sstream>
#include <stdexcept>

namespace memra::bench {
namespace {

void check(int32_t status, const char *what, const char *error) {
    if (status != 0) throw CallFailed(status, std::string(what) + ": status " + std::to_string(status) + ": " + error);
}

}  // namespace

Library::Library(const std::string &path) {
    char error[1024] = "";
    if (memra_loaded_abi_open(path.c_str(), &abi_, error, sizeof error) != 0) throw std::runtime_error(error);
}

Library::~Library() { memra_loaded_abi_close(&abi_); }

std::string Library::describe() const {
    if (!abi_.describe) return "";
    std::string line(abi_.describe(nullptr, 0) + 1, '\0');
    abi_.describe(line.data(), line.size());
    line.resize(line.find('\0'));
    return line;
}

void Library::token(const std::vector<CpuExpertV2> &experts, const float *input, float *output,
                    int32_t threads) const {
    char error[1024] = "";
    check(abi_.moe_token(experts.data(), int32_t(experts.size()), input, output, threads, error, sizeof error),
          "memra_cpu_moe_token_v2", error);
}

void Library::rows(const CpuExpertV2 &expert, const float *inputs, int32_t rows, const float *route_weights,
                   float *outputs, int32_t threads) const {
    char error[1024] = "";
    check(abi_.expert_rows(&expert, inputs, rows, route_weights, outputs, threads, error, sizeof error),
          "memra_cpu_expert_rows_v2", error);
}

void Library::prefetch(const std::vector<CpuProjectionV2> &projections) const {
    char error[1024] = "";
    check(abi_.prefetch(projections.data(), int32_t(projections.size()), error, sizeof error),
          "memra_cpu_expert_prefetch_v2", error);
}

CacheCounters Library::cache() const {
    CacheCounters c;
    abi_.cache_stats(&c.hits, &c.misses, &c.read_bytes, &c.resident_bytes);
    return c;
}

std::string served_by(const std::string &describe_line, const std::string &format) {
    // Segments are separated by "; "; a format group reads "name,name: plugin".
    std::istringstream in(describe_line);
    std::string segment;
    while (std::getline(in, segment, ';')) {
        if (!segment.empty() && segment[0] == ' ') segment.erase(0, 1);
        const size_t colon = segment.find(": ");
        if (colon == std::string::npos || segment.compare(0, 8, "plugins:") == 0) continue;
        std::istringstream names(segment.substr(0, colon));
        std::string name;
        while (std::getline(names, name, ','))
            if (name == format) return segment.substr(colon + 2);
    }
    return "";
}

}  // namespace memra::bench
