// Which plugin serves each format, read from the library's describe line (its extension
// memra_cpu_experts_describe), the only place a dlopen'ed library says so:
//   "memra-cpu-experts: backend avx512 (auto); f32,q4_0,...: avx512; nvfp4: avx2; plugins: ..."
#pragma once

#include <map>
#include <string>

namespace memra::demo {

// format name (ggml's spelling) -> plugin name, for every "FORMATS: PLUGIN" group of the line;
// empty when the line has none (an unusable library, or one without the extension).
std::map<std::string, std::string> served_by(const std::string &describe_line);

}  // namespace memra::demo
