#include "weights_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace memra::tests {

std::vector<CpuProjectionV2 *> projections_of(std::vector<CpuExpertV2> &experts) {
    std::vector<CpuProjectionV2 *> out;
    for (CpuExpertV2 &e : experts)
        for (CpuProjectionV2 *p : {&e.gate, &e.up, &e.down}) out.push_back(p);
    return out;
}

WeightsFile::WeightsFile(const std::vector<CpuProjectionV2 *> &projections, const std::string &path) {
    if (path.empty()) {
        char name[] = "/tmp/memra-weights-XXXXXX";
        fd_ = mkstemp(name);
        if (fd_ >= 0) unlink(name);
    } else {
        fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    }
    if (fd_ < 0) throw std::runtime_error("WeightsFile: " + std::string(std::strerror(errno)));
    uint64_t offset = 13;  // nothing in the contract aligns file_offset
    for (CpuProjectionV2 *p : projections) {
        if (pwrite(fd_, p->weights, p->byte_len, off_t(offset)) != ssize_t(p->byte_len))
            throw std::runtime_error("WeightsFile: short write");
        p->weights = nullptr;
        p->file_fd = fd_;
        p->file_offset = offset;
        size_ = offset + p->byte_len;
        bytes_ += p->byte_len;
        offset = size_ + 4099;
    }
}

WeightsFile::~WeightsFile() { close_fd(); }

void WeightsFile::close_fd() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
}

CacheCounters cache_counters() {
    CacheCounters c{};
    memra_cpu_expert_cache_stats_v2(&c[0], &c[1], &c[2], &c[3]);
    return c;
}

CacheCounters operator-(const CacheCounters &after, const CacheCounters &before) {
    CacheCounters d{};
    for (size_t i = 0; i < d.size(); ++i) d[i] = after[i] - before[i];
    return d;
}

}  // namespace memra::tests
