// Every subcommand's arguments, good and bad: help texts with examples (exit 0), and a one-line
// reason with exit status 2 for anything malformed (1 for a file that is not GGUF).
#include "tool_runner.h"

namespace memra::gguf_tool::test {
namespace {

struct BadArguments {
    const char *name;
    std::vector<std::string> args;
    const char *reason;  // a part of the one stderr line
};

class Arguments : public ScratchDir {};

TEST_F(Arguments, HelpOfEverySubcommandHasExamples) {
    for (const char *sub : {"inspect", "synth", "run"}) {
        const auto r = gguf_tool({sub, "--help"});
        EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.err;
        EXPECT_NE(r.out.find("usage: memra-gguf " + std::string(sub)), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("examples:\n  memra-gguf " + std::string(sub)), std::string::npos) << r.out;
    }
    const auto top = gguf_tool({"--help"});
    EXPECT_EQ(top.exit_code, 0);
    EXPECT_NE(top.out.find("inspect"), std::string::npos);
}

TEST_F(Arguments, BadArgumentsExitTwoWithOneLine) {
    const std::string out = path("x.gguf");
    const std::vector<BadArguments> cases = {
        {"no subcommand", {}, "usage"},
        {"unknown subcommand", {"frobnicate"}, "unknown subcommand 'frobnicate'"},
        {"inspect without file", {"inspect"}, "'--file' is required"},
        {"inspect two files", {"inspect", "a", "b"}, "too many positional"},
        {"inspect unknown option", {"inspect", "a", "--bogus"}, "unrecognised option '--bogus'"},
        {"synth without file", {"synth"}, "'--out' is required"},
        {"synth bad preset", {"synth", out, "--arch", "gpt5"}, "unknown --arch 'gpt5' (presets: tiny, qwen3-30b-a3b, mixtral-8x7b)"},
        {"synth bad qtype", {"synth", out, "--qtype", "q4_1"}, "--qtype 'q4_1' is not one of the library's formats"},
        {"synth bad down qtype", {"synth", out, "--qtype-down", "nope"}, "--qtype-down 'nope'"},
        {"synth partial blocks", {"synth", out, "--n-embd", "100", "--qtype", "q8_0"}, "gate rows have 100 values, not a multiple of q8_0's block of 32"},
        {"synth zero layers", {"synth", out, "--layers", "0"}, "--layers must be at least 1"},
        {"synth negative experts", {"synth", out, "--n-expert", "-3"}, "n-expert"},
        {"synth bad alignment", {"synth", out, "--alignment", "48"}, "--alignment 48 is not a power of two"},
        {"synth non-number", {"synth", out, "--n-ff", "lots"}, "n-ff"},
    };
    for (const BadArguments &c : cases) {
        const auto r = gguf_tool(c.args);
        EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
        if (c.args.empty()) continue;  // the bare command prints its usage
        EXPECT_TRUE(one_line(r.err)) << c.name << ": " << r.err;
        EXPECT_NE(r.err.find(c.reason), std::string::npos) << c.name << ": " << r.err;
    }
    EXPECT_FALSE(std::filesystem::exists(out)) << "a rejected synth wrote its file";
}

TEST_F(Arguments, FilesThatAreNotGgufExitOneWithOneLine) {
    const auto missing = gguf_tool({"inspect", path("missing.gguf")});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_TRUE(one_line(missing.err)) << missing.err;
    EXPECT_NE(missing.err.find("No such file"), std::string::npos) << missing.err;

    const auto unwritable = gguf_tool({"synth", path("no-such-dir/x.gguf")});
    EXPECT_EQ(unwritable.exit_code, 1);
    EXPECT_TRUE(one_line(unwritable.err)) << unwritable.err;
    EXPECT_NE(unwritable.err.find("no-such-dir/x.gguf: No such file or directory"), std::string::npos) << unwritable.err;

    const auto dir = gguf_tool({"inspect", dir_.string()});
    EXPECT_EQ(dir.exit_code, 1);
    EXPECT_TRUE(one_line(dir.err)) << dir.err;
}

}  // namespace
}  // namespace memra::gguf_tool::test
