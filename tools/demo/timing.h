// The demo's figures. The checked run cannot give them: its first call of each kind meets cold
// scratch buffers, a cold thread team and (file source) an empty cache, and the rows call makes
// one batch at the default sizes, so one cold sample per case swung 10x between runs. After the
// checks, each case's call (a token call, or one batch: a rows call per expert) is made again,
// kWarmupCalls untimed, then kTimedCalls timed on the same experts; the table shows the median.
#pragma once

#include <vector>

#include "abi_loader.h"
#include "cases.h"
#include "gguf_file.h"

namespace memra::demo {

constexpr int kWarmupCalls = 3;
constexpr int kTimedCalls = 15;  // odd: the median is one of the samples

// Fills timed_s of every case whose checked run succeeded with kTimedCalls seconds; a call that
// fails here sets the case's result.failure (the row then fails).
void time_cases(const memra_loaded_abi &abi, const gguf::File &file, std::vector<Case> &cases, int threads);

}  // namespace memra::demo
