#pragma once
// The stored form of an OffsetInfo: versioned, checksummed, little-endian.
//
//   u8  version (1)
//   u8  flags: bit 0 high watermark, bit 1 metadata, bit 2 leader epoch
//   i64 offset
//   i64 last_updated, microseconds since the Unix epoch
//   i64 high watermark            (when flag 0)
//   i32 leader epoch              (when flag 2)
//   u32 metadata length + bytes   (when flag 1)
//   u32 CRC32C of everything above

#include <cstdint>
#include <string>
#include <string_view>

#include "processor/kafka/offset_info.hpp"

namespace processor::kafka::internal {

inline constexpr std::uint8_t kOffsetCodecVersion = 1;

std::string encode_offset(const OffsetInfo& info);

// Appends the encoding of `info` to `out` (what encode_offset returns), so that many values can
// share one buffer.
void append_offset(std::string& out, const OffsetInfo& info);

// The size of the encoding of `info`.
std::size_t encoded_offset_size(const OffsetInfo& info) noexcept;

// Writes the encoding of `info` at `out`; returns its end.
// REQUIRES: encoded_offset_size(info) writable bytes at `out`.
char* encode_offset_into(char* out, const OffsetInfo& info) noexcept;

// Throws StateError(Corruption) naming `key` when `bytes` fails its checksum, has an unknown
// version, or is truncated or over-long.
OffsetInfo decode_offset(std::string_view bytes, std::string_view key);

}  // namespace processor::kafka::internal
