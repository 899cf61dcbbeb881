#include "processor/state/state_backend.hpp"

#include <cstdio>
#include <utility>
#include <vector>

#include "processor/error.hpp"
#include "state/copied_snapshot.hpp"
#include "state/sorted_writes.hpp"

namespace processor::state {

namespace internal {

CopiedSnapshot::CopiedSnapshot(SortedEntries entries) : entries_(std::move(entries)) {}

std::optional<std::string> CopiedSnapshot::get(std::string_view key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::pair<std::string, std::string>> CopiedSnapshot::scan(std::string_view prefix) const {
  std::vector<std::pair<std::string, std::string>> rows;
  for_each_with_prefix(entries_, prefix,
                       [&rows](const auto& entry) { rows.emplace_back(entry.first, entry.second); });
  return rows;
}

std::string printable_key(std::string_view key) {
  constexpr std::size_t kMaxShown = 128;
  std::string shown = "'";
  for (std::size_t i = 0; i < key.size() && i < kMaxShown; ++i) {
    const auto byte = static_cast<unsigned char>(key[i]);
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      shown += static_cast<char>(byte);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      shown += escaped;
    }
  }
  shown += key.size() > kMaxShown ? "'..." : "'";
  return shown;
}

void require_strictly_ascending(std::span<const std::span<const StateBackend::UnloggedWrite>> runs) {
  for (std::size_t run = 0; run < runs.size(); ++run) {
    const auto writes = runs[run];
    for (std::size_t i = 1; i < writes.size(); ++i) {
      if (writes[i].key <= writes[i - 1].key) {
        throw StateError(ErrorKind::InvalidArgument,
                         "load_sorted: key " + printable_key(writes[i].key) + " (run " + std::to_string(run) +
                             ", write " + std::to_string(i) + ") does not come after the key before it");
      }
    }
  }
}

}  // namespace internal

void StateBackend::write(const WriteBatch& batch) {
  for (const auto& operation : batch.operations()) {
    switch (operation.type) {
      case WriteBatch::OpType::Put:
        put(operation.key, operation.value);
        break;
      case WriteBatch::OpType::Remove:
        remove(operation.key);
        break;
    }
  }
}

std::vector<std::pair<std::string, std::string>> StateBackend::scan(std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (auto& key : list_keys(prefix)) {
    // A key listed a moment ago may be gone by now; a vanished key is not an error.
    if (auto value = get(key)) rows.emplace_back(std::move(key), std::move(*value));
  }
  return rows;
}

void StateBackend::write_puts(std::span<const PutView> puts) {
  WriteBatch batch;
  for (const auto& [key, value] : puts) batch.put(key, value);
  write(batch);
}

void StateBackend::for_each(std::string_view prefix,
                            const std::function<void(std::string_view key, std::string_view value)>& visit) {
  for (const auto& [key, value] : scan(prefix)) visit(key, value);
}

std::unique_ptr<StateSnapshot> StateBackend::snapshot() {
  internal::SortedEntries entries;
  for (auto& [key, value] : scan("")) {
    entries.insert_or_assign(std::move(key), std::move(value));
  }
  return std::make_unique<internal::CopiedSnapshot>(std::move(entries));
}

void StateBackend::write_unlogged(std::span<const UnloggedWrite> writes) {
  WriteBatch batch;
  for (const auto& write : writes) {
    if (write.value) {
      batch.put(write.key, *write.value);
    } else {
      batch.remove(write.key);
    }
  }
  write(batch);
}

void StateBackend::flush() {}

void StateBackend::load_sorted(std::span<const std::span<const UnloggedWrite>> runs) {
  internal::require_strictly_ascending(runs);
  std::vector<UnloggedWrite> writes;
  for (const auto run : runs) writes.insert(writes.end(), run.begin(), run.end());
  write_unlogged(writes);
  flush();
}

}  // namespace processor::state
