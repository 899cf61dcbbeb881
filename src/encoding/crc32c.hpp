#pragma once
// CRC32C (Castagnoli): the checksum that seals every stored format (stored offsets, checkpoint
// records), as Kafka's record batches use it.

#include <cstdint>
#include <string_view>

namespace processor::encoding {

// CRC32C (Castagnoli), as used by Kafka record batches. Uses the SSE4.2 crc32 instruction when
// the CPU has it (checked once, at the first call), else crc32c_portable().
std::uint32_t crc32c(std::string_view bytes) noexcept;

// CRC32C from a byte-at-a-time table: the reference the hardware version must equal.
std::uint32_t crc32c_portable(std::string_view bytes) noexcept;

// Whether this CPU has the SSE4.2 crc32 instruction (and this build can use it).
bool crc32c_hardware_available() noexcept;

// CRC32C with the SSE4.2 instruction. REQUIRES: crc32c_hardware_available().
std::uint32_t crc32c_hardware(std::string_view bytes) noexcept;

}  // namespace processor::encoding
