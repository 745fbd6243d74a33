// The machine's first-touch rate: how fast fresh anonymous memory is faulted in and written for
// the first time. A cache that grows into fresh memory inside a call can never beat it, so a
// first pass over a page-cached file is compared with it, measured in the same run (issue 18).
#pragma once

#include <cstddef>

#include "sampler.h"

namespace memra::bench {

// Seconds per sample of mapping `bytes` of fresh anonymous memory (2 MiB aligned, advised
// MADV_HUGEPAGE or MADV_NOHUGEPAGE), writing every byte once (as a read into it would), and
// unmapping it; only the writes are timed. Throws std::runtime_error when the mapping fails.
Summary measure_first_touch(size_t bytes, bool hugepages, const StopRule &rule);

}  // namespace memra::bench
