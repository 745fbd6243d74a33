// A one-line progress bar on stderr, redrawn in place: shown only when stderr is a terminal (or
// when forced), so that logs and pipes stay clean.
#pragma once

#include <cstdint>
#include <string>

namespace memra::gguf_tool {

class Progress {
public:
    // enabled: -1 = when stderr is a tty, 0 = never, 1 = always.
    Progress(std::string label, uint64_t total, int enabled = -1);
    ~Progress();  // ends the line
    void update(uint64_t done);

private:
    std::string label_;
    uint64_t total_;
    bool on_;
    int last_percent_ = -1;
};

}  // namespace memra::gguf_tool
