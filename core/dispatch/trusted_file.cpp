#include "dispatch/trusted_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace memra {
namespace {

// The rule of the dynamic loader for secure processes, sudo's plugins and PAM's modules: only
// root or we ourselves may own it, and no one else may write it. A sticky world-writable
// directory such as /tmp is refused too: anyone may add a file there, and that is all it takes.
// A POSIX ACL that lets anyone else write shows in the group bits (they hold the ACL mask).
std::string untrusted_reason(const struct stat &st, const std::string &what) {
    const uid_t euid = ::geteuid();
    if (st.st_uid != 0 && st.st_uid != euid)
        return "untrusted: " + what + " is owned by uid " + std::to_string(st.st_uid) +
               " (trusted: root, or uid " + std::to_string(euid) + ", this process's effective user)";
    const bool group = st.st_mode & S_IWGRP, others = st.st_mode & S_IWOTH;
    if (!group && !others) return {};
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return "untrusted: " + what + " is writable by " + (group && others ? "group and others" : group ? "group" : "others") +
           " (mode " + mode + ")";
}

}  // namespace

UniqueFd &UniqueFd::operator=(UniqueFd &&other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = other.release();
    }
    return *this;
}

UniqueFd::~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
}

UniqueFd open_plugin_dir(const std::string &path, std::string &untrusted) {
    UniqueFd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    struct stat st;
    if (!dir || ::fstat(dir.get(), &st) != 0) return UniqueFd();
    untrusted = untrusted_reason(st, "directory " + path);
    return dir;
}

UniqueFd open_trusted_file(int dir_fd, const std::string &dir, const std::string &name, std::string &why) {
    const std::string path = dir + "/" + name;
    // O_NOFOLLOW: a link would make the file's real directory, the one whose writers matter, a
    // different one from the directory judged. O_NONBLOCK: a FIFO must not hang the load.
    UniqueFd file(::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
    if (!file) {
        why = errno == ELOOP ? "untrusted: " + path + " is a symbolic link (plugin files must be regular files in the directory searched)"
                             : "cannot open " + path + ": " + std::strerror(errno);
        return file;
    }
    struct stat st;
    if (::fstat(file.get(), &st) != 0) {
        why = "cannot stat " + path + ": " + std::strerror(errno);
        return UniqueFd();
    }
    why = S_ISREG(st.st_mode) ? untrusted_reason(st, path) : "untrusted: " + path + " is not a regular file";
    return why.empty() ? std::move(file) : UniqueFd();
}

}  // namespace memra
