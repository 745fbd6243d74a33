// Where memory the library does not own lives: the engine's weights in memory (docs/numa.md,
// "Weights in the engine's memory"). No copies are made (a second copy of a 400 GB model per
// node is not an option); the kernel is asked where a few pages of each matrix are (move_pages
// with no target, one system call per matrix), and a spread team's tiles go to the members of the
// node holding their rows (compute/call_plan.h, follow_memory_pages).
//
// Sampled, not walked: kPageSamples pages, the first page of each of kPageSamples equal parts of
// the matrix; a part is taken to be where its first page is. Kept per (pointer, length), so a
// steady stream of calls asks the kernel nothing; forgotten when kMaxSampled matrices are kept (and
// asked again). Pages the kernel moves later (automatic NUMA balancing) are not seen: the load log
// warns about balancing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memra {

constexpr int32_t kPageSamples = 8;

struct PageSamples {
    int16_t node[kPageSamples];  // the real node of each part's first page; -1: the kernel did not say
};

// The samples of [data, data + bytes), from the kept ones or asked of the kernel now.
PageSamples sample_pages(const uint8_t *data, size_t bytes);

// The node of the byte at `offset` of a matrix of `bytes`, by the sample of its part (-1: unknown).
int32_t sampled_node(const PageSamples &samples, size_t bytes, size_t offset);

// Forgets every kept sample (tests: pages moved or unmapped on purpose).
void forget_page_samples();

}  // namespace memra
