// Cache-growth faults on demand: definitions of mmap and madvise in the test executable, which
// the library's calls resolve to (as pread_shim.h does for pread), so the slab pool under test
// (core/weights/slab_pool.cpp) is the real, unmodified one. Unarmed, they forward. Armed, they act only
// on the pool's own calls: an anonymous MAP_NORESERVE read-write mapping, and
// madvise(MADV_POPULATE_WRITE), which is how the pool faults a new slab in.
#pragma once

#include <cstdint>

namespace memra::tests {

struct MapFault {
    enum class Kind {
        kRefuseMap,       // mmap fails with `error` (ENOMEM: address space or map count exhausted)
        kRefusePopulate,  // madvise(MADV_POPULATE_WRITE) fails with `error` (ENOMEM: the memory
                          // is not there; EFAULT, EHWPOISON: the kernel's other answers)
        kNoPopulate,      // madvise answers EINVAL, as kernels before 5.14 do: not a refusal,
                          // the pool touches the pages itself
    };
    Kind kind = Kind::kRefuseMap;
    int error = 0;
};

// RAII: armed for the object's lifetime.
class ArmedMapFault {
public:
    explicit ArmedMapFault(const MapFault &fault);
    ~ArmedMapFault();
    ArmedMapFault(const ArmedMapFault &) = delete;
    ArmedMapFault &operator=(const ArmedMapFault &) = delete;
    uint64_t faults() const;  // how many calls it failed
};

}  // namespace memra::tests
