// memra_process_test's children made by fork() start threads (the library's helper threads and
// prefetch worker, started afresh in the child), which glibc supports and ThreadSanitizer refuses
// by default after a fork of a multi-threaded process ("starting new threads after multi-threaded
// fork is not supported"). Read by the TSan runtime at start-up; TSAN_OPTIONS still wins.
//
// And such a child ends with exit(): LeakSanitizer would then report as leaks what the parent's
// other threads held (their thread_local buffers, the calls they were in), reachable only from
// those threads' stacks, which the child does not have. Its check is skipped in forked children
// (the test process itself, and the children it starts with exec, keep it).
// Unused in builds without these sanitizers.
#include <unistd.h>

namespace {
const pid_t g_test_process = getpid();
}

extern "C" __attribute__((visibility("default"), used)) const char *__tsan_default_options() {
    return "die_after_fork=0";
}

extern "C" __attribute__((visibility("default"), used)) int __lsan_is_turned_off() {
    return getpid() != g_test_process;
}
