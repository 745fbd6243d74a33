// One measured quantity and its context: what was called (mode, variant), on which plugin and
// format, with how many threads, how many bytes each sample moved, and the sample statistics.
// Children send records to the parent as JSON lines; the parent writes the same fields to --json
// and --csv (docs/benchmarks.md, "Output schema").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "json.h"
#include "sampler.h"

namespace memra::bench {

struct Record {
    std::string mode;       // bandwidth | token | rows | file | peer_token | peer_rows
    std::string variant;    // bandwidth: read, read_4k, pread, read_end; token: memory; rows: token, rows;
                            // file: pread, pread-cached, first-touch, first-touch-4k,
                            // first-pass, cold, prefetched, warm, memory; peer_*: memra, ggml, ggml_repack
    std::string backend;    // "" for bandwidth records
    std::string served_by;  // the plugin whose kernel ran this format ("" if unknown)
    std::string format;     // "" for bandwidth records
    int32_t threads = 1;
    int32_t experts = 0;    // experts per call (token calls), 1 for rows
    int32_t rows = 0;       // rows per call (rows variant), else 0
    int32_t stored = 0;     // distinct stored experts the calls rotated through (0: bandwidth)
    uint64_t bytes = 0;     // bytes read per sample: weights for calls, buffer or file for bandwidth
    Summary seconds;        // per sample
    std::string note;       // free text: the page kind, cache hits, reused regions...
    // Bandwidth records of memory reads: the read loop that won, and every loop's GB/s (median).
    std::string read_loop;
    std::vector<std::pair<std::string, double>> read_loops;
    // Filled where the comparison exists (ratio < 0: absent).
    double bandwidth_gbps = -1;  // the measured read bandwidth at this thread count
    std::string relative_to;     // rows: "token"; file cold: "pread", warm: "memory" (file mode's memory
                                 // variant, alternating with warm), prefetched: "cold";
                                 // peer memra: the faster ggml variant; peer ggml*: "memra"
    double relative = -1;        // rows: time ratio; cold/warm: GB/s ratio; prefetched: exposed-wait ratio;
                                 // peer: GB/s ratio (memra / best ggml; ggml* / memra)
    double exposed_wait_s = -1;  // file cold/prefetched: median time beyond the warm call's
    // peer ggml*: relative L2 error of this output against memra's on the same call (-1: absent;
    // non-finite is written as kNonFinite) and whether every value was equal; peer ggml: the same
    // for its graph with the contract's silu in place of ggml's swiglu (MEMRA_GGML_PEER_EXACT_SILU).
    double output_rel_error = -1;
    bool output_identical = false;
    double exact_silu_rel_error = -1;
    bool exact_silu_identical = false;
    static constexpr double kNonFinite = 1e300;

    double gbps() const { return seconds.median > 0 ? double(bytes) / seconds.median / 1e9 : 0; }
    // GB/s at the slow (p90 time) and fast (p10 time) ends of the samples.
    double gbps_low() const { return seconds.p90 > 0 ? double(bytes) / seconds.p90 / 1e9 : 0; }
    double gbps_high() const { return seconds.p10 > 0 ? double(bytes) / seconds.p10 / 1e9 : 0; }
    double ratio_to_bandwidth() const { return bandwidth_gbps > 0 ? gbps() / bandwidth_gbps : -1; }
};

// The record as a JSON object (docs/benchmarks.md, "Output schema").
tools::Json record_json(const Record &r);

// Inverse of record_json; throws std::runtime_error naming a missing or mistyped key.
Record read_record(const tools::Json &v);

}  // namespace memra::bench
