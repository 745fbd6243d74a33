// memra-bench's command line: what to measure (modes, formats, backends, threads, shape) and
// where results go. Parsing is separate from main so that the tests can feed it argument lists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memra::bench {

enum class Mode { Bandwidth, Token, Rows, File };

struct Shape {
    int32_t n_embd = 4096;  // gate/up in_features, down out_features
    int32_t n_ff = 1536;    // gate/up out_features, down in_features
};

struct BenchOptions {
    std::vector<Mode> modes;
    std::vector<int32_t> formats;        // ggml qtype ids
    std::vector<std::string> backends;   // MEMRA_CPU_EXPERT_BACKEND values
    std::vector<int32_t> threads;
    std::vector<int32_t> rows;           // rows-path row counts
    Shape shape;
    int32_t experts = 8;                 // experts per token call
    int32_t stored = 128;                // distinct experts the calls rotate through
    uint64_t max_stored_bytes = 0;       // caps stored for wide formats (memory on a shared box)
    uint64_t bandwidth_bytes = 0;        // read-bandwidth buffer
    uint64_t pread_bytes = 0;            // pread test file
    bool hugepages = true;               // weights and the bandwidth ceiling on MADV_HUGEPAGE memory
    int min_reps = 10;
    double max_seconds = 3.0;
    bool quick = false;
    uint64_t seed = 1;
    std::string dir;                     // where test files are written
    std::string lib;                     // library to dlopen ("" = beside the tool)
    std::string json_path, csv_path, svg_path;
    std::string peer;                    // "ggml": also measure ggml-cpu side by side ("" = none)
    std::string peer_lib;                // the peer module to dlopen ("" = default_peer_module_path())
    // Internal: this process is the child measuring one backend, results go to this fd.
    int child_fd = -1;
    std::string child_backend;

    bool has(Mode m) const;
};

struct ParseOutcome {
    bool ok = false;
    bool help = false;       // --help: print help_text and exit 0
    std::string error;       // one line, when !ok
    std::string help_text;
    BenchOptions options;
};

ParseOutcome parse_options(const std::vector<std::string> &args);

const char *mode_name(Mode m);

// "1.5G", "64M", "4096" -> bytes; throws std::invalid_argument naming the text.
uint64_t parse_bytes(const std::string &text);

// The ggml spelling of a qtype (tools/bench does not link the expert kit into its option parsing).
std::string format_name(int32_t qtype);

}  // namespace memra::bench
