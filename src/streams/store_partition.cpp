#include "streams/store_partition.hpp"

#include <algorithm>

#include "streams/changelog_format.hpp"
#include "streams/state_keys.hpp"

namespace processor::streams::internal {

StorePartition::StorePartition(state::StateBackend& db, const std::string& name, std::int32_t partition)
    : db_(db),
      name_(name),
      partition_(partition),
      prefix_(data_prefix(name, partition)),
      position_key_(position_key(name, partition)) {
  if (const auto stored = db_.get(position_key_)) position_ = decode_position(*stored, position_key_);
}

std::string& StorePartition::data_key(std::string_view key) {
  scratch_key_.assign(prefix_);
  scratch_key_.append(key);
  return scratch_key_;
}

std::optional<std::string> StorePartition::get(std::string_view key) {
  if (const auto it = dirty_.find(key); it != dirty_.end()) return it->second;
  return db_.get(data_key(key));
}

void StorePartition::put(std::string_view key, std::string_view value) {
  if (const auto it = dirty_.find(key); it != dirty_.end()) {
    it->second.emplace(value);
  } else {
    dirty_.emplace(std::string(key), std::string(value));
  }
}

void StorePartition::remove(std::string_view key) {
  if (const auto it = dirty_.find(key); it != dirty_.end()) {
    it->second.reset();
  } else {
    dirty_.emplace(std::string(key), std::nullopt);
  }
}

void StorePartition::apply_committed(std::int64_t position) {
  state::WriteBatch batch;
  for (const auto& [key, value] : dirty_) {
    if (value) {
      batch.put(data_key(key), *value);
    } else {
      batch.remove(data_key(key));
    }
  }
  batch.put(position_key_, encode_position(position));
  db_.write(batch);
  position_ = position;
  dirty_.clear();
}

void StorePartition::wipe() {
  db_.remove(position_key_);
  position_.reset();
  dirty_.clear();
  restored_.clear();
  restored_bytes_.clear();
  constexpr std::size_t kKeysPerWrite = 10'000;
  state::WriteBatch batch;
  // Collect first, remove after: no write while the scan iterates.
  std::vector<std::string> keys;
  db_.for_each(prefix_, [&](std::string_view key, std::string_view) { keys.emplace_back(key); });
  for (const auto& key : keys) {
    batch.remove(key);
    if (batch.size() == kKeysPerWrite) {
      db_.write(batch);
      batch.clear();
    }
  }
  if (!batch.empty()) db_.write(batch);
}

void StorePartition::add_restored(std::string_view key, const std::optional<std::string_view>& value) {
  Restored& restored = restored_.emplace_back();
  restored.key = restored_bytes_.size();
  restored.key_size = prefix_.size() + key.size();
  restored_bytes_.append(prefix_).append(key);
  restored.value = restored_bytes_.size();
  if (value) {
    restored.value_size = value->size();
    restored_bytes_.append(*value);
  } else {
    restored.tombstone = true;
  }
}

void StorePartition::commit_restored(std::int64_t position) {
  // A few records (a standby's second of changelog, the tail after a warm copy): one write
  // through the log costs less than two table files and their ingestion, and keeps level 0 free
  // of tiny files.
  constexpr std::size_t kSmallLoad = 4'096;
  if (restored_.size() < kSmallLoad) {
    state::WriteBatch batch;
    for (const auto& restored : restored_) {
      const std::string_view key(restored_bytes_.data() + restored.key, restored.key_size);
      if (restored.tombstone) {
        batch.remove(key);
      } else {
        batch.put(key, std::string_view(restored_bytes_.data() + restored.value, restored.value_size));
      }
    }
    batch.put(position_key_, encode_position(position));
    db_.write(batch);
    restored_.clear();
    restored_bytes_.clear();
    position_ = position;
    return;
  }
  std::vector<state::StateBackend::UnloggedWrite> writes;
  writes.reserve(restored_.size());
  const std::string_view bytes = restored_bytes_;
  for (const auto& restored : restored_) {
    writes.push_back({bytes.substr(restored.key, restored.key_size),
                      restored.tombstone ? std::nullopt
                                         : std::optional<std::string_view>(
                                               bytes.substr(restored.value, restored.value_size))});
  }
  // Stable: of two records of one key, the later stays later; it is the one kept.
  std::stable_sort(writes.begin(), writes.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < writes.size(); ++i) {
    if (i + 1 < writes.size() && writes[i + 1].key == writes[i].key) continue;
    writes[kept++] = writes[i];
  }
  writes.resize(kept);
  // The data and the position as two runs: the data's file covers this store partition's keys
  // only, so that it overlaps no other partition's data.
  const std::string encoded = encode_position(position);
  const state::StateBackend::UnloggedWrite position_write{position_key_, encoded};
  const std::span<const state::StateBackend::UnloggedWrite> runs[] = {writes, {&position_write, 1}};
  db_.load_sorted(runs);
  restored_.clear();
  restored_bytes_.clear();
  position_ = position;
}

}  // namespace processor::streams::internal
