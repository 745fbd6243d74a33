#include "child.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "library.h"
#include "library_path.h"
#include "paths.h"
#include "peer_path.h"
#include "weight_store.h"

namespace memra::bench {
namespace {

// Writes whole lines to the parent's pipe.
class Channel {
public:
    explicit Channel(int fd) : fd_(fd) {}
    void send(const tools::Json &message) {
        const std::string s = tools::dump_json(message) + '\n';
        for (size_t done = 0; done < s.size();) {
            const ssize_t n = ::write(fd_, s.data() + done, s.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return;  // the parent went away: nothing left to report to
            done += size_t(n);
        }
    }

private:
    int fd_;
};

void progress(const Record &r) {
    std::fprintf(stderr, "memra-bench: %-7s %-7s %-6s %-10s t=%d%s %8.2f GB/s  (%d reps%s)\n", r.backend.c_str(),
                 r.format.c_str(), r.mode.c_str(), r.variant.c_str(), r.threads,
                 r.rows ? (" m=" + std::to_string(r.rows)).c_str() : "", r.gbps(), r.seconds.reps,
                 r.seconds.settled ? "" : ", not settled");
}

StopRule stop_rule(const BenchOptions &o) {
    StopRule rule;
    rule.min_reps = o.min_reps;
    rule.max_seconds = o.max_seconds;
    return rule;
}

void send_error(Channel &out, const std::string &format, const std::string &message) {
    out.send({{"type", "error"}, {"format", format}, {"message", message}});
}

void measure_format(const Library &lib, const BenchOptions &o, const std::string &describe, int32_t qtype,
                    GgmlPeer *peer, Channel &out) {
    const std::string name = format_name(qtype);
    const size_t expert_bytes = WeightStore::expert_bytes(qtype, o.shape);
    const int32_t fit = int32_t(std::min<uint64_t>(uint64_t(o.stored), o.max_stored_bytes / expert_bytes));
    const WeightStore store(qtype, o.shape, std::max(o.experts, fit), o.hugepages, o.seed);
    const PathContext ctx{lib, o, o.child_backend, served_by(describe, name), name, store.count(), stop_rule(o)};
    auto emit = [&](const std::vector<Record> &records) {
        for (const Record &r : records) {
            progress(r);
            out.send({{"type", "record"}, {"record", record_json(r)}});
        }
    };
    if (o.has(Mode::Token)) emit(token_path(ctx, store));
    if (o.has(Mode::Rows)) emit(rows_path(ctx, store));
    if (o.has(Mode::File)) emit(file_path(ctx, store));
    if (peer) {
        const std::string repacked = peer->prepare(store, o.hugepages);
        std::vector<std::string> problems;
        emit(peer_paths(ctx, store, *peer, repacked, problems));
        for (const std::string &p : problems) {
            std::fprintf(stderr, "memra-bench: %s %s: %s\n", o.child_backend.c_str(), name.c_str(), p.c_str());
            send_error(out, name, p);
        }
    }
}

// --peer: the peer module, or null after telling the parent why it is not there.
std::unique_ptr<GgmlPeer> open_peer(const BenchOptions &o, Channel &out) {
    if (o.peer.empty() || !(o.has(Mode::Token) || o.has(Mode::Rows))) return nullptr;
    std::unique_ptr<GgmlPeer> peer;
    std::string reason;
    try {
        peer = std::make_unique<GgmlPeer>(o.peer_lib.empty() ? default_peer_module_path() : o.peer_lib);
        std::fprintf(stderr, "memra-bench: peer %s: %s\n", o.peer.c_str(), peer->describe().c_str());
    } catch (const std::exception &e) {
        reason = e.what();
        std::fprintf(stderr, "memra-bench: peer %s not measured: %s\n", o.peer.c_str(), reason.c_str());
    }
    out.send({{"type", "peer"},
              {"name", o.peer},
              {"usable", peer != nullptr},
              {"describe", peer ? peer->describe() : ""},
              {"reason", reason},
              {"avx2_kernels", peer && peer->avx2_kernels()}});
    return peer;
}

}  // namespace

int child_main(const BenchOptions &o) {
    Channel out(o.child_fd);
    const std::string prefix = "memra-cpu-experts: unusable: ";
    try {
        const std::string path = o.lib.empty() ? tools::default_library_path() : o.lib;
        const Library lib(path);
        // This process ends when the measurements do: the library stays mapped until then. Unmapped
        // first (by ~Library), it would take along what it brought in, and under ASan+UBSan that is
        // the UBSan runtime, whose own start-up allocations LeakSanitizer then reports as leaked
        // (a child whose backend is unusable makes no call that would keep the library loaded).
        dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        const std::string describe = lib.describe();
        const bool usable = describe.compare(0, prefix.size(), prefix) != 0;
        out.send({{"type", "backend"},
                  {"name", o.child_backend},
                  {"usable", usable},
                  {"describe", describe},
                  {"reason", usable ? "" : describe.substr(prefix.size())}});
        if (!usable) return 0;
        const std::unique_ptr<GgmlPeer> peer = open_peer(o, out);
        for (int32_t q : o.formats) {
            try {
                measure_format(lib, o, describe, q, peer.get(), out);
            } catch (const std::exception &e) {
                std::fprintf(stderr, "memra-bench: %s %s: %s\n", o.child_backend.c_str(), format_name(q).c_str(), e.what());
                send_error(out, format_name(q), e.what());
            }
        }
    } catch (const std::exception &e) {
        out.send({{"type", "backend"}, {"name", o.child_backend}, {"usable", false}, {"describe", ""}, {"reason", e.what()}});
    }
    return 0;
}

BackendResult run_backend_child(const std::vector<std::string> &args, const std::string &backend) {
    BackendResult result;
    result.name = backend;
    int fds[2];
    if (::pipe(fds) != 0) {
        result.reason = std::string("pipe: ") + std::strerror(errno);
        return result;
    }
    std::vector<std::string> argv_s{"memra-bench"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    argv_s.push_back("--internal-child-fd=" + std::to_string(fds[1]));
    argv_s.push_back("--internal-backend=" + backend);
    std::vector<char *> argv;
    for (std::string &s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);

    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        ::setenv("MEMRA_CPU_EXPERT_BACKEND", backend.c_str(), 1);
        ::execv("/proc/self/exe", argv.data());
        std::fprintf(stderr, "memra-bench: exec /proc/self/exe: %s\n", std::strerror(errno));
        ::_exit(127);
    }
    ::close(fds[1]);
    if (pid < 0) {
        ::close(fds[0]);
        result.reason = std::string("fork: ") + std::strerror(errno);
        return result;
    }
    std::string text;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buf, size_t(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }

    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        try {
            const tools::Json v = tools::Json::parse(line);
            const std::string type = tools::json_string(v, "type");
            if (type == "backend") {
                result.usable = tools::json_bool(v, "usable");
                result.describe = tools::json_string(v, "describe");
                result.reason = tools::json_string(v, "reason");
            } else if (type == "record") {
                result.records.push_back(read_record(tools::json_member(v, "record", "object")));
            } else if (type == "peer") {
                result.peer = tools::json_string(v, "name");
                result.peer_usable = tools::json_bool(v, "usable");
                result.peer_describe = tools::json_string(v, "describe");
                result.peer_reason = tools::json_string(v, "reason");
                result.peer_avx2 = tools::json_bool(v, "avx2_kernels");
            } else if (type == "error") {
                result.errors.push_back(tools::json_string(v, "format") + ": " + tools::json_string(v, "message"));
            }
        } catch (const std::exception &e) {
            result.errors.push_back(std::string("unreadable line from the child: ") + e.what());
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const std::string how = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                                    : "exit status " + std::to_string(WEXITSTATUS(status));
        result.errors.push_back("child process for " + backend + ": " + how);
    }
    return result;
}

}  // namespace memra::bench
