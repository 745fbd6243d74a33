// The three ways the engine calls the library, each timed on one format and plugin:
//   token: memra_cpu_moe_token_v2 on `experts` of the stored experts, memory-backed;
//   rows:  memra_cpu_expert_rows_v2 with m rows on one expert, against one token call of it;
//   file:  token calls on file-backed experts (file_fd/file_offset): cold, prefetched, warm,
//          against raw pread of the same file and against the memory path (calls alternating).
// Every call rotates through the stored experts, so that the weights it reads come from DRAM
// (or the disk), never from a cache the previous call warmed.
#pragma once

#include <string>
#include <vector>

#include "library.h"
#include "options.h"
#include "record.h"
#include "weight_store.h"

namespace memra::bench {

struct PathContext {
    const Library &library;
    const BenchOptions &options;
    std::string backend;
    std::string served_by;
    std::string format;
    int32_t stored;  // the store's count, for the records
    StopRule rule;
};

// One record per thread count.
std::vector<Record> token_path(const PathContext &ctx, const WeightStore &store);

// Per thread count: the one-expert token call, then each row count relative to it.
std::vector<Record> rows_path(const PathContext &ctx, const WeightStore &store);

// Per thread count: first pass, cold, prefetched, then warm alternating with the memory path on
// the same experts (variant memory); once: pread, pread-cached, first touch.
std::vector<Record> file_path(const PathContext &ctx, const WeightStore &store);

}  // namespace memra::bench
