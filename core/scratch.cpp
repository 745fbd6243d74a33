#include "scratch.h"

namespace memra {

AlignedBuffer &thread_scratch() {
    thread_local AlignedBuffer buffer;
    return buffer;
}

}  // namespace memra
