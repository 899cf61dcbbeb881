#include "processor/kafka/offset_store.hpp"

#include <string>

#include "kafka/types/high_watermark_check.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

void validate_group(std::string_view group) {
  if (group.empty())
    throw StateError(ErrorKind::InvalidArgument, "invalid consumer group '': it must not be empty");
}

void validate_offset_entry(const TopicPartition& tp, const OffsetInfo& info) {
  validate_topic_partition(tp);
  if (info.offset < 0) {
    throw StateError(ErrorKind::InvalidArgument, "invalid offset " + std::to_string(info.offset) + " for " +
                                                     tp.to_key() + ": it must be >= 0");
  }
  if (info.high_watermark)
    internal::require_valid_high_watermark(tp.topic, tp.partition, *info.high_watermark);
}

void OffsetStore::store_offsets(std::string_view group, std::span<const PartitionOffset> offsets) {
  for (const auto& [tp, info] : offsets) store_offset(group, tp, info);
}

namespace {

// The outcome of a store_offsets() that already returned.
class StoredAlready final : public PendingStore {
 public:
  bool wait(std::chrono::milliseconds) override { return true; }
  void get() override {}
};

}  // namespace

std::unique_ptr<PendingStore> OffsetStore::begin_store_offsets(std::string_view group,
                                                               std::span<const PartitionOffset> offsets) {
  store_offsets(group, offsets);
  return std::make_unique<StoredAlready>();
}

void OffsetStore::for_each_offset(std::string_view group, const OffsetVisitor& visit) {
  for (const auto& [tp, info] : get_all_offsets(group)) visit(tp.topic, tp.partition, info);
}

void InMemoryOffsetStore::store_offset(std::string_view group, const TopicPartition& tp,
                                       const OffsetInfo& info) {
  const PartitionOffset entry{tp, info};
  store_offsets(group, std::span<const PartitionOffset>(&entry, 1));
}

void InMemoryOffsetStore::store_offsets(std::string_view group, std::span<const PartitionOffset> offsets) {
  validate_group(group);
  for (const auto& [tp, info] : offsets) validate_offset_entry(tp, info);
  processor::detail::MutexLock lock(mutex_);
  auto& stored = groups_[std::string(group)];
  stored.reserve(stored.size() + offsets.size());
  for (const auto& [tp, info] : offsets) stored.insert_or_assign(tp, info);
}

std::optional<OffsetInfo> InMemoryOffsetStore::get_offset(std::string_view group, const TopicPartition& tp) {
  validate_group(group);
  validate_topic_partition(tp);
  processor::detail::SharedLock lock(mutex_);
  const auto group_it = groups_.find(std::string(group));
  if (group_it == groups_.end()) return std::nullopt;
  const auto it = group_it->second.find(tp);
  if (it == group_it->second.end()) return std::nullopt;
  return it->second;
}

std::unordered_map<TopicPartition, OffsetInfo> InMemoryOffsetStore::get_all_offsets(std::string_view group) {
  validate_group(group);
  processor::detail::SharedLock lock(mutex_);
  const auto group_it = groups_.find(std::string(group));
  if (group_it == groups_.end()) return {};
  return group_it->second;
}

void InMemoryOffsetStore::delete_offset(std::string_view group, const TopicPartition& tp) {
  validate_group(group);
  validate_topic_partition(tp);
  processor::detail::MutexLock lock(mutex_);
  const auto group_it = groups_.find(std::string(group));
  if (group_it != groups_.end()) group_it->second.erase(tp);
}

void InMemoryOffsetStore::clear_offsets(std::string_view group) {
  validate_group(group);
  processor::detail::MutexLock lock(mutex_);
  groups_.erase(std::string(group));
}

}  // namespace processor::kafka
