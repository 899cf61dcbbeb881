#pragma once
// Internal to src/state: the snapshot that owns a copy of its entries, shared by the
// StateBackend defaults and MemoryStateBackend.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "processor/state/state_backend.hpp"

namespace processor::state::internal {

using SortedEntries = std::map<std::string, std::string, std::less<>>;

// Visits, in key order, the entries of a sorted map whose key starts with `prefix`. Seeks to
// the prefix instead of walking the whole map: state maps hold every operator's keys, and a
// caller asks for one operator's.
template <class SortedMap, class Visitor>
void for_each_with_prefix(SortedMap& entries, std::string_view prefix, Visitor&& visit) {
  for (auto it = entries.lower_bound(prefix);
       it != entries.end() && std::string_view(it->first).starts_with(prefix); ++it) {
    visit(*it);
  }
}

// A StateSnapshot that owns a copy of the entries: consistent by construction, at the price
// of the copy. Immutable, so safe for concurrent reads.
class CopiedSnapshot final : public StateSnapshot {
 public:
  explicit CopiedSnapshot(SortedEntries entries);

  std::optional<std::string> get(std::string_view key) const override;
  std::vector<std::pair<std::string, std::string>> scan(std::string_view prefix) const override;

 private:
  const SortedEntries entries_;
};

}  // namespace processor::state::internal
