#include "encoding/crc32c.hpp"

#include <array>

#include "encoding/fixed.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define PROCESSOR_HAVE_SSE42_CRC32C 1
#else
#define PROCESSOR_HAVE_SSE42_CRC32C 0
#endif

namespace processor::encoding {
namespace {

constexpr std::array<std::uint32_t, 256> make_crc32c_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    table[i] = crc;
  }
  return table;
}
constexpr auto kCrc32cTable = make_crc32c_table();

#if PROCESSOR_HAVE_SSE42_CRC32C
// Eight bytes per instruction, then the tail byte by byte. Compiled for SSE4.2 whatever the
// build's -march; only called after the CPU check.
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(const char* data, std::size_t size) noexcept {
  std::uint64_t crc = 0xFFFFFFFFu;
#if defined(__x86_64__)
  for (; size >= 8; data += 8, size -= 8) crc = _mm_crc32_u64(crc, load_le<std::uint64_t>(data));
#endif
  auto crc32 = static_cast<std::uint32_t>(crc);
  for (; size >= 4; data += 4, size -= 4) crc32 = _mm_crc32_u32(crc32, load_le<std::uint32_t>(data));
  for (; size > 0; ++data, --size) crc32 = _mm_crc32_u8(crc32, static_cast<unsigned char>(*data));
  return crc32 ^ 0xFFFFFFFFu;
}
#endif

bool detect_crc32c_hardware() noexcept {
#if PROCESSOR_HAVE_SSE42_CRC32C
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

}  // namespace

std::uint32_t crc32c_portable(std::string_view bytes) noexcept {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (char c : bytes) crc = (crc >> 8) ^ kCrc32cTable[(crc ^ static_cast<unsigned char>(c)) & 0xff];
  return crc ^ 0xFFFFFFFFu;
}

bool crc32c_hardware_available() noexcept {
  static const bool available = detect_crc32c_hardware();
  return available;
}

std::uint32_t crc32c_hardware(std::string_view bytes) noexcept {
#if PROCESSOR_HAVE_SSE42_CRC32C
  return crc32c_sse42(bytes.data(), bytes.size());
#else
  return crc32c_portable(bytes);
#endif
}

std::uint32_t crc32c(std::string_view bytes) noexcept {
  return crc32c_hardware_available() ? crc32c_hardware(bytes) : crc32c_portable(bytes);
}

}  // namespace processor::encoding
