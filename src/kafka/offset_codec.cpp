#include "kafka/offset_codec.hpp"

#include <array>
#include <chrono>
#include <cstring>

#include "kafka/le_codec.hpp"
#include "processor/error.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define PROCESSOR_HAVE_SSE42_CRC32C 1
#else
#define PROCESSOR_HAVE_SSE42_CRC32C 0
#endif

namespace processor::kafka::internal {
namespace {

constexpr std::uint8_t kHasHighWatermark = 1 << 0;
constexpr std::uint8_t kHasMetadata = 1 << 1;
constexpr std::uint8_t kHasLeaderEpoch = 1 << 2;
constexpr std::uint8_t kKnownFlags = kHasHighWatermark | kHasMetadata | kHasLeaderEpoch;

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

[[noreturn]] void corrupt(std::string_view key, const std::string& why) {
  throw StateError(ErrorKind::Corruption, "corrupt stored offset at key '" + std::string(key) + "': " + why);
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

std::size_t encoded_offset_size(const OffsetInfo& info) noexcept {
  return 2 + 8 + 8 + (info.high_watermark ? 8 : 0) + (info.leader_epoch ? 4 : 0) +
         (info.metadata ? 4 + info.metadata->size() : 0) + 4;
}

char* encode_offset_into(char* out, const OffsetInfo& info) noexcept {
  std::uint8_t flags = 0;
  if (info.high_watermark) flags |= kHasHighWatermark;
  if (info.metadata) flags |= kHasMetadata;
  if (info.leader_epoch) flags |= kHasLeaderEpoch;

  char* field = out;
  field = store_le<std::uint8_t>(field, kOffsetCodecVersion);
  field = store_le<std::uint8_t>(field, flags);
  field = store_le<std::int64_t>(field, info.offset);
  field = store_le<std::int64_t>(
      field, std::chrono::duration_cast<std::chrono::microseconds>(info.last_updated.time_since_epoch()).count());
  if (info.high_watermark) field = store_le<std::int64_t>(field, *info.high_watermark);
  if (info.leader_epoch) field = store_le<std::int32_t>(field, *info.leader_epoch);
  if (info.metadata) {
    field = store_le<std::uint32_t>(field, static_cast<std::uint32_t>(info.metadata->size()));
    std::memcpy(field, info.metadata->data(), info.metadata->size());
    field += info.metadata->size();
  }
  const auto crc = crc32c(std::string_view(out, static_cast<std::size_t>(field - out)));
  return store_le<std::uint32_t>(field, crc);
}

void append_offset(std::string& out, const OffsetInfo& info) {
  const std::size_t start = out.size();
  out.resize(start + encoded_offset_size(info));
  encode_offset_into(out.data() + start, info);
}

std::string encode_offset(const OffsetInfo& info) {
  std::string out;
  out.reserve(40 + (info.metadata ? info.metadata->size() : 0));
  append_offset(out, info);
  return out;
}

OffsetInfo decode_offset(std::string_view bytes, std::string_view key) {
  if (bytes.size() < 4) corrupt(key, "value of " + std::to_string(bytes.size()) + " bytes is too short");
  const std::string_view body = bytes.substr(0, bytes.size() - 4);
  LeReader trailer(bytes.substr(bytes.size() - 4), key, "stored offset");
  const auto stored_crc = trailer.get<std::uint32_t>();
  if (stored_crc != crc32c(body)) corrupt(key, "checksum mismatch");

  LeReader reader(body, key, "stored offset");
  const auto version = reader.get<std::uint8_t>();
  if (version != kOffsetCodecVersion) corrupt(key, "unsupported format version " + std::to_string(version));
  const auto flags = reader.get<std::uint8_t>();
  if ((flags & ~kKnownFlags) != 0) corrupt(key, "unknown flags " + std::to_string(flags));

  OffsetInfo info;
  info.offset = reader.get<std::int64_t>();
  info.last_updated = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::microseconds(reader.get<std::int64_t>())));
  if (flags & kHasHighWatermark) info.high_watermark = reader.get<std::int64_t>();
  if (flags & kHasLeaderEpoch) info.leader_epoch = reader.get<std::int32_t>();
  if (flags & kHasMetadata) {
    const auto length = reader.get<std::uint32_t>();
    info.metadata = std::string(reader.take(length));
  }
  if (reader.remaining() != 0) corrupt(key, std::to_string(reader.remaining()) + " unexpected trailing bytes");
  if (info.offset < 0) corrupt(key, "negative offset " + std::to_string(info.offset));
  return info;
}

}  // namespace processor::kafka::internal
