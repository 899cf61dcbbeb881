#include "processor/kafka/state_backend_offset_store.hpp"

#include <charconv>

#include "kafka/offset_codec.hpp"
#include "kafka/wrap_errors.hpp"
#include "processor/error.hpp"

namespace processor::kafka {
namespace {

// Parses the part of a key after the group prefix, "topic:partition". Returns nullopt when the
// key belongs to a longer group name ("x:topic:partition"): topics never contain ':'.
std::optional<TopicPartition> parse_partition_key(std::string_view rest, std::string_view key) {
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || rest.find(':') != colon) return std::nullopt;
  const std::string_view topic = rest.substr(0, colon);
  const std::string_view number = rest.substr(colon + 1);
  std::int32_t partition = -1;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), partition);
  if (error != std::errc() || end != number.data() + number.size() || partition < 0 || topic.empty()) {
    throw StateError(ErrorKind::Corruption, "corrupt offset key '" + std::string(key) + "': expected <topic>:<partition>");
  }
  return TopicPartition(std::string(topic), partition);
}

}  // namespace

StateBackendOffsetStore::StateBackendOffsetStore(std::shared_ptr<state::StateBackend> backend, std::string prefix)
    : backend_(std::move(backend)), prefix_(std::move(prefix)) {
  if (!backend_) throw StateError(ErrorKind::InvalidArgument, "StateBackendOffsetStore needs a state backend, got null");
}

std::string StateBackendOffsetStore::group_prefix(std::string_view group) const {
  std::string out;
  out.reserve(prefix_.size() + group.size() + 1);
  out.append(prefix_).append(group).push_back(':');
  return out;
}

std::string StateBackendOffsetStore::key_for(std::string_view group, const TopicPartition& tp) const {
  return group_prefix(group) + tp.to_key();
}

void StateBackendOffsetStore::store_offset(std::string_view group, const TopicPartition& tp, const OffsetInfo& info) {
  const PartitionOffset entry{tp, info};
  store_offsets(group, std::span<const PartitionOffset>(&entry, 1));
}

void StateBackendOffsetStore::store_offsets(std::string_view group, std::span<const PartitionOffset> offsets) {
  validate_group(group);
  if (offsets.empty()) return;
  state::WriteBatch batch;
  for (const auto& [tp, info] : offsets) {
    validate_offset_entry(tp, info);
    batch.put(key_for(group, tp), internal::encode_offset(info));
  }
  internal::call_backend("storing offsets of group '" + std::string(group) + "'", [&] { backend_->write(batch); });
}

std::optional<OffsetInfo> StateBackendOffsetStore::get_offset(std::string_view group, const TopicPartition& tp) {
  validate_group(group);
  validate_topic_partition(tp);
  const std::string key = key_for(group, tp);
  auto value = internal::call_backend("reading offset '" + key + "'", [&] { return backend_->get(key); });
  if (!value) return std::nullopt;
  return internal::decode_offset(*value, key);
}

std::unordered_map<TopicPartition, OffsetInfo> StateBackendOffsetStore::get_all_offsets(std::string_view group) {
  validate_group(group);
  const std::string prefix = group_prefix(group);
  auto entries = internal::call_backend("reading offsets of group '" + std::string(group) + "'",
                                        [&] { return backend_->scan(prefix); });
  std::unordered_map<TopicPartition, OffsetInfo> out;
  out.reserve(entries.size());
  for (const auto& [key, value] : entries) {
    auto tp = parse_partition_key(std::string_view(key).substr(prefix.size()), key);
    if (tp) out.insert_or_assign(std::move(*tp), internal::decode_offset(value, key));
  }
  return out;
}

void StateBackendOffsetStore::delete_offset(std::string_view group, const TopicPartition& tp) {
  validate_group(group);
  validate_topic_partition(tp);
  const std::string key = key_for(group, tp);
  internal::call_backend("deleting offset '" + key + "'", [&] { backend_->remove(key); });
}

void StateBackendOffsetStore::clear_offsets(std::string_view group) {
  validate_group(group);
  const std::string prefix = group_prefix(group);
  const std::string what = "clearing offsets of group '" + std::string(group) + "'";
  auto keys = internal::call_backend(what, [&] { return backend_->list_keys(prefix); });
  state::WriteBatch batch;
  for (const auto& key : keys) {
    if (parse_partition_key(std::string_view(key).substr(prefix.size()), key)) batch.remove(key);
  }
  if (!batch.empty()) internal::call_backend(what, [&] { backend_->write(batch); });
}

}  // namespace processor::kafka
