// Little-endian field access for packed, unaligned blocks. Blocks of 17/18/34/110 bytes are
// routinely unaligned (formats spec §1), so every multi-byte field is read with memcpy, never by
// casting pointers. x86-64 is little-endian, so a memcpy of the bytes is the value.
#pragma once

#include <cstdint>
#include <cstring>

namespace memra {

inline uint16_t load_u16(const uint8_t *p) {
    uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline int16_t load_i16(const uint8_t *p) {
    int16_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline float load_f32(const uint8_t *p) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline void store_u16(uint8_t *p, uint16_t v) { std::memcpy(p, &v, sizeof v); }
inline void store_i16(uint8_t *p, int16_t v) { std::memcpy(p, &v, sizeof v); }
inline void store_f32(uint8_t *p, float v) { std::memcpy(p, &v, sizeof v); }

// lo(b) / hi(b) of the spec (§0).
inline int lo4(uint8_t b) { return b & 0x0F; }
inline int hi4(uint8_t b) { return b >> 4; }

}  // namespace memra
