// What the memra-gguf subcommands share: option parsing with Boost.Program_options, a help text
// with examples, and one error type for bad arguments (exit status 2, one line on stderr).
#pragma once

#include <boost/program_options.hpp>

#include <stdexcept>
#include <string>

namespace memra::gguf_tool {

namespace po = boost::program_options;

// Bad command-line arguments: main prints "memra-gguf SUBCOMMAND: what()" and exits 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Command {
    const char *name;     // "inspect"
    const char *synopsis; // "FILE [--json]"
    const char *summary;  // one line
    const char *examples; // lines of "  memra-gguf ..." ending in '\n'
};

// Parses argv (argv[0] = the subcommand's name) into vm. Returns false after printing the help
// when --help was given. Throws UsageError for anything Boost rejects or a missing positional.
bool parse_command_line(const Command &cmd, int argc, char **argv, po::options_description &opts,
                        const po::positional_options_description &positional, po::variables_map &vm);

// Subcommand entry points: argv[0] is the subcommand name. Return the exit status.
int inspect_main(int argc, char **argv);
int synth_main(int argc, char **argv);
int run_main(int argc, char **argv);

}  // namespace memra::gguf_tool
