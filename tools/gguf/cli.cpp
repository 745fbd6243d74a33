#include "cli.h"

#include <iostream>

namespace memra::gguf_tool {

bool parse_command_line(const Command &cmd, int argc, char **argv, po::options_description &opts,
                        const po::positional_options_description &positional, po::variables_map &vm) {
    opts.add_options()("help,h", "show this help");
    try {
        po::store(po::command_line_parser(argc, argv).options(opts).positional(positional).run(), vm);
        if (vm.count("help")) {
            std::cout << "usage: memra-gguf " << cmd.name << " " << cmd.synopsis << "\n" << cmd.summary << "\n\n"
                      << opts << "\nexamples:\n" << cmd.examples;
            return false;
        }
        po::notify(vm);
    } catch (const po::error &e) {
        throw UsageError(e.what());
    }
    return true;
}

}  // namespace memra::gguf_tool
