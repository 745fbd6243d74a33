// Threads the library starts (team helpers, the prefetch worker, the spare-slab thread, split
// direct reads) take none of the process's signals: they stay with the engine's threads, whose
// handlers and sigwait loops expect them. A thread inherits its creator's mask, so each is
// started while this guard blocks every signal in the creating thread; the mask is restored when
// the guard goes, whether the start succeeded or threw.
#pragma once

#include <pthread.h>
#include <signal.h>

namespace memra {

class AllSignalsBlocked {
public:
    AllSignalsBlocked() {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old_);
    }
    ~AllSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
    AllSignalsBlocked(const AllSignalsBlocked &) = delete;
    AllSignalsBlocked &operator=(const AllSignalsBlocked &) = delete;

private:
    sigset_t old_;
};

}  // namespace memra
