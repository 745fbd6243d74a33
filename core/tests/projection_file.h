// For suites that link the core itself (not through the ABI's WeightsFile, weights_file.h): the
// projections of `experts` written one after another into an unlinked file (at odd offsets, as
// an engine's GGUF has them), and pointed at it (weights = NULL, file_fd, file_offset).
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "memra_cpu_experts_v2.h"

namespace memra {

class ProjectionFile {
public:
    explicit ProjectionFile(std::vector<CpuExpertV2> &experts) {
        char path[] = "/tmp/memra-projections-XXXXXX";
        fd_ = ::mkstemp(path);
        ::unlink(path);
        uint64_t offset = 3;
        for (CpuExpertV2 &e : experts)
            for (CpuProjectionV2 *p : {&e.gate, &e.up, &e.down}) {
                EXPECT_EQ(::pwrite(fd_, p->weights, p->byte_len, off_t(offset)), ssize_t(p->byte_len));
                p->weights = nullptr;
                p->file_fd = fd_;
                p->file_offset = offset;
                offset += p->byte_len + 5;
            }
    }
    ProjectionFile(const ProjectionFile &) = delete;
    ProjectionFile &operator=(const ProjectionFile &) = delete;
    ~ProjectionFile() { ::close(fd_); }
    int fd() const { return fd_; }

private:
    int fd_ = -1;
};

}  // namespace memra
