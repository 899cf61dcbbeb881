// OffsetManager's checkpoints: positions stored atomically with operator state, committed to the
// offset store once the checkpoint is complete.
//
// A checkpoint record, little-endian, sealed like stored offsets:
//   u8 version (1), u64 id, i64 created_at (µs since epoch), u32 partition count,
//   per partition: u16 topic length, topic bytes, i32 partition, i64 offset;
//   u32 CRC32C of everything above.

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "kafka/offset_codec.hpp"
#include "kafka/offset_manager_impl.hpp"
#include "kafka/wrap_errors.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

using detail::kNoOffset;
using detail::PartitionSlot;

namespace {

constexpr std::uint8_t kCheckpointVersion = 1;
constexpr std::size_t kIdDigits = 20;

template <class T>
void put_le(std::string& out, T value) {
  auto bits = static_cast<std::make_unsigned_t<T>>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

[[noreturn]] void corrupt(const std::string& key, const std::string& why) {
  throw StateError(ErrorKind::Corruption, "corrupt checkpoint at key '" + key + "': " + why);
}

template <class T>
T get_le(std::string_view bytes, std::size_t& pos, const std::string& key) {
  if (bytes.size() - pos < sizeof(T)) corrupt(key, "record is truncated");
  std::make_unsigned_t<T> bits = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    bits |= static_cast<std::make_unsigned_t<T>>(static_cast<unsigned char>(bytes[pos + i])) << (8 * i);
  }
  pos += sizeof(T);
  return static_cast<T>(bits);
}

std::string encode_checkpoint(const CheckpointInfo& checkpoint) {
  std::string out;
  put_le<std::uint8_t>(out, kCheckpointVersion);
  put_le<std::uint64_t>(out, checkpoint.id);
  put_le<std::int64_t>(out, std::chrono::duration_cast<std::chrono::microseconds>(
                                checkpoint.created_at.time_since_epoch()).count());
  put_le<std::uint32_t>(out, static_cast<std::uint32_t>(checkpoint.offsets.size()));
  for (const auto& [tp, offset] : checkpoint.offsets) {
    put_le<std::uint16_t>(out, static_cast<std::uint16_t>(tp.topic.size()));
    out += tp.topic;
    put_le<std::int32_t>(out, tp.partition);
    put_le<std::int64_t>(out, offset);
  }
  put_le<std::uint32_t>(out, internal::crc32c(out));
  return out;
}

CheckpointInfo decode_checkpoint(std::string_view bytes, const std::string& key) {
  if (bytes.size() < 4) corrupt(key, "record is too short");
  const std::string_view body = bytes.substr(0, bytes.size() - 4);
  std::size_t trailer_pos = body.size();
  if (get_le<std::uint32_t>(bytes, trailer_pos, key) != internal::crc32c(body)) corrupt(key, "checksum mismatch");
  std::size_t pos = 0;
  const auto version = get_le<std::uint8_t>(body, pos, key);
  if (version != kCheckpointVersion) corrupt(key, "unsupported format version " + std::to_string(version));
  CheckpointInfo checkpoint;
  checkpoint.id = get_le<std::uint64_t>(body, pos, key);
  checkpoint.created_at = std::chrono::system_clock::time_point(std::chrono::duration_cast<
      std::chrono::system_clock::duration>(std::chrono::microseconds(get_le<std::int64_t>(body, pos, key))));
  const auto count = get_le<std::uint32_t>(body, pos, key);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto length = get_le<std::uint16_t>(body, pos, key);
    if (body.size() - pos < length) corrupt(key, "record is truncated");
    std::string topic(body.substr(pos, length));
    pos += length;
    const auto partition = get_le<std::int32_t>(body, pos, key);
    const auto offset = get_le<std::int64_t>(body, pos, key);
    if (offset < 0 || partition < 0) corrupt(key, "negative offset or partition");
    checkpoint.offsets.emplace(TopicPartition(std::move(topic), partition), offset);
  }
  if (pos != body.size()) corrupt(key, "unexpected trailing bytes");
  return checkpoint;
}

std::string id_text(std::uint64_t id) {
  char digits[kIdDigits + 1];
  std::snprintf(digits, sizeof digits, "%020llu", static_cast<unsigned long long>(id));
  return digits;
}

}  // namespace

namespace {

std::string checkpoint_key_prefix(const OffsetManagerOptions& options, const std::string& group) {
  return options.checkpoint_prefix + group + ":";
}

state::StateBackend& require_backend(const std::shared_ptr<state::StateBackend>& backend) {
  if (!backend) throw StateError(ErrorKind::InvalidArgument, "checkpoints need a state backend, the manager has none");
  return *backend;
}

// The checkpoint ids under `prefix` (keys of a longer group name are not ids and are skipped).
std::vector<std::uint64_t> stored_ids(state::StateBackend& backend, const std::string& prefix) {
  std::vector<std::uint64_t> ids;
  for (const auto& key : internal::call_backend("listing checkpoints", [&] { return backend.list_keys(prefix); })) {
    const std::string_view rest = std::string_view(key).substr(prefix.size());
    std::uint64_t id = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), id);
    if (rest.size() == kIdDigits && error == std::errc() && end == rest.data() + rest.size()) ids.push_back(id);
  }
  return ids;  // ascending: zero-padded keys sort numerically
}

}  // namespace

CheckpointInfo OffsetManager::checkpoint(std::uint64_t checkpoint_id, const state::WriteBatch& operator_state) {
  state::StateBackend& backend = require_backend(impl_->backend);
  std::lock_guard lock(impl_->commit_mutex);
  if (checkpoint_id <= impl_->last_checkpoint_id) {
    throw StateError(ErrorKind::InvalidArgument, "checkpoint id " + std::to_string(checkpoint_id) +
                                                     " is not above the last one, " +
                                                     std::to_string(impl_->last_checkpoint_id));
  }
  CheckpointInfo checkpoint;
  checkpoint.id = checkpoint_id;
  checkpoint.created_at = std::chrono::system_clock::now();
  {
    std::lock_guard registry_lock(impl_->partitions.mutex());
    std::lock_guard gate_lock(impl_->gate_mutex);
    impl_->partitions.for_each_locked([&](const PartitionSlot& slot) {
      std::int64_t position = std::max(slot.latest.load(std::memory_order_acquire),
                                       slot.committed.load(std::memory_order_acquire));
      if (slot.cold->gate) position = std::max(position, slot.cold->gate->highest());
      // Tracked records still in flight are not in the state yet: only what is acknowledged.
      if (slot.cold->acks) position = std::max(position, slot.cold->acks->committable());
      if (position != kNoOffset) checkpoint.offsets.emplace(TopicPartition(*slot.topic, slot.partition), position);
    });
  }

  const std::string prefix = checkpoint_key_prefix(impl_->options, impl_->group);
  state::WriteBatch batch = operator_state;
  batch.put(prefix + id_text(checkpoint_id), encode_checkpoint(checkpoint));
  auto ids = stored_ids(backend, prefix);
  ids.push_back(checkpoint_id);
  const std::size_t retained = std::max<std::size_t>(impl_->options.checkpoints_retained, 1);
  for (std::size_t i = 0; i + retained < ids.size(); ++i) batch.remove(prefix + id_text(ids[i]));
  internal::call_backend("writing checkpoint " + std::to_string(checkpoint_id), [&] { backend.write(batch); });

  impl_->last_checkpoint_id = checkpoint_id;
  impl_->pending_checkpoints.emplace(checkpoint_id, checkpoint);
  std::lock_guard checkpoint_lock(impl_->checkpoint_mutex);
  impl_->last_checkpoint = checkpoint;
  return checkpoint;
}

std::size_t OffsetManager::notify_checkpoint_complete(std::uint64_t checkpoint_id) {
  std::lock_guard lock(impl_->commit_mutex);
  const auto found = impl_->pending_checkpoints.find(checkpoint_id);
  if (found == impl_->pending_checkpoints.end()) {
    throw StateError(ErrorKind::NotFound, "checkpoint " + std::to_string(checkpoint_id) +
                                              " was not taken by this manager or is already complete");
  }
  const auto wall_now = std::chrono::system_clock::now();
  std::vector<PartitionOffset> batch;
  std::vector<PartitionSlot*> slots;
  for (const auto& [tp, offset] : found->second.offsets) {
    PartitionSlot& slot = slot_for(tp.topic, tp.partition);
    if (offset <= slot.committed.load(std::memory_order_acquire)) continue;
    batch.emplace_back(tp, Impl::info_at(slot, offset, wall_now));
    slots.push_back(&slot);
  }
  if (!batch.empty()) {
    impl_->store_and_apply_locked(batch, slots, trigger_.events.load(std::memory_order_relaxed), false);
  }
  // This checkpoint subsumes every earlier one.
  impl_->pending_checkpoints.erase(impl_->pending_checkpoints.begin(), std::next(found));
  return batch.size();
}

std::vector<std::uint64_t> OffsetManager::list_checkpoints() {
  return stored_ids(require_backend(impl_->backend), checkpoint_key_prefix(impl_->options, impl_->group));
}

std::optional<CheckpointInfo> OffsetManager::restore_from_checkpoint(std::optional<std::uint64_t> checkpoint_id) {
  state::StateBackend& backend = require_backend(impl_->backend);
  std::lock_guard lock(impl_->commit_mutex);
  const std::string prefix = checkpoint_key_prefix(impl_->options, impl_->group);
  std::uint64_t id = 0;
  if (checkpoint_id) {
    id = *checkpoint_id;
  } else {
    const auto ids = stored_ids(backend, prefix);
    if (ids.empty()) return std::nullopt;
    id = ids.back();
  }
  const std::string key = prefix + id_text(id);
  const auto record = internal::call_backend("reading checkpoint " + std::to_string(id), [&] { return backend.get(key); });
  if (!record) throw StateError(ErrorKind::NotFound, "no checkpoint " + std::to_string(id) + " at key '" + key + "'");
  CheckpointInfo checkpoint = decode_checkpoint(*record, key);
  if (checkpoint.id != id) corrupt(key, "record holds checkpoint " + std::to_string(checkpoint.id));

  RestoreReport report = journal(backend, prefix, checkpoint);
  std::unordered_map<TopicPartition, std::int64_t> positions = checkpoint.offsets;
  if (!report.external_moves.empty()) {
    if (report.policy == OffsetManagerOptions::RestorePolicy::Fail) {
      std::string moves;
      for (const auto& move : report.external_moves) {
        moves += " " + move.partition.to_key() + " (checkpoint " + std::to_string(move.checkpoint_offset) +
                 ", store " + std::to_string(move.store_offset) + ")";
      }
      throw StateError(ErrorKind::Kafka, "restore of checkpoint " + std::to_string(id) + " refused: group '" +
                                             impl_->group + "' was moved outside this application:" + moves);
    }
    if (report.policy == OffsetManagerOptions::RestorePolicy::TrustStore) {
      for (const auto& move : report.external_moves) positions[move.partition] = move.store_offset;
    }
  }

  std::vector<PartitionSlot*> slots;
  for (const auto& [tp, offset] : positions) slots.push_back(&slot_for(tp.topic, tp.partition));
  {
    std::lock_guard gate_lock(impl_->gate_mutex);
    std::unique_lock view_lock(impl_->view_mutex);
    std::size_t index = 0;
    for (const auto& [tp, offset] : positions) {
      PartitionSlot& slot = *slots[index++];
      OffsetInfo info(offset);
      impl_->set_committed_locked(slot, info);
      slot.floor.store(offset, std::memory_order_relaxed);
      slot.latest.store(offset, std::memory_order_release);
      impl_->drop_tracking_locked(slot);
    }
  }
  impl_->last_checkpoint_id = std::max(impl_->last_checkpoint_id, id);
  impl_->pending_checkpoints.clear();
  checkpoint.offsets = positions;
  std::lock_guard checkpoint_lock(impl_->checkpoint_mutex);
  impl_->last_checkpoint = checkpoint;
  impl_->last_restore_report = std::move(report);
  return checkpoint;
}

RestoreReport OffsetManager::journal(state::StateBackend& backend, const std::string& prefix,
                                     const CheckpointInfo& checkpoint) {
  RestoreReport report;
  report.checkpoint_id = checkpoint.id;
  report.policy = impl_->options.restore_policy;
  const auto stored = internal::call_backend("reading the offsets of group '" + impl_->group + "' for the restore journal",
                                             [&] { return impl_->store->get_all_offsets(impl_->group); });
  // Every offset a retained checkpoint of ours gave each partition.
  std::unordered_map<TopicPartition, std::vector<std::int64_t>> ours;
  for (const auto& [tp, offset] : checkpoint.offsets) ours[tp].push_back(offset);
  for (const std::uint64_t retained : stored_ids(backend, prefix)) {
    if (retained == checkpoint.id) continue;  // already decoded by the caller
    const std::string key = prefix + id_text(retained);
    const auto bytes = internal::call_backend("reading checkpoint " + std::to_string(retained), [&] { return backend.get(key); });
    if (!bytes) continue;
    for (const auto& [tp, offset] : decode_checkpoint(*bytes, key).offsets) ours[tp].push_back(offset);
  }
  const bool checkpoints_only = impl_->strategy.kind() == OffsetCommitStrategy::Kind::OnCheckpoint;
  for (const auto& [tp, checkpoint_offset] : checkpoint.offsets) {
    const auto found = stored.find(tp);
    if (found == stored.end()) continue;
    const std::int64_t store_offset = found->second.offset;
    if (store_offset == checkpoint_offset) continue;
    const auto& known = ours[tp];
    const bool explained = std::find(known.begin(), known.end(), store_offset) != known.end();
    if (explained && store_offset < checkpoint_offset) {
      report.store_behind.push_back(tp);
    } else if (!explained && (checkpoints_only || store_offset < checkpoint_offset)) {
      report.external_moves.push_back(ExternalMove{tp, checkpoint_offset, store_offset});
    }
  }
  return report;
}

std::optional<RestoreReport> OffsetManager::last_restore_report() const {
  std::lock_guard checkpoint_lock(impl_->checkpoint_mutex);
  return impl_->last_restore_report;
}

std::optional<std::int64_t> OffsetManager::checkpointed_offset(std::string_view topic, std::int32_t partition) const {
  std::lock_guard checkpoint_lock(impl_->checkpoint_mutex);
  const auto it = impl_->last_checkpoint.offsets.find(TopicPartition(std::string(topic), partition));
  if (it == impl_->last_checkpoint.offsets.end()) return std::nullopt;
  return it->second;
}

}  // namespace processor::kafka
