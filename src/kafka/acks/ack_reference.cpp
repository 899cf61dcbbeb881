#include "kafka/acks/ack_reference.hpp"

#include <charconv>
#include <cstdio>

#include "encoding/crc32c.hpp"

namespace processor::kafka::internal {
namespace {

constexpr std::size_t kCrcDigits = 8;

bool is_lower_hex(char c) noexcept { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

std::string format_ack_reference(const AckReference& reference) {
  char crc[kCrcDigits + 1];
  std::snprintf(crc, sizeof crc, "%08x", static_cast<unsigned>(reference.crc32c));
  return std::string(kAckReferencePrefix) + std::to_string(reference.length) + ":" + crc;
}

std::string format_ack_reference(std::string_view spilled) {
  return format_ack_reference(AckReference{spilled.size(), encoding::crc32c(spilled)});
}

std::optional<AckReference> parse_ack_reference(std::string_view metadata) noexcept {
  if (!metadata.starts_with(kAckReferencePrefix)) return std::nullopt;
  const std::string_view rest = metadata.substr(kAckReferencePrefix.size());
  const std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view length_text = rest.substr(0, colon);
  const std::string_view crc_text = rest.substr(colon + 1);
  // Canonical only: decimal without sign or leading zeros, exactly 8 lowercase hex digits.
  if (length_text.empty() || length_text.front() == '0' || crc_text.size() != kCrcDigits) return std::nullopt;
  for (const char c : length_text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  for (const char c : crc_text) {
    if (!is_lower_hex(c)) return std::nullopt;
  }
  AckReference reference;
  const auto [length_end, length_error] =
      std::from_chars(length_text.data(), length_text.data() + length_text.size(), reference.length);
  if (length_error != std::errc() || length_end != length_text.data() + length_text.size())
    return std::nullopt;
  std::from_chars(crc_text.data(), crc_text.data() + crc_text.size(), reference.crc32c, 16);
  return reference;
}

bool matches_ack_reference(const AckReference& reference, std::string_view spilled) noexcept {
  return spilled.size() == reference.length && encoding::crc32c(spilled) == reference.crc32c;
}

std::string ack_spill_key(std::string_view prefix, std::string_view group, const TopicPartition& tp) {
  std::string key;
  key.reserve(prefix.size() + group.size() + tp.topic.size() + 13);
  key.append(prefix).append(group).append(":").append(tp.topic).append(":").append(
      std::to_string(tp.partition));
  return key;
}

}  // namespace processor::kafka::internal
