// Opens plugin directories and the files in them only when nobody but root or this process's
// effective user can have put them there (docs/security.md): whoever can write a plugin
// directory or a plugin file runs code inside every process that loads the library. Everything
// is judged through the descriptor that is then used, so what was checked is what is read and
// loaded, however the path changes meanwhile.
#pragma once

#include <string>
#include <utility>

namespace memra {

// A file descriptor closed when it goes out of scope.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(UniqueFd &&other) noexcept : fd_(other.release()) {}
    UniqueFd &operator=(UniqueFd &&other) noexcept;
    UniqueFd(const UniqueFd &) = delete;
    UniqueFd &operator=(const UniqueFd &) = delete;
    ~UniqueFd();

    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    int release() { return std::exchange(fd_, -1); }

private:
    int fd_ = -1;
};

// The directory `path` (symbolic links in the path are followed: the directory it ends at is
// the one judged). An invalid UniqueFd when it cannot be opened; `untrusted` is set, and the
// descriptor still returned, when it is owned by someone else or writable by group or others,
// so that its manifests can be reported as refused.
UniqueFd open_plugin_dir(const std::string &path, std::string &untrusted);

// The file `name` (a plain name, no '/') of the directory `dir_fd` (`dir` names it in messages):
// a regular file, not a symbolic link, owned by root or the effective user and not writable by
// group or others. An invalid UniqueFd and `why` ("untrusted: ..." or "cannot open ...") else.
UniqueFd open_trusted_file(int dir_fd, const std::string &dir, const std::string &name, std::string &why);

}  // namespace memra
