// One child process per plugin: the library reads MEMRA_CPU_EXPERT_BACKEND once, at load, so each
// plugin is measured by this tool re-executed with that variable set, loading the library through
// its public ABI exactly as the engine does. The child sends JSON lines through a pipe:
//   {"type":"backend","name":..,"usable":..,"describe":..,"reason":..}
//   {"type":"record","record":{...record.h...}}
//   {"type":"error","format":..,"message":..}
//   {"type":"peer","name":..,"usable":..,"describe":..,"reason":..}   (with --peer)
#pragma once

#include <string>
#include <vector>

#include "options.h"
#include "record.h"

namespace memra::bench {

struct BackendResult {
    std::string name;
    bool usable = false;
    std::string describe;
    std::string reason;               // why not usable, or why the child failed
    std::vector<Record> records;
    std::vector<std::string> errors;  // "format: message" of measurements that failed
    // --peer: the peer measured side by side in this child ("" when none was asked for).
    std::string peer;
    bool peer_usable = false;
    std::string peer_describe;
    std::string peer_reason;          // why not usable
    bool peer_avx2 = false;           // GgmlPeer::avx2_kernels
};

// Parent side: runs this program again with args plus the internal options, the environment
// variable set to backend, and collects what the child sends.
BackendResult run_backend_child(const std::vector<std::string> &args, const std::string &backend);

// Child side: measures options.child_backend and writes to options.child_fd. Returns the exit status.
int child_main(const BenchOptions &options);

}  // namespace memra::bench
