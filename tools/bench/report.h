// Everything one run measured, and its three renderings: the tables on stdout, --json, --csv.
// The schema of the JSON and the CSV columns are documented in docs/benchmarks.md.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "child.h"
#include "options.h"
#include "record.h"

namespace memra::bench {

struct Machine {
    std::string cpu_model;
    int logical_cpus = 0;
    uint64_t llc_bytes = 0;  // 0 when the system does not say
    bool amx = false;        // /proc/cpuinfo lists amx_int8: the rows target is the AMX one
};

Machine describe_machine();

struct Report {
    std::string date;        // UTC, ISO 8601
    Machine machine;
    std::string read_loop;   // read_loop_width(): the load width of the read loops
    BenchOptions options;
    std::vector<Record> bandwidth;
    std::vector<BackendResult> backends;
};

// The read bandwidth the calls are compared with at `threads` threads: the highest of the read
// measurements (huge pages, 4 KiB pages, again after the calls); -1 when not measured.
double bandwidth_ceiling(const Report &report, int32_t threads);

// Sets bandwidth_gbps of every call record from the measured ceilings.
void attach_ceilings(Report &report);

// The issues' targets at 2 threads: the fraction of the read bandwidth a format's token path
// should reach (-1: none set, as for f32).
double bandwidth_target(const std::string &format);
// Issue 26's bound on a rows call of m rows, in token calls of the same expert: m = 4 <= 1.5,
// m = 8 <= 2 (several streams decoding at once), m = 32 <= 3 on a CPU with AMX and <= 4 without
// (prefill); -1 for an m with no target.
double rows_target(int32_t m, bool amx);

void print_tables(std::ostream &out, const Report &report);
void write_json(std::ostream &out, const Report &report);
void write_csv(std::ostream &out, const Report &report);

// The CSV header line (without the newline), one column per record field.
std::string csv_header();

// Every call record of every backend, in run order.
std::vector<const Record *> all_records(const Report &report);

}  // namespace memra::bench
