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
#include <cstring>
#include <typeinfo>
#include <unordered_map>

#include "kafka/le_codec.hpp"
#include "kafka/offset_codec.hpp"
#include "kafka/offset_manager_impl.hpp"
#include "kafka/wrap_errors.hpp"
#include "processor/error.hpp"
#include "processor/kafka/state_backend_offset_store.hpp"

namespace processor::kafka {

using detail::kNoOffset;
using detail::PartitionSlot;

namespace {

constexpr std::uint8_t kCheckpointVersion = 1;
constexpr std::size_t kIdDigits = 20;

using internal::LeReader;
using internal::load_le;
using internal::store_le;

[[noreturn]] void corrupt(const std::string& key, const std::string& why) {
  throw StateError(ErrorKind::Corruption, "corrupt checkpoint at key '" + key + "': " + why);
}

std::int64_t to_micros(std::chrono::system_clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count();
}

std::chrono::system_clock::time_point from_micros(std::int64_t micros) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::microseconds(micros)));
}

// The record is sized first and written in place: one allocation for 100k partitions.
std::string encode_checkpoint(const CheckpointInfo& checkpoint) {
  std::size_t size = 1 + 8 + 8 + 4 + 4;
  for (const auto& [tp, offset] : checkpoint.offsets) size += 2 + tp.topic.size() + 4 + 8;
  std::string out(size, '\0');
  char* field = out.data();
  field = store_le<std::uint8_t>(field, kCheckpointVersion);
  field = store_le<std::uint64_t>(field, checkpoint.id);
  field = store_le<std::int64_t>(field, to_micros(checkpoint.created_at));
  field = store_le<std::uint32_t>(field, static_cast<std::uint32_t>(checkpoint.offsets.size()));
  for (const auto& [tp, offset] : checkpoint.offsets) {
    field = store_le<std::uint16_t>(field, static_cast<std::uint16_t>(tp.topic.size()));
    std::memcpy(field, tp.topic.data(), tp.topic.size());
    field += tp.topic.size();
    field = store_le<std::int32_t>(field, tp.partition);
    field = store_le<std::int64_t>(field, offset);
  }
  store_le<std::uint32_t>(field, internal::crc32c(std::string_view(out).substr(0, size - 4)));
  return out;
}

struct CheckpointHeader {
  std::uint64_t id = 0;
  std::chrono::system_clock::time_point created_at{};
  std::uint32_t count = 0;
};

// Checks a record (checksum, version, structure) and calls visit(topic, partition, offset) for
// each of its partitions, without allocating. Throws StateError(Corruption) naming `key`.
template <class Visit>
CheckpointHeader read_checkpoint(std::string_view bytes, const std::string& key, Visit&& visit) {
  if (bytes.size() < 4) corrupt(key, "record is too short");
  const std::string_view body = bytes.substr(0, bytes.size() - 4);
  if (load_le<std::uint32_t>(bytes.data() + body.size()) != internal::crc32c(body)) corrupt(key, "checksum mismatch");
  LeReader reader(body, key, "checkpoint");
  const auto version = reader.get<std::uint8_t>();
  if (version != kCheckpointVersion) corrupt(key, "unsupported format version " + std::to_string(version));
  CheckpointHeader header;
  header.id = reader.get<std::uint64_t>();
  header.created_at = from_micros(reader.get<std::int64_t>());
  header.count = reader.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < header.count; ++i) {
    const std::string_view topic = reader.take(reader.get<std::uint16_t>());
    const auto partition = reader.get<std::int32_t>();
    const auto offset = reader.get<std::int64_t>();
    if (offset < 0 || partition < 0) corrupt(key, "negative offset or partition");
    visit(topic, partition, offset);
  }
  if (!reader.at_end()) corrupt(key, "unexpected trailing bytes");
  return header;
}

CheckpointInfo decode_checkpoint(std::string_view bytes, const std::string& key) {
  CheckpointInfo checkpoint;
  // The count is only a hint until the checksum has passed; bound the reservation by what the
  // record can hold (14 bytes per partition at least).
  if (bytes.size() >= 25) {
    checkpoint.offsets.reserve(std::min<std::size_t>(load_le<std::uint32_t>(bytes.data() + 17), bytes.size() / 14));
  }
  const CheckpointHeader header =
      read_checkpoint(bytes, key, [&](std::string_view topic, std::int32_t partition, std::int64_t offset) {
        checkpoint.offsets.emplace(TopicPartition(std::string(topic), partition), offset);
      });
  checkpoint.id = header.id;
  checkpoint.created_at = header.created_at;
  return checkpoint;
}

std::string id_text(std::uint64_t id) {
  char digits[kIdDigits + 1];
  std::snprintf(digits, sizeof digits, "%020llu", static_cast<unsigned long long>(id));
  return digits;
}

std::string checkpoint_key_prefix(const OffsetManagerOptions& options, const std::string& group) {
  return options.checkpoint_prefix + group + ":";
}

state::StateBackend& require_backend(const std::shared_ptr<state::StateBackend>& backend) {
  if (!backend) throw StateError(ErrorKind::InvalidArgument, "checkpoints need a state backend, the manager has none");
  return *backend;
}

// The checkpoint id of a key under `prefix`; nullopt for a key of a longer group name.
std::optional<std::uint64_t> parse_id(std::string_view key, const std::string& prefix) {
  const std::string_view rest = key.substr(prefix.size());
  std::uint64_t id = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), id);
  if (rest.size() != kIdDigits || error != std::errc() || end != rest.data() + rest.size()) return std::nullopt;
  return id;
}

// The checkpoint ids under `prefix`, ascending (zero-padded keys sort numerically).
std::vector<std::uint64_t> stored_ids(state::StateBackend& backend, const std::string& prefix) {
  std::vector<std::uint64_t> ids;
  for (const auto& key : internal::call_backend("listing checkpoints", [&] { return backend.list_keys(prefix); })) {
    if (const auto id = parse_id(key, prefix)) ids.push_back(*id);
  }
  return ids;
}

struct StoredCheckpoint {
  std::uint64_t id;
  std::string key;
  std::string record;
};

// Every retained checkpoint record under `prefix`, ascending by id, read in one pass: a restore
// needs them all, and listing the keys first would read every record twice.
std::vector<StoredCheckpoint> load_checkpoints(state::StateBackend& backend, const std::string& prefix) {
  std::vector<StoredCheckpoint> checkpoints;
  internal::call_backend("reading checkpoints", [&] {
    backend.for_each(prefix, [&](std::string_view key, std::string_view record) {
      if (const auto id = parse_id(key, prefix)) checkpoints.push_back({*id, std::string(key), std::string(record)});
    });
  });
  return checkpoints;
}

// The checkpoint's offsets by topic, then by partition number, for the journal's pass over the
// store: there the topics come in runs (key order), so a lookup is a compare of the topic name
// and an index into a vector, instead of hashing a TopicPartition into a 100k-entry map.
// Each entry also records whether the store holds the partition at all.
class CheckpointIndex {
 public:
  static constexpr std::int64_t kNone = -1;  // checkpoint offsets are never negative

  struct Entry {
    std::int64_t offset = kNone;
    bool in_store = false;
  };

  explicit CheckpointIndex(const CheckpointInfo& checkpoint) {
    for (const auto& [tp, offset] : checkpoint.offsets) {
      Topic& topic = topics_[tp.topic];
      const auto partition = static_cast<std::size_t>(tp.partition);
      // Dense while the numbers stay near the count seen: a topic with partition 2^31-1 alone
      // must not allocate 16 GiB.
      if (partition < topic.dense.size() || partition <= 2 * topic.count + 1024) {
        if (partition >= topic.dense.size()) topic.dense.resize(partition + 1);
        topic.dense[partition].offset = offset;
      } else {
        topic.sparse[tp.partition].offset = offset;
      }
      ++topic.count;
    }
  }

  // The checkpoint's entry of the partition, or nullptr.
  Entry* find(std::string_view topic_name, std::int32_t partition) {
    if (last_ == nullptr || topic_name != last_name_) {
      const auto found = topics_.find(topic_name);
      if (found == topics_.end()) return nullptr;
      last_name_ = found->first;
      last_ = &found->second;
    }
    const auto index = static_cast<std::size_t>(partition);
    if (index < last_->dense.size() && last_->dense[index].offset != kNone) return &last_->dense[index];
    const auto sparse = last_->sparse.find(partition);
    return sparse == last_->sparse.end() ? nullptr : &sparse->second;
  }

 private:
  struct Topic {
    std::size_t count = 0;
    std::vector<Entry> dense;
    std::unordered_map<std::int32_t, Entry> sparse;
  };
  std::unordered_map<std::string_view, Topic> topics_;  // views of the checkpoint's topic names
  std::string_view last_name_;
  Topic* last_ = nullptr;
};

// What the journal needs of the manager.
struct JournalContext {
  OffsetStore& store;
  const std::string& group;
  OffsetManagerOptions::RestorePolicy policy;
  bool checkpoints_only;  // under on_checkpoint(): every store offset should be a checkpoint's
};

// What the journal found: its report, and what the store holds for every checkpoint partition
// where that is not the checkpoint's offset (nullopt: nothing), so that the restore sets the
// committed view to the store's truth.
struct JournalResult {
  RestoreReport report;
  std::unordered_map<TopicPartition, std::optional<std::int64_t>> store_differs;
};

// The journal compares the checkpoint with the store partition by partition, and needs the
// other retained checkpoints only where the two differ. So: one pass over the store, looking
// each partition up in the checkpoint's index (nothing else is built); then one pass over each
// other record, consulted only for the partitions that differ. Every record is still checked,
// so that a corrupt one fails the restore as before.
JournalResult run_journal(const JournalContext& context, const CheckpointInfo& checkpoint,
                          const std::vector<StoredCheckpoint>& retained) {
  JournalResult result;
  RestoreReport& report = result.report;
  report.checkpoint_id = checkpoint.id;
  report.policy = context.policy;

  struct Difference {
    std::optional<std::int64_t> store_offset;  // nullopt: the store has none
    bool explained;  // a retained checkpoint of ours gave the partition this offset
  };
  std::unordered_map<TopicPartition, Difference> differences;
  CheckpointIndex index(checkpoint);
  std::size_t in_store = 0;
  TopicPartition probe;
  const auto compare = [&](std::string_view topic, std::int32_t partition, std::int64_t store_offset) {
    CheckpointIndex::Entry* entry = index.find(topic, partition);
    if (entry == nullptr) return;
    if (!entry->in_store) {
      entry->in_store = true;
      ++in_store;
    }
    if (entry->offset == store_offset && differences.empty()) return;
    probe.topic.assign(topic);
    probe.partition = partition;
    // A partition stored twice counts with its later value, as in get_all_offsets().
    if (entry->offset == store_offset) {
      differences.erase(probe);
    } else {
      differences.insert_or_assign(probe, Difference{store_offset, false});
    }
  };
  // The exact type only: a subclass may override get_all_offsets().
  if (typeid(context.store) == typeid(StateBackendOffsetStore)) {
    static_cast<StateBackendOffsetStore&>(context.store)
        .for_each_offset(context.group, [&](std::string_view topic, std::int32_t partition, const OffsetInfo& info) {
          compare(topic, partition, info.offset);
        });
  } else {
    const auto stored =
        internal::call_backend("reading the offsets of group '" + context.group + "' for the restore journal",
                               [&] { return context.store.get_all_offsets(context.group); });
    for (const auto& [tp, info] : stored) compare(tp.topic, tp.partition, info.offset);
  }
  // Partitions the store has never seen (checkpointed, never completed): rare, so looked up
  // only when the count says there are some.
  if (in_store < checkpoint.offsets.size()) {
    for (const auto& [tp, offset] : checkpoint.offsets) {
      if (!index.find(tp.topic, tp.partition)->in_store) differences.emplace(tp, Difference{std::nullopt, false});
    }
  }

  for (const StoredCheckpoint& other : retained) {
    if (other.id == checkpoint.id) continue;  // already decoded by the caller
    read_checkpoint(other.record, other.key, [&](std::string_view topic, std::int32_t partition, std::int64_t offset) {
      if (differences.empty()) return;
      probe.topic.assign(topic);
      probe.partition = partition;
      const auto found = differences.find(probe);
      if (found != differences.end() && found->second.store_offset == offset) found->second.explained = true;
    });
  }
  if (differences.empty()) return result;

  for (const auto& [tp, checkpoint_offset] : checkpoint.offsets) {
    const auto found = differences.find(tp);
    if (found == differences.end()) continue;
    const auto [store_offset, explained] = found->second;
    result.store_differs.emplace(tp, store_offset);
    if (!store_offset) continue;  // never committed: nothing moved it
    if (explained && *store_offset < checkpoint_offset) {
      report.store_behind.push_back(tp);
    } else if (!explained && (context.checkpoints_only || *store_offset < checkpoint_offset)) {
      report.external_moves.push_back(ExternalMove{tp, checkpoint_offset, *store_offset});
    }
  }
  return result;
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
  // Built once and shared by the pending list and the last checkpoint: the caller's copy is the
  // only one made.
  auto checkpoint = std::make_shared<CheckpointInfo>();
  checkpoint->id = checkpoint_id;
  checkpoint->created_at = std::chrono::system_clock::now();
  {
    std::lock_guard registry_lock(impl_->partitions.mutex());
    std::lock_guard gate_lock(impl_->gate_mutex);
    checkpoint->offsets.reserve(impl_->partitions.size_locked());
    impl_->partitions.for_each_locked([&](const PartitionSlot& slot) {
      // Where processing stands, which is where the state is: not the committed view, which
      // may be ahead (a store moved forward, an older checkpoint restored).
      std::int64_t position = Impl::position_locked(slot);
      if (position == kNoOffset) position = slot.committed.load(std::memory_order_acquire);
      if (position != kNoOffset) checkpoint->offsets.emplace(TopicPartition(*slot.topic, slot.partition), position);
    });
  }

  const std::string prefix = checkpoint_key_prefix(impl_->options, impl_->group);
  state::WriteBatch batch = operator_state;
  batch.put(prefix + id_text(checkpoint_id), encode_checkpoint(*checkpoint));
  auto ids = stored_ids(backend, prefix);
  ids.push_back(checkpoint_id);
  const std::size_t retained = std::max<std::size_t>(impl_->options.checkpoints_retained, 1);
  for (std::size_t i = 0; i + retained < ids.size(); ++i) batch.remove(prefix + id_text(ids[i]));
  internal::call_backend("writing checkpoint " + std::to_string(checkpoint_id), [&] { backend.write(batch); });

  impl_->last_checkpoint_id = checkpoint_id;
  impl_->pending_checkpoints.emplace(checkpoint_id, checkpoint);
  std::lock_guard checkpoint_lock(impl_->checkpoint_mutex);
  impl_->last_checkpoint = checkpoint;
  return *checkpoint;
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
  for (const auto& [tp, offset] : found->second->offsets) {
    PartitionSlot& slot = slot_for(tp.topic, tp.partition);
    if (!Impl::changes_committed(slot, offset)) continue;
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
  const std::vector<StoredCheckpoint> retained = load_checkpoints(backend, prefix);
  if (!checkpoint_id && retained.empty()) return std::nullopt;
  const std::uint64_t id = checkpoint_id ? *checkpoint_id : retained.back().id;
  const auto stored = std::find_if(retained.begin(), retained.end(),
                                   [id](const StoredCheckpoint& candidate) { return candidate.id == id; });
  if (stored == retained.end()) {
    throw StateError(ErrorKind::NotFound,
                     "no checkpoint " + std::to_string(id) + " at key '" + prefix + id_text(id) + "'");
  }
  CheckpointInfo checkpoint = decode_checkpoint(stored->record, stored->key);
  if (checkpoint.id != id) corrupt(stored->key, "record holds checkpoint " + std::to_string(checkpoint.id));

  const JournalContext context{*impl_->store, impl_->group, impl_->options.restore_policy,
                               impl_->strategy.kind() == OffsetCommitStrategy::Kind::OnCheckpoint};
  JournalResult journal = run_journal(context, checkpoint, retained);
  RestoreReport& report = journal.report;
  if (!report.external_moves.empty()) {
    if (report.policy == OffsetManagerOptions::RestorePolicy::Fail) {
      std::string moves;
      for (const auto& move : report.external_moves) {
        moves.append(" ").append(move.partition.to_key()).append(" (checkpoint ");
        moves.append(std::to_string(move.checkpoint_offset)).append(", store ");
        moves.append(std::to_string(move.store_offset)).append(")");
      }
      throw StateError(ErrorKind::Kafka, "restore of checkpoint " + std::to_string(id) + " refused: group '" +
                                             impl_->group + "' was moved outside this application:" + moves);
    }
    if (report.policy == OffsetManagerOptions::RestorePolicy::TrustStore) {
      // The restored positions: the checkpoint's, with the store's where the group was moved.
      for (const auto& move : report.external_moves) checkpoint.offsets[move.partition] = move.store_offset;
    }
  }

  std::vector<PartitionSlot*> slots;
  slots.reserve(checkpoint.offsets.size());
  impl_->partitions.reserve_additional(checkpoint.offsets.size());
  for (const auto& [tp, offset] : checkpoint.offsets) slots.push_back(&slot_for(tp.topic, tp.partition));
  {
    std::lock_guard gate_lock(impl_->gate_mutex);
    std::unique_lock view_lock(impl_->view_mutex);
    std::size_t index = 0;
    OffsetInfo store_info(0);
    for (const auto& [tp, position] : checkpoint.offsets) {
      // The committed view is what the store holds, so that completions commit every restored
      // position the store is behind on.
      store_info.offset = position;
      bool in_store = true;
      if (!journal.store_differs.empty()) {
        if (const auto differs = journal.store_differs.find(tp); differs != journal.store_differs.end()) {
          in_store = differs->second.has_value();
          if (in_store) store_info.offset = *differs->second;
        }
      }
      impl_->start_at_locked(*slots[index++], position, in_store ? &store_info : nullptr);
    }
  }
  impl_->last_checkpoint_id = std::max(impl_->last_checkpoint_id, id);
  auto restored = std::make_shared<const CheckpointInfo>(checkpoint);
  // The restored checkpoint can be completed: a crash may have come before its completion.
  impl_->pending_checkpoints.clear();
  impl_->pending_checkpoints.emplace(id, restored);
  std::lock_guard checkpoint_lock(impl_->checkpoint_mutex);
  impl_->last_checkpoint = std::move(restored);
  impl_->last_restore_report = std::move(report);
  return checkpoint;
}

std::optional<RestoreReport> OffsetManager::last_restore_report() const {
  std::lock_guard checkpoint_lock(impl_->checkpoint_mutex);
  return impl_->last_restore_report;
}

std::optional<std::int64_t> OffsetManager::checkpointed_offset(std::string_view topic, std::int32_t partition) const {
  std::lock_guard checkpoint_lock(impl_->checkpoint_mutex);
  if (!impl_->last_checkpoint) return std::nullopt;
  const auto it = impl_->last_checkpoint->offsets.find(TopicPartition(std::string(topic), partition));
  if (it == impl_->last_checkpoint->offsets.end()) return std::nullopt;
  return it->second;
}

}  // namespace processor::kafka
