#include "kafka/checkpoint/checkpoint_record.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "encoding/epoch_micros.hpp"
#include "kafka/acks/ack_metadata.hpp"
#include "kafka/wrap_errors.hpp"

namespace processor::kafka::internal {
namespace {

constexpr std::size_t kIdDigits = 20;

// The checkpoint id of a key under `prefix`; nullopt for a key of a longer group name.
std::optional<std::uint64_t> parse_id(std::string_view key, const std::string& prefix) {
  const std::string_view rest = key.substr(prefix.size());
  std::uint64_t id = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), id);
  if (rest.size() != kIdDigits || error != std::errc() || end != rest.data() + rest.size())
    return std::nullopt;
  return id;
}

}  // namespace

[[noreturn]] void corrupt_checkpoint(std::string_view key, const std::string& why) {
  throw StateError(ErrorKind::Corruption, "corrupt checkpoint at key '" + std::string(key) + "': " + why);
}

std::chrono::system_clock::time_point checkpoint_time_from_micros(std::int64_t micros, std::string_view key) {
  const auto at = encoding::from_epoch_micros(micros);
  if (!at) corrupt_checkpoint(key, "creation time " + std::to_string(micros) + "us is out of range");
  return *at;
}

void check_checkpoint_topic(std::string_view topic, std::string_view key) {
  try {
    validate_topic(topic);
  } catch (const StateError& error) {
    corrupt_checkpoint(key, error.what());
  }
}

// The record is sized first and written in place: one allocation for 100k partitions.
std::string encode_checkpoint(const CheckpointInfo& checkpoint) {
  // Version 2 only when some partition has acknowledgements: see the header.
  const bool with_acks =
      std::any_of(checkpoint.acked.begin(), checkpoint.acked.end(), [&](const auto& entry) {
        return !entry.second.acked.empty() && checkpoint.offsets.contains(entry.first);
      });
  std::unordered_map<TopicPartition, std::string> acked;
  std::size_t size = 1 + 8 + 8 + 4 + 4;
  for (const auto& [tp, offset] : checkpoint.offsets) {
    size += 2 + tp.topic.size() + 4 + 8;
    if (!with_acks) continue;
    size += 4;
    const auto set = checkpoint.acked.find(tp);
    if (set == checkpoint.acked.end() || set->second.acked.empty()) continue;
    AckedSet at_position = set->second;
    at_position.committable = offset;  // REQUIRES of CheckpointInfo::acked; the record says so
    size += acked.emplace(tp, encode_ack_metadata_binary(at_position)).first->second.size();
  }
  std::string out(size, '\0');
  char* field = out.data();
  field =
      encoding::store_le<std::uint8_t>(field, with_acks ? kCheckpointVersionWithAcks : kCheckpointVersion);
  field = encoding::store_le<std::uint64_t>(field, checkpoint.id);
  field = encoding::store_le<std::int64_t>(field, encoding::to_epoch_micros(checkpoint.created_at));
  field = encoding::store_le<std::uint32_t>(field, static_cast<std::uint32_t>(checkpoint.offsets.size()));
  for (const auto& [tp, offset] : checkpoint.offsets) {
    field = encoding::store_le<std::uint16_t>(field, static_cast<std::uint16_t>(tp.topic.size()));
    std::memcpy(field, tp.topic.data(), tp.topic.size());
    field += tp.topic.size();
    field = encoding::store_le<std::int32_t>(field, tp.partition);
    field = encoding::store_le<std::int64_t>(field, offset);
    if (!with_acks) continue;
    const auto metadata = acked.find(tp);
    const std::string_view bytes =
        metadata == acked.end() ? std::string_view() : std::string_view(metadata->second);
    field = encoding::store_le<std::uint32_t>(field, static_cast<std::uint32_t>(bytes.size()));
    if (!bytes.empty()) std::memcpy(field, bytes.data(), bytes.size());
    field += bytes.size();
  }
  encoding::store_le<std::uint32_t>(field, encoding::crc32c(std::string_view(out).substr(0, size - 4)));
  return out;
}

CheckpointInfo decode_checkpoint(std::string_view bytes, const std::string& key) {
  CheckpointInfo checkpoint;
  // The count is only a hint until the checksum has passed; bound the reservation by what the
  // record can hold (14 bytes per partition at least).
  if (bytes.size() >= 25) {
    checkpoint.offsets.reserve(
        std::min<std::size_t>(encoding::load_le<std::uint32_t>(bytes.data() + 17), bytes.size() / 14));
  }
  const CheckpointHeader header = read_checkpoint(
      bytes, key,
      [&](std::string_view topic, std::int32_t partition, std::int64_t offset, std::string_view acked) {
        const auto [entry, added] =
            checkpoint.offsets.emplace(TopicPartition(std::string(topic), partition), offset);
        if (!added) {
          corrupt_checkpoint(key, "partition " + entry->first.to_key() + " is listed twice (offsets " +
                                      std::to_string(entry->second) + " and " + std::to_string(offset) + ")");
        }
        if (acked.empty()) return;
        AckedSet set;
        try {
          set = decode_ack_metadata_binary(acked);
        } catch (const StateError& error) {
          corrupt_checkpoint(key, "partition " + entry->first.to_key() + ": " + error.what());
        }
        if (set.committable != offset) {
          corrupt_checkpoint(key, "partition " + entry->first.to_key() + " is at " + std::to_string(offset) +
                                      ", its acknowledgements at " + std::to_string(set.committable));
        }
        if (set.acked.empty())
          corrupt_checkpoint(key, "partition " + entry->first.to_key() + " has an empty acknowledged set");
        checkpoint.acked.emplace(entry->first, std::move(set));
      });
  checkpoint.id = header.id;
  checkpoint.created_at = header.created_at;
  return checkpoint;
}

std::string checkpoint_key_prefix(const OffsetManagerOptions& options, const std::string& group) {
  return options.checkpoint_prefix + group + ":";
}

std::string checkpoint_id_text(std::uint64_t id) {
  char digits[kIdDigits + 1];
  std::snprintf(digits, sizeof digits, "%020llu", static_cast<unsigned long long>(id));
  return digits;
}

std::vector<std::uint64_t> stored_checkpoint_ids(state::StateBackend& backend, const std::string& prefix) {
  std::vector<std::uint64_t> ids;
  for (const auto& key : call_backend("listing checkpoints", [&] { return backend.list_keys(prefix); })) {
    if (const auto id = parse_id(key, prefix)) ids.push_back(*id);
  }
  return ids;
}

std::vector<StoredCheckpoint> load_checkpoints(state::StateBackend& backend, const std::string& prefix) {
  std::vector<StoredCheckpoint> checkpoints;
  call_backend("reading checkpoints", [&] {
    backend.for_each(prefix, [&](std::string_view key, std::string_view record) {
      if (const auto id = parse_id(key, prefix))
        checkpoints.push_back({*id, std::string(key), std::string(record)});
    });
  });
  return checkpoints;
}

}  // namespace processor::kafka::internal
