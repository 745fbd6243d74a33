// --peer ggml: memra (through its public ABI, as in paths.h) and ggml-cpu (through the peer
// module) on the same stored weight bytes, measured side by side in one run:
//   peer_token: one token routed to --experts experts, the window rotating as in token_path;
//   peer_rows:  kPeerRows tokens all routed to one expert (what the rows call serves).
// Contenders: memra, ggml (weights in a CPU buffer over the store's bytes) and, where ggml's
// extra buffer type repacks the format on this CPU, ggml_repack. Their reps alternate, each
// call takes the next window (so no contender reads what another just pulled into the LLC),
// and between turns the last contender's idle threads are let go to sleep, untimed. Before
// timing, every contender runs the same call once and its output is compared with memra's.
#pragma once

#include <string>
#include <vector>

#include "paths.h"
#include "peer_compare.h"
#include "peer_module.h"
#include "record.h"
#include "weight_store.h"

namespace memra::bench {

// Records of peer_token (when --modes has token) and peer_rows (when it has rows), per thread
// count and contender. `repacked` is what GgmlPeer::prepare returned for this store. Outputs
// that disagree beyond agreement_rule (peer_compare.h) are appended to `problems`.
std::vector<Record> peer_paths(const PathContext &ctx, const WeightStore &store, const GgmlPeer &peer,
                               const std::string &repacked, std::vector<std::string> &problems);

}  // namespace memra::bench
