#include "subprocess.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern char **environ;

namespace memra::tests {
namespace {

// An anonymous temporary file: the child writes into it, the parent reads it after the child
// exited (no pipe to drain concurrently, so no deadlock on large output).
int temp_file() {
    char name[] = "/tmp/memra-test-XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) throw std::runtime_error(std::string("mkstemp: ") + std::strerror(errno));
    unlink(name);
    return fd;
}

std::string slurp(int fd) {
    std::string s;
    char buf[4096];
    lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, size_t(n));
    close(fd);
    return s;
}

std::vector<std::string> child_environment(const std::map<std::string, std::string> &env) {
    std::vector<std::string> out;
    for (char **e = environ; *e; ++e)
        if (std::strncmp(*e, "MEMRA_CPU_EXPERT_", 17) != 0) out.emplace_back(*e);
    for (const auto &[k, v] : env) out.push_back(k + "=" + v);
    return out;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string> &argv,
                          const std::map<std::string, std::string> &env) {
    // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
    std::vector<std::string> env_strings = child_environment(env);
    std::vector<char *> child_argv, child_env;
    for (const std::string &a : argv) child_argv.push_back(const_cast<char *>(a.c_str()));
    child_argv.push_back(nullptr);
    for (std::string &e : env_strings) child_env.push_back(e.data());
    child_env.push_back(nullptr);
    const int out_fd = temp_file(), err_fd = temp_file();

    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        execve(child_argv[0], child_argv.data(), child_env.data());
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ProcessResult r;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.out = slurp(out_fd);
    r.err = slurp(err_fd);
    return r;
}

}  // namespace memra::tests
