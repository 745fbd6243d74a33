#include "stats.h"

namespace memra {

Stats &stats() {
    static Stats s;  // constant-initialised atomics: no construction order to worry about
    return s;
}

}  // namespace memra
