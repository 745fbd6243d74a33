// Positioned reads of weight bytes from the engine's GGUF file descriptors: never moves the
// caller's file offset, never closes its fd, survives EINTR and short reads, and reads through
// O_DIRECT descriptors too. And what a file is, so that bytes are cached only under the identity
// of the file they came from (docs/file-weights.md, "Reads" and "Keying").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace memra {

// Reads exactly `length` bytes at `offset` of `fd` into `dst`, or throws memra::Error with
// status 3 naming `named_fd` (default: `fd`; the caller's number when `fd` is the library's
// duplicate of it), the errno text (or end of file), the offset and the length. `dst` may have
// been partly written when it throws. An O_DIRECT descriptor (offsets, lengths and buffers must
// then be block-aligned, which GGUF offsets are not) is read in aligned blocks through an aligned
// buffer of its own, the bytes asked for copied out; the flag may also be set while reading.
void read_exact(int fd, uint64_t offset, size_t length, uint8_t *dst, int named_fd = -1);

// MEMRA_CPU_EXPERT_DIRECT_IO=1: a new descriptor of the very file `fd` names (reopened through
// /proc/self/fd, its inode checked), with O_DIRECT and O_CLOEXEC, for the library's own reads; -1
// when there is none to be had (no /proc, a filesystem without O_DIRECT such as tmpfs, the fd limit,
// another file found there): the caller then reads through `fd`, buffered. The caller's open file
// (and its flags) is never touched.
int reopen_direct(int fd);

// What a file is, as far as cached bytes are concerned: the inode, and the size and modification
// time that change when it is rewritten in place (a file replaced under its path has another
// inode, or the same inode number reused with another time). Not ctime: it also changes when
// nothing of the content does (a rename, a link, an unlink of the open file).
struct FileIdentity {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileIdentity &o) const {
        return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns;
    }
};

// fstat of `fd`; throws status 3 like read_exact (the read of `length` bytes at `offset` is
// what could not be done) when the fd is not open.
FileIdentity identify_file(int fd, uint64_t offset, size_t length, int named_fd = -1);

// A file's identity and the time it was taken (CLOCK_REALTIME_COARSE, read just before the fstat).
//
// A read is trusted when the file's identity after the read is the one before it. A change
// during the read stamps the file with the kernel's coarse clock (or a finer one), so it shows in
// the modification time unless that time already is the current tick: a file changed twice
// within one tick keeps its time. So a snapshot is *settled* only once its modification time lies
// before the tick it was taken in (plus the filesystem's granularity: a stamp of whole seconds is
// taken to come from a filesystem with coarse timestamps, up to FAT's 2 s), or far ahead of the
// clock (a time set explicitly, which no change made now can repeat). A file modified in the
// current tick is looked at again a moment later.
struct FileSnapshot {
    FileIdentity id;
    int64_t seen_ns = 0;
};

FileSnapshot snapshot_file(int fd, uint64_t offset, size_t length, int named_fd = -1);

// Whether any change of the file after `s` was taken, up to the moment `now_ns` (coarse clock),
// must have changed its identity.
bool settled(const FileSnapshot &s, int64_t now_ns);

// A settled snapshot of `fd`: when the file was modified within the current tick (or within the
// last 2 s on a coarse-timestamp filesystem), waits for that to pass and looks again. A file that
// is still being modified after a few looks is status 3 ("the file keeps changing").
FileSnapshot settled_snapshot(int fd, uint64_t offset, size_t length, int named_fd);

// After a read of `fd` begun when `s` was settled: whether the file is still exactly what `s` saw,
// hence whether the bytes read are that file's (false when it cannot be examined).
bool unchanged_since(int fd, const FileSnapshot &s);

// "read of <length> bytes at offset <offset> from fd <fd> failed: <why>", and that as status 3.
std::string read_failure(int fd, uint64_t offset, size_t length, const std::string &why);
[[noreturn]] void fail_read(int fd, uint64_t offset, size_t length, const std::string &why);

}  // namespace memra
