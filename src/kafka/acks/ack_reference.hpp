#pragma once
// Spilled acknowledgement metadata: when a partition's acknowledgement metadata
// (kafka/acks/ack_metadata.hpp) is longer than the broker takes (metadata_budget_bytes), the
// OffsetManager writes it to its state backend under ack_spill_key() and commits, as the
// offset's metadata, a reference to it:
//
//   @acks/v1:<length>:<crc32c>
//
// <length> is the spilled metadata's size in bytes, in decimal without leading zeros (> 0);
// <crc32c> its CRC32C (encoding/crc32c.hpp) as 8 lowercase hex digits. '@' is not in the base64
// alphabet, so a reference is never mistaken for inline metadata, nor inline metadata for one.
// The spilled value is the base64 text that would have been committed inline. The length and
// checksum tie a reference to one value: after a crash between the backend write and the
// commit, the backend holds a newer value than the committed reference names, and a reader
// sees the mismatch instead of trusting acknowledgements of another offset.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka::internal {

inline constexpr std::string_view kAckReferencePrefix = "@acks/v1:";

struct AckReference {
  std::uint64_t length = 0;
  std::uint32_t crc32c = 0;
  friend bool operator==(const AckReference&, const AckReference&) = default;
};

// The reference to `spilled` (REQUIRES: not empty).
std::string format_ack_reference(std::string_view spilled);
// The text of `reference` (REQUIRES: length > 0).
std::string format_ack_reference(const AckReference& reference);

// Whether `metadata` claims to be a reference (starts with '@'): such metadata is never base64.
inline bool is_ack_reference(std::string_view metadata) noexcept {
  return !metadata.empty() && metadata.front() == '@';
}

// The reference `metadata` holds; nullopt unless it is exactly the format above (so that
// format_ack_reference() of a value with that length and checksum gives `metadata` back).
std::optional<AckReference> parse_ack_reference(std::string_view metadata) noexcept;

// Whether `spilled` is the value `reference` names.
bool matches_ack_reference(const AckReference& reference, std::string_view spilled) noexcept;

// The state backend key of a partition's spilled metadata: prefix + group + ":" + topic + ":" +
// partition. Unambiguous although groups may hold ':': topics never do, so the last two fields
// are read from the right.
std::string ack_spill_key(std::string_view prefix, std::string_view group, const TopicPartition& tp);

}  // namespace processor::kafka::internal
