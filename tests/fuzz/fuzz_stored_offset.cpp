// Fuzz target: a stored offset value (and its key) read back through the public API.
//
// Input: u8 flags (kSeal), u8 key length, the key suffix (after "kafka_offset:g:"), the value.
// The bytes are put raw into a MemoryStateBackend; StateBackendOffsetStore reads them
// (for_each_offset, get_all_offsets, get_offset) and an OffsetManager restores from them.
// Contract: every call returns sane values (legal topic, partition >= 0, offset >= 0, high
// watermark absent or >= 0, a value that re-encodes to itself) or throws
// StateError(Corruption); a restore that throws changes nothing the manager shows.

#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fuzz_contract.hpp"
#include "kafka/store/stored_offset_format.hpp"
#include "processor/kafka/offset_manager.hpp"
#include "processor/kafka/state_backend_offset_store.hpp"
#include "processor/state/memory_state_backend.hpp"

namespace {

using namespace processor;
using namespace processor::kafka;
using fuzz::require;
using fuzz::returns_or_corruption;

void require_sane(std::string_view topic, std::int32_t partition, const OffsetInfo& info) {
  try {
    validate_topic(topic);
  } catch (const StateError&) {
    fuzz::violation("an offset was read for the illegal topic '" + std::string(topic) + "'");
  }
  require(partition >= 0, "an offset was read for a negative partition");
  require(info.offset >= 0, "a negative offset was read");
  require(!info.high_watermark || *info.high_watermark >= 0, "a negative high watermark was read");
  OffsetInfo again;
  require(returns_or_corruption(
              "decoding a re-encoded offset",
              [&] { again = internal::decode_offset(internal::encode_offset(info), "re-encoded"); }),
          "a decoded offset does not decode once re-encoded");
  require(again == info, "a decoded offset re-encodes to a different value");
}

// What an OffsetManager shows; a failed restore must leave all of it as it was.
struct ManagerView {
  std::unordered_map<TopicPartition, OffsetInfo> committed;
  // Pending offsets and their high watermarks (get_all_pending() stamps them with the time of the call).
  std::unordered_map<TopicPartition, std::pair<std::int64_t, std::optional<std::int64_t>>> pending;
  std::int64_t total_lag = 0;
  std::optional<std::int64_t> base_offset;
  friend bool operator==(const ManagerView&, const ManagerView&) = default;
};

// The fields of `after` that differ from `before`, for the violation message.
std::string changed_fields(const ManagerView& before, const ManagerView& after) {
  std::string out;
  if (before.committed != after.committed) out += " committed";
  if (before.pending != after.pending) out += " pending";
  if (before.total_lag != after.total_lag) out += " total_lag";
  if (before.base_offset != after.base_offset) out += " base_offset";
  return out;
}

ManagerView view_of(OffsetManager& manager) {
  ManagerView view;
  for (const auto& [tp, info] : manager.get_all_pending())
    view.pending.emplace(tp, std::pair(info.offset, info.high_watermark));
  view.committed = manager.get_all_committed();
  view.total_lag = manager.total_lag();
  view.base_offset = manager.get_offset("base", 0);
  return view;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::silence_library_log();
  fuzz::InputReader input(data, size);
  const std::uint8_t flags = input.byte();
  const std::string key_suffix(input.take(input.byte()));
  const std::string_view raw_value = input.rest();
  const std::string value = (flags & fuzz::kSeal) ? fuzz::seal(raw_value) : std::string(raw_value);

  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<StateBackendOffsetStore>(backend);
  OffsetManager manager("g", backend, store, OffsetCommitStrategy::manual());
  // A committed offset with a lag, and a pending one: what a failed restore must not touch.
  manager.update_offset_with_watermark("base", 0, 5, 100);
  manager.commit();
  manager.update_offset("base", 0, 7);
  backend->put("kafka_offset:g:" + key_suffix, value);

  std::vector<std::pair<TopicPartition, OffsetInfo>> scanned;
  const bool scan_ok = returns_or_corruption("for_each_offset", [&] {
    store->for_each_offset("g", [&](std::string_view topic, std::int32_t partition, const OffsetInfo& info) {
      require_sane(topic, partition, info);
      scanned.emplace_back(TopicPartition(std::string(topic), partition), info);
    });
  });

  std::unordered_map<TopicPartition, OffsetInfo> all;
  const bool all_ok = returns_or_corruption("get_all_offsets", [&] { all = store->get_all_offsets("g"); });
  require(all_ok == scan_ok,
          "get_all_offsets and for_each_offset disagree on whether the offsets are corrupt");
  if (all_ok) {
    std::unordered_map<TopicPartition, OffsetInfo> expected;
    for (const auto& [tp, info] : scanned) expected.insert_or_assign(tp, info);
    require(all == expected, "get_all_offsets differs from for_each_offset");
  }

  // get_offset of the key as the store would parse it, when it names a legal partition.
  const std::string_view suffix(key_suffix);
  if (const auto colon = suffix.rfind(':'); colon != std::string_view::npos) {
    TopicPartition tp(std::string(suffix.substr(0, colon)), -1);
    const std::string_view digits = suffix.substr(colon + 1);
    std::from_chars(digits.data(), digits.data() + digits.size(), tp.partition);
    bool legal = true;
    try {
      validate_topic_partition(tp);
    } catch (const StateError&) {
      legal = false;
    }
    if (legal) {
      std::optional<OffsetInfo> one;
      if (returns_or_corruption("get_offset", [&] { one = store->get_offset("g", tp); }) && one) {
        require_sane(tp.topic, tp.partition, *one);
      }
    }
  }

  const ManagerView before = view_of(manager);
  std::size_t restored = 0;
  const bool restore_ok =
      returns_or_corruption("OffsetManager::restore", [&] { restored = manager.restore(); });
  require(restore_ok == all_ok,
          "restore() and get_all_offsets() disagree on whether the offsets are corrupt");
  if (!restore_ok) {
    if (const ManagerView after = view_of(manager); after != before) {
      fuzz::violation("a failed restore() changed the manager's view:" + changed_fields(before, after));
    }
    return 0;
  }
  require(restored == all.size(), "restore() counts a different number of offsets than the store holds");
  require(manager.total_lag() >= 0, "total_lag() is negative after a restore");
  for (const auto& entry : all) {
    const TopicPartition& tp = entry.first;  // not a structured binding: lambdas capture it below
    const OffsetInfo& info = entry.second;
    const auto committed = manager.get_offset_info(tp.topic, tp.partition);
    require(committed && committed->offset == info.offset, "restore() did not commit the stored offset");
    std::optional<AckedSet> acked;
    if (returns_or_corruption("acked_after_restart",
                              [&] { acked = manager.acked_after_restart(tp.topic, tp.partition); }) &&
        acked) {
      require(acked->committable == info.offset, "acked_after_restart() trusts metadata of another offset");
    }
  }
  return 0;
}
