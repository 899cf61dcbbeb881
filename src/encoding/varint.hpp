#pragma once
// LEB128 varints (unsigned, 7 bits per byte, low groups first), as Protocol Buffers and Kafka's
// record format write them. Used by the acknowledgement metadata (kafka/acks/ack_metadata.hpp).

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace processor::encoding {

// The number of bytes put_varint() writes for `value` (1 to 10).
inline std::size_t varint_size(std::uint64_t value) noexcept {
  return static_cast<std::size_t>(std::bit_width(value | 1) + 6) / 7;
}

// Appends `value` to `out` in its shortest encoding.
inline void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

enum class VarintStatus {
  Ok,
  Truncated,  // the bytes end inside the varint
  Overflow,   // more than 64 bits
  OverLong,   // not the shortest encoding (a trailing zero group)
};

// Reads the varint at bytes[*pos] into *value and moves *pos past it. On an error, *pos and
// *value are unspecified. Strict: only the shortest encoding of a value is accepted, so that one
// value has one encoding.
inline VarintStatus get_varint(std::string_view bytes, std::size_t* pos, std::uint64_t* value) noexcept {
  *value = 0;
  for (int shift = 0;; shift += 7) {
    if (*pos >= bytes.size()) return VarintStatus::Truncated;
    const auto byte = static_cast<std::uint8_t>(bytes[(*pos)++]);
    if (shift == 63 && byte > 1) return VarintStatus::Overflow;
    *value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return byte == 0 && shift > 0 ? VarintStatus::OverLong : VarintStatus::Ok;
  }
}

}  // namespace processor::encoding
