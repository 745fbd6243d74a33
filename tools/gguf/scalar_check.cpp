#include "scalar_check.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

extern char **environ;

namespace memra::gguf_tool {

int run_self_with_scalar_backend(const std::vector<std::string> &args) {
    std::vector<std::string> env;
    for (char **e = environ; *e; ++e)
        if (std::strncmp(*e, "MEMRA_CPU_EXPERT_BACKEND=", 25) != 0) env.emplace_back(*e);
    env.emplace_back("MEMRA_CPU_EXPERT_BACKEND=scalar");
    std::vector<std::string> argv_strings{"/proc/self/exe"};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char *> argv, envp;
    for (std::string &a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string &e : env) envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void write_floats(const std::string &path, const std::vector<float> &v) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char *>(v.data()), std::streamsize(v.size() * sizeof(float)));
    if (!f) throw std::runtime_error(path + ": cannot write");
}

std::vector<float> read_floats(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error(path + ": cannot open");
    const std::string bytes(std::istreambuf_iterator<char>(f), {});
    if (bytes.size() % sizeof(float)) throw std::runtime_error(path + ": not a whole number of f32 values");
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
}

double max_relative_l2(const std::vector<float> &a, const std::vector<float> &b, size_t n) {
    if (a.size() != b.size() || n == 0 || a.size() % n) throw std::invalid_argument("output sizes differ");
    double worst = 0;
    for (size_t t = 0; t < a.size() / n; ++t) {
        double d = 0, r = 0;
        for (size_t i = t * n; i < (t + 1) * n; ++i) {
            d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
            r += double(b[i]) * b[i];
        }
        const double rel = r > 0 ? std::sqrt(d / r) : (d > 0 ? INFINITY : 0);
        if (!(rel <= worst)) worst = rel;  // NaN propagates as the worst
    }
    return worst;
}

Agreement compare_with_scalar(const std::vector<float> &outputs, const std::vector<float> &reference, size_t n) {
    Agreement a;
    a.max_rel_l2 = max_relative_l2(outputs, reference, n);
    a.identical = std::equal(outputs.begin(), outputs.end(), reference.begin(), reference.end(),
                             [](float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; });
    return a;
}

}  // namespace memra::gguf_tool
