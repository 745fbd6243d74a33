// memra-gguf: GGUF files and the library. `inspect` shows what a file holds, `synth` writes an MoE
// model's expert tensors with synthetic weights quantized by the project's own encoders, `run`
// evaluates a layer's experts from a file through the public ABI, exactly as the engine would.
// Exit status: 0 success, 1 failure (a malformed file, a failed check), 2 bad arguments.
#include <cstring>
#include <iostream>

#include "cli.h"
#include "gguf_model.h"

namespace {

struct Subcommand {
    const char *name;
    int (*main)(int, char **);
    const char *summary;
};

constexpr Subcommand kSubcommands[] = {
    {"inspect", memra::gguf_tool::inspect_main, "header, metadata, tensors, MoE layers, supported formats"},
    {"synth", memra::gguf_tool::synth_main, "write an MoE model's expert tensors with synthetic quantized weights"},
    {"run", memra::gguf_tool::run_main, "evaluate a layer's experts through the library; latency, GB/s, scalar check"},
};

void usage(std::ostream &out) {
    out << "usage: memra-gguf SUBCOMMAND [options]   (memra-gguf SUBCOMMAND --help for each)\n\nsubcommands:\n";
    for (const Subcommand &s : kSubcommands) out << "  " << s.name << std::string(10 - std::strlen(s.name), ' ') << s.summary << "\n";
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        usage(argc < 2 ? std::cerr : std::cout);
        return argc < 2 ? 2 : 0;
    }
    for (const Subcommand &s : kSubcommands) {
        if (std::strcmp(argv[1], s.name) != 0) continue;
        try {
            return s.main(argc - 1, argv + 1);
        } catch (const memra::gguf_tool::UsageError &e) {
            std::cerr << "memra-gguf " << s.name << ": " << e.what() << " (see memra-gguf " << s.name << " --help)\n";
            return 2;
        } catch (const std::exception &e) {
            std::cerr << "memra-gguf " << s.name << ": " << e.what() << "\n";
            return 1;
        }
    }
    std::cerr << "memra-gguf: unknown subcommand '" << argv[1] << "' (memra-gguf --help lists them)\n";
    return 2;
}
