// Threads the library starts take none of the process's signals (signals_blocked.h): the engine's
// threads keep them all, and the caller's own mask is as it was after a call started threads.
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "lib_call.h"

namespace memra::tests {
namespace {

// The blocked-signal mask of thread `tid` (/proc's SigBlk), bit s - 1 for signal s.
uint64_t blocked_mask(const std::string &tid) {
    std::ifstream status("/proc/self/task/" + tid + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("SigBlk:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
    ADD_FAILURE() << "no SigBlk line for thread " << tid;
    return 0;
}

std::vector<std::string> other_threads() {
    const std::string self = std::to_string(::syscall(SYS_gettid));
    std::vector<std::string> tids;
    if (DIR *dir = ::opendir("/proc/self/task")) {
        while (const dirent *e = ::readdir(dir))
            if (e->d_name[0] != '.' && self != e->d_name) tids.push_back(e->d_name);
        ::closedir(dir);
    }
    return tids;
}

uint64_t bit(int signal) { return uint64_t{1} << (signal - 1); }

TEST(ThreadSignals, TheTeamsHelpersBlockEverySignalAndTheCallersMaskIsKept) {
    // Enough rows for several tiles, so a team of four starts helpers.
    const testkit::TokenProblem p = testkit::make_token_problem(
        {expertkit::uniform_spec(MEMRA_QTYPE_Q8_0, 0.6f), expertkit::uniform_spec(MEMRA_QTYPE_Q4_K, 0.4f)}, 2048,
        1024, 7);
    sigset_t mine, before, after;
    sigemptyset(&mine);
    sigaddset(&mine, SIGUSR2);  // a mask of the caller's own, to be found again afterwards
    ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &mine, &before), 0);
    run_token(p, 4);
    ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &before, &after), 0);
    EXPECT_EQ(sigismember(&after, SIGUSR2), 1) << "the caller's mask changed";
    EXPECT_EQ(sigismember(&after, SIGINT), sigismember(&before, SIGINT)) << "the caller's mask changed";

    const std::vector<std::string> tids = other_threads();
    ASSERT_FALSE(tids.empty()) << "a 4-thread call started no helper";
    for (const std::string &tid : tids) {
        const uint64_t blocked = blocked_mask(tid);
        for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGPIPE, SIGWINCH})
            EXPECT_NE(blocked & bit(s), 0u) << "thread " << tid << " takes signal " << s;
    }
}

}  // namespace
}  // namespace memra::tests
