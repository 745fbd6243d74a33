#include "dispatch/fd_module.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/dll/shared_library.hpp>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

namespace memra {
namespace {

struct FileId {
    dev_t dev;
    ino_t ino;
    bool operator<(const FileId &o) const { return std::tie(dev, ino) < std::tie(o.dev, o.ino); }
};

// One descriptor per module file, open for the rest of the process. glibc remembers every name
// a module was opened by and hands that module back for the same name without opening anything:
// were the descriptor closed and its number reused for another plugin, "/proc/self/fd/N" would
// bring back the first one. A name bound to its file for good rules that out, for the price of
// one descriptor per plugin file (a handful) however often plugins are loaded.
int pinned_descriptor(UniqueFd file, std::string &error) {
    static std::mutex mutex;
    static auto *pinned = new std::map<FileId, int>;  // never destroyed, like the registry
    struct stat st;
    if (::fstat(file.get(), &st) != 0) {
        error = std::string("fstat: ") + std::strerror(errno);
        return -1;
    }
    const std::lock_guard<std::mutex> lock(mutex);
    const auto [it, added] = pinned->emplace(FileId{st.st_dev, st.st_ino}, file.get());
    if (added) file.release();
    // Code that closes descriptors it does not own could have put another file under our number.
    struct stat now;
    if (::fstat(it->second, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
        error = "descriptor " + std::to_string(it->second) + ", kept open for the module, was closed by someone else";
        return -1;
    }
    return it->second;
}

}  // namespace

std::shared_ptr<boost::dll::shared_library> load_module(UniqueFd file, std::string &error) {
    const int fd = pinned_descriptor(std::move(file), error);
    if (fd < 0) return nullptr;
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    try {
        namespace dll = boost::dll;
        return std::make_shared<dll::shared_library>(path, dll::load_mode::rtld_now | dll::load_mode::rtld_local);
    } catch (const std::exception &e) {
        error = e.what();
        if (::access("/proc/self/fd", X_OK) != 0) error += " (plugins are loaded through /proc/self/fd: is /proc mounted?)";
        return nullptr;
    }
}

}  // namespace memra
