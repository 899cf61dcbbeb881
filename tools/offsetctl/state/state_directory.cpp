#include "state/state_directory.hpp"

#include <algorithm>
#include <map>
#include <system_error>
#include <utility>

#include "processor/error.hpp"
#include "state/state_lock_holder.hpp"

namespace processor::offsetctl {
namespace {

namespace fs = std::filesystem;

// Checked before RocksDB sees the path, so that a read verb never creates a directory and a
// mistyped path is reported as such rather than as a RocksDB I/O error.
void require_database(const fs::path& dir) {
  std::error_code error;
  const auto status = fs::status(dir, error);
  if (status.type() == fs::file_type::not_found) {
    throw StateError(ErrorKind::NotFound, "state directory '" + dir.string() + "' does not exist");
  }
  if (error) {
    throw StateError(ErrorKind::Storage,
                     "cannot access state directory '" + dir.string() + "': " + error.message());
  }
  if (!fs::is_directory(status)) {
    throw StateError(ErrorKind::InvalidArgument, "state directory '" + dir.string() + "' is not a directory");
  }
  if (!fs::exists(dir / "CURRENT", error)) {
    throw StateError(ErrorKind::Storage,
                     "'" + dir.string() +
                         "' is not a processor state directory: it holds no RocksDB database "
                         "(no CURRENT file)");
  }
}

std::shared_ptr<state::RocksDbStateBackend> open_backend(const fs::path& dir, StateDirectory::Access access) {
  require_database(dir);
  state::RocksDbOptions options;
  options.create_if_missing = false;
  options.read_only = access == StateDirectory::Access::ReadOnly;
  // Every write of offsetctl is one batch that a crash must not lose once it has said so.
  options.sync_writes = !options.read_only;
  try {
    return std::make_shared<state::RocksDbStateBackend>(dir, options);
  } catch (const StateError& error) {
    const auto lock_file = dir / "LOCK";
    const auto holder = find_lock_holder(lock_file);
    const bool locked = holder || std::string_view(error.what()).find("locked") != std::string_view::npos;
    if (access != StateDirectory::Access::ReadWrite || error.kind() != ErrorKind::Storage || !locked) {
      throw;
    }
    throw StateError(ErrorKind::Storage,
                     "cannot write to state directory '" + dir.string() + "': it is locked by " +
                         describe_lock_holder(holder) + ", which holds RocksDB's lock file '" +
                         lock_file.string() +
                         "' (a running application has it open). Nothing was changed. Stop that process "
                         "first; read verbs work while it runs.");
  }
}

// The group of an offset key's rest "<group>:<topic>:<partition>": topics never contain ':', a
// group may. Empty when the key has another shape (the offset store reports those).
std::string_view group_of_offset_key(std::string_view rest) {
  const auto partition_colon = rest.rfind(':');
  if (partition_colon == std::string_view::npos || partition_colon == 0) return {};
  const auto topic_colon = rest.rfind(':', partition_colon - 1);
  if (topic_colon == std::string_view::npos) return {};
  return rest.substr(0, topic_colon);
}

// The group of a checkpoint key's rest "<group>:<20-digit id>", or empty.
std::string_view group_of_checkpoint_key(std::string_view rest) {
  constexpr std::size_t kIdDigits = 20;
  if (rest.size() < kIdDigits + 2 || rest[rest.size() - kIdDigits - 1] != ':') return {};
  return rest.substr(0, rest.size() - kIdDigits - 1);
}

}  // namespace

StateDirectory::StateDirectory(const fs::path& dir, Access access, StateLayout layout)
    : path_(dir),
      layout_(std::move(layout)),
      backend_(open_backend(dir, access)),
      store_(std::make_shared<kafka::StateBackendOffsetStore>(backend_, layout_.offset_prefix)) {}

std::string StateDirectory::checkpoint_prefix(const std::string& group) const {
  kafka::OffsetManagerOptions options;
  options.checkpoint_prefix = layout_.checkpoint_prefix;
  return kafka::internal::checkpoint_key_prefix(options, group);
}

std::vector<StateGroup> StateDirectory::groups() {
  std::map<std::string, StateGroup, std::less<>> found;
  const auto add = [&found](std::string_view group) {
    if (!group.empty() && !found.contains(group))
      found.emplace(std::string(group), StateGroup{std::string(group)});
  };
  for (const auto& key : backend_->list_keys(layout_.offset_prefix)) {
    add(group_of_offset_key(std::string_view(key).substr(layout_.offset_prefix.size())));
  }
  for (const auto& key : backend_->list_keys(layout_.checkpoint_prefix)) {
    add(group_of_checkpoint_key(std::string_view(key).substr(layout_.checkpoint_prefix.size())));
  }
  std::vector<StateGroup> groups;
  for (auto& [name, group] : found) {
    group.offsets = offsets(name).size();
    group.checkpoints = checkpoint_records(name).size();
    if (group.offsets + group.checkpoints > 0) groups.push_back(std::move(group));
  }
  return groups;
}

std::vector<StoredOffset> StateDirectory::offsets(const std::string& group) {
  // A partition stored under two keys keeps the later one, as get_all_offsets() does.
  std::map<std::pair<std::string, std::int32_t>, kafka::OffsetInfo> sorted;
  store_->for_each_offset(group,
                          [&](std::string_view topic, std::int32_t partition, const kafka::OffsetInfo& info) {
                            sorted.insert_or_assign({std::string(topic), partition}, info);
                          });
  std::vector<StoredOffset> out;
  out.reserve(sorted.size());
  for (auto& [key, info] : sorted)
    out.push_back({kafka::TopicPartition(key.first, key.second), std::move(info)});
  return out;
}

std::vector<kafka::internal::StoredCheckpoint> StateDirectory::checkpoint_records(const std::string& group) {
  auto records = kafka::internal::load_checkpoints(*backend_, checkpoint_prefix(group));
  for (const auto& record : records) kafka::internal::decode_checkpoint(record.record, record.key);
  return records;
}

std::vector<kafka::CheckpointInfo> StateDirectory::checkpoints(const std::string& group) {
  std::vector<kafka::CheckpointInfo> out;
  for (const auto& record : kafka::internal::load_checkpoints(*backend_, checkpoint_prefix(group))) {
    out.push_back(kafka::internal::decode_checkpoint(record.record, record.key));
  }
  return out;
}

kafka::CheckpointInfo StateDirectory::checkpoint(const std::string& group, std::optional<std::uint64_t> id) {
  auto all = checkpoints(group);
  if (all.empty()) {
    throw StateError(ErrorKind::NotFound,
                     "group '" + group + "' has no checkpoint in '" + path_.string() + "'");
  }
  if (!id) return std::move(all.back());
  const auto found = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.id == *id; });
  if (found == all.end()) {
    throw StateError(ErrorKind::NotFound, "group '" + group + "' has no checkpoint " + std::to_string(*id) +
                                              " in '" + path_.string() +
                                              "' (retained: " + std::to_string(all.front().id) + " to " +
                                              std::to_string(all.back().id) + ")");
  }
  return std::move(*found);
}

void StateDirectory::store_offsets(const std::string& group,
                                   std::span<const kafka::PartitionOffset> offsets) {
  store_->store_offsets(group, offsets);
}

std::vector<std::pair<kafka::TopicPartition, std::int64_t>> sorted_positions(
    const kafka::CheckpointInfo& checkpoint) {
  std::vector<std::pair<kafka::TopicPartition, std::int64_t>> out(checkpoint.offsets.begin(),
                                                                  checkpoint.offsets.end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.topic, a.first.partition) < std::tie(b.first.topic, b.first.partition);
  });
  return out;
}

}  // namespace processor::offsetctl
