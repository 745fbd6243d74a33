// The agreement check of `memra-gguf run`: the same run repeated in a child process whose library
// is forced to the scalar reference backend (MEMRA_CPU_EXPERT_BACKEND=scalar; the library reads
// its environment once at load, hence the process), its outputs compared with ours.
#pragma once

#include <string>
#include <vector>

namespace memra::gguf_tool {

// Runs this executable with args (argv[1...]) and MEMRA_CPU_EXPERT_BACKEND=scalar, its stdout
// discarded and its stderr passed through. Returns its exit status (-1 if it did not exit).
int run_self_with_scalar_backend(const std::vector<std::string> &args);

// Raw f32 outputs, as `run --dump-outputs` writes them.
void write_floats(const std::string &path, const std::vector<float> &v);
std::vector<float> read_floats(const std::string &path);

// max over tokens of ||a_t - b_t|| / ||b_t|| (tokens of n values each; 0/0 counts as 0).
double max_relative_l2(const std::vector<float> &a, const std::vector<float> &b, size_t n);

}  // namespace memra::gguf_tool
