#pragma once
// The checkpoint record: the positions of one checkpoint, stored in the state backend under
// "<checkpoint_prefix><group>:<id, 20 digits>" in the same atomic write batch as the operator
// state. Little-endian, sealed like stored offsets:
//   u8  version (1 or 2)
//   u64 id
//   i64 created_at, microseconds since the Unix epoch
//   u32 partition count, then per partition: u16 topic length, topic bytes, i32 partition, i64 offset,
//       and in version 2 only: u32 length, then that many bytes of acknowledgement metadata
//       before base64 (kafka/acks/ack_metadata.hpp) whose committable offset is the partition's
//       offset and which acknowledges at least one record; length 0 when none
//   u32 CRC32C of everything above
// Version 2 is written only when a partition has acknowledgements above its position, so that
// checkpoints without them stay readable by builds that know version 1 only.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "encoding/crc32c.hpp"
#include "encoding/fixed.hpp"
#include "processor/error.hpp"
#include "processor/kafka/offset_manager_options.hpp"
#include "processor/state/state_backend.hpp"

namespace processor::kafka::internal {

inline constexpr std::uint8_t kCheckpointVersion = 1;
inline constexpr std::uint8_t kCheckpointVersionWithAcks = 2;

[[noreturn]] void corrupt_checkpoint(std::string_view key, const std::string& why);
// Both throw StateError(Corruption) naming `key`: for a time system_clock cannot hold, and for a
// topic name Kafka does not allow.
std::chrono::system_clock::time_point checkpoint_time_from_micros(std::int64_t micros, std::string_view key);
void check_checkpoint_topic(std::string_view topic, std::string_view key);

std::string encode_checkpoint(const CheckpointInfo& checkpoint);

struct CheckpointHeader {
  std::uint64_t id = 0;
  std::chrono::system_clock::time_point created_at{};
  std::uint32_t count = 0;
};

// Checks a record (checksum, version, structure) and calls visit(topic, partition, offset) for
// each of its partitions, without allocating; visit(topic, partition, offset, acked) when it
// takes the acknowledgement metadata too (empty when none; checked by decode_checkpoint() only).
// Throws StateError(Corruption) naming `key`.
template <class Visit>
CheckpointHeader read_checkpoint(std::string_view bytes, const std::string& key, Visit&& visit) {
  if (bytes.size() < 4) corrupt_checkpoint(key, "record is too short");
  const std::string_view body = bytes.substr(0, bytes.size() - 4);
  if (encoding::load_le<std::uint32_t>(bytes.data() + body.size()) != encoding::crc32c(body))
    corrupt_checkpoint(key, "checksum mismatch");
  encoding::LeReader reader(body, key, "checkpoint");
  const auto version = reader.get<std::uint8_t>();
  if (version != kCheckpointVersion && version != kCheckpointVersionWithAcks) {
    corrupt_checkpoint(key, "unsupported format version " + std::to_string(version));
  }
  CheckpointHeader header;
  header.id = reader.get<std::uint64_t>();
  header.created_at = checkpoint_time_from_micros(reader.get<std::int64_t>(), key);
  header.count = reader.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < header.count; ++i) {
    const std::string_view topic = reader.take(reader.get<std::uint16_t>());
    const auto partition = reader.get<std::int32_t>();
    const auto offset = reader.get<std::int64_t>();
    std::string_view acked;
    if (version == kCheckpointVersionWithAcks) acked = reader.take(reader.get<std::uint32_t>());
    if (offset < 0 || partition < 0) corrupt_checkpoint(key, "negative offset or partition");
    check_checkpoint_topic(topic, key);
    if constexpr (std::is_invocable_v<Visit&, std::string_view, std::int32_t, std::int64_t,
                                      std::string_view>) {
      visit(topic, partition, offset, acked);
    } else {
      visit(topic, partition, offset);
    }
  }
  if (!reader.at_end()) corrupt_checkpoint(key, "unexpected trailing bytes");
  return header;
}

// Throws StateError(Corruption) naming `key` when the record is not exactly the format above
// (the acknowledgement metadata as decode_ack_metadata_binary() accepts it).
CheckpointInfo decode_checkpoint(std::string_view bytes, const std::string& key);

// The key of checkpoint `id` is checkpoint_key_prefix(options, group) + checkpoint_id_text(id):
// zero-padded, so that keys sort by id.
std::string checkpoint_key_prefix(const OffsetManagerOptions& options, const std::string& group);
std::string checkpoint_id_text(std::uint64_t id);

// The checkpoint ids under `prefix`, ascending. Keys of a longer group name are skipped.
std::vector<std::uint64_t> stored_checkpoint_ids(state::StateBackend& backend, const std::string& prefix);

struct StoredCheckpoint {
  std::uint64_t id;
  std::string key;
  std::string record;
};

// Every retained checkpoint record under `prefix`, ascending by id, read in one pass: a restore
// needs them all, and listing the keys first would read every record twice.
std::vector<StoredCheckpoint> load_checkpoints(state::StateBackend& backend, const std::string& prefix);

}  // namespace processor::kafka::internal
