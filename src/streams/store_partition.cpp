#include "streams/store_partition.hpp"

#include "streams/changelog_format.hpp"
#include "streams/state_keys.hpp"

namespace processor::streams::internal {

StorePartition::StorePartition(state::RocksDbStateBackend& db, const std::string& name, std::int32_t partition)
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

void StorePartition::add_restored(state::WriteBatch& batch, std::string_view key,
                                  const std::optional<std::string_view>& value) {
  if (value) {
    batch.put(data_key(key), *value);
  } else {
    batch.remove(data_key(key));
  }
}

void StorePartition::commit_restored(state::WriteBatch& batch, std::int64_t position) {
  batch.put(position_key_, encode_position(position));
  db_.write_unlogged(batch);
  batch.clear();
  position_ = position;
}

}  // namespace processor::streams::internal
