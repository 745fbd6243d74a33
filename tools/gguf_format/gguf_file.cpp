#include "gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace memra::gguf {

File::File(const std::string &path) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw ParseError(path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const int err = errno;
        ::close(fd);
        throw ParseError(path + ": " + (err ? std::strerror(err) : "not a regular file"));
    }
    size_ = size_t(st.st_size);
    if (size_ > 0) {
        void *p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            throw ParseError(path + ": mmap: " + std::strerror(err));
        }
        bytes_ = static_cast<const uint8_t *>(p);
    }
    ::close(fd);  // the mapping stays valid
    try {
        static const uint8_t kEmpty = 0;
        model_ = parse(bytes_ ? bytes_ : &kEmpty, size_);
    } catch (const ParseError &e) {
        if (bytes_) ::munmap(const_cast<uint8_t *>(bytes_), size_);
        throw ParseError(path + ": " + e.what());
    }
}

File::~File() {
    if (bytes_) ::munmap(const_cast<uint8_t *>(bytes_), size_);
}

}  // namespace memra::gguf
