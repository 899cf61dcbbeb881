// Fuzz target: a checkpoint record read back by OffsetManager::restore_from_checkpoint().
//
// Input: u8 flags, then the record (with kSeal, the harness appends its CRC32C).
//   flags bit 1 (kOlder): the record is an OLDER retained checkpoint, read by the restore
//     journal behind a valid latest one; otherwise it is the latest (the one restored).
//   flags bit 2 (kIdFromRecord): the record's key carries the id in the record's bytes 1-8, so
//     that mutated records can match their key; otherwise a fixed id.
//   flags bits 3-4: the RestorePolicy (latest only); bit 5: the on_checkpoint() strategy.
// Contract: the restore returns a checkpoint of legal topics, partitions >= 0, offsets >= 0 and
// no partition listed twice, which re-encodes to itself; or throws StateError(Corruption) (or
// StateError(Kafka) under RestorePolicy::Fail) and changes nothing the manager shows. Behind an
// older record, the latest checkpoint restores unchanged, and the journal calls the store ours
// exactly when the older record (readable, orders:0 listed once) has the store's offset.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fuzz_contract.hpp"
#include "kafka/checkpoint/checkpoint_record.hpp"
#include "processor/kafka/offset_manager.hpp"
#include "processor/kafka/state_backend_offset_store.hpp"
#include "processor/state/memory_state_backend.hpp"

namespace {

using namespace processor;
using namespace processor::kafka;
using fuzz::require;
using fuzz::returns_or_corruption;
using Policy = OffsetManagerOptions::RestorePolicy;

constexpr std::uint8_t kOlder = 1 << 1;
constexpr std::uint8_t kIdFromRecord = 1 << 2;
constexpr int kPolicyShift = 3;
constexpr std::uint8_t kOnCheckpoint = 1 << 5;

// What an OffsetManager shows; a failed restore must leave all of it as it was.
struct ManagerView {
  std::unordered_map<TopicPartition, OffsetInfo> committed;
  // Pending offsets and their high watermarks (get_all_pending() stamps them with the time of the call).
  std::unordered_map<TopicPartition, std::pair<std::int64_t, std::optional<std::int64_t>>> pending;
  std::optional<std::int64_t> checkpointed;
  std::optional<std::uint64_t> reported_checkpoint;
  std::vector<std::uint64_t> stored_checkpoints;
  friend bool operator==(const ManagerView&, const ManagerView&) = default;
};

// The fields of `after` that differ from `before`, for the violation message.
std::string changed_fields(const ManagerView& before, const ManagerView& after) {
  std::string out;
  if (before.committed != after.committed) out += " committed";
  if (before.pending != after.pending) out += " pending";
  if (before.checkpointed != after.checkpointed) out += " checkpointed";
  if (before.reported_checkpoint != after.reported_checkpoint) out += " reported_checkpoint";
  if (before.stored_checkpoints != after.stored_checkpoints) out += " stored_checkpoints";
  return out;
}

ManagerView view_of(OffsetManager& manager) {
  ManagerView view;
  for (const auto& [tp, info] : manager.get_all_pending())
    view.pending.emplace(tp, std::pair(info.offset, info.high_watermark));
  const auto report = manager.last_restore_report();
  view.committed = manager.get_all_committed();
  view.checkpointed = manager.checkpointed_offset("orders", 0);
  if (report) view.reported_checkpoint = report->checkpoint_id;
  view.stored_checkpoints = manager.list_checkpoints();
  return view;
}

void require_sane(const CheckpointInfo& checkpoint) {
  for (const auto& [tp, offset] : checkpoint.offsets) {
    try {
      validate_topic(tp.topic);
    } catch (const StateError&) {
      fuzz::violation("a checkpoint was restored with the illegal topic '" + tp.topic + "'");
    }
    require(tp.partition >= 0, "a checkpoint was restored with a negative partition");
    require(offset >= 0, "a checkpoint was restored with a negative offset");
  }
  CheckpointInfo again;
  require(returns_or_corruption("decoding a re-encoded checkpoint",
                                [&] {
                                  again = internal::decode_checkpoint(internal::encode_checkpoint(checkpoint),
                                                                      "re-encoded");
                                }),
          "a restored checkpoint does not decode once re-encoded");
  require(again.id == checkpoint.id && again.created_at == checkpoint.created_at &&
              again.offsets == checkpoint.offsets && again.acked == checkpoint.acked,
          "a restored checkpoint re-encodes to a different value");
  for (const auto& [tp, acked] : checkpoint.acked) {
    const auto position = checkpoint.offsets.find(tp);
    require(
        position != checkpoint.offsets.end() && position->second == acked.committable && !acked.acked.empty(),
        "a checkpoint was restored with acknowledgements of an unlisted partition, another position, or "
        "none");
  }
}

std::string checkpoint_key(std::uint64_t id) { return "checkpoint:g:" + internal::checkpoint_id_text(id); }

// The fuzzed record as the latest checkpoint: the one restored.
void restore_latest(std::uint8_t flags, const std::string& record) {
  OffsetManagerOptions options;
  const int policy_bits = (flags >> kPolicyShift) & 3;
  options.restore_policy = policy_bits == 1   ? Policy::TrustStore
                           : policy_bits == 2 ? Policy::Fail
                                              : Policy::TrustCheckpoint;
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<StateBackendOffsetStore>(backend);
  OffsetManager manager(
      "g", backend, store,
      (flags & kOnCheckpoint) ? OffsetCommitStrategy::on_checkpoint() : OffsetCommitStrategy::manual(),
      options);
  // A committed offset, a pending one and a checkpoint taken in memory: a failed restore keeps them.
  manager.update_offset("orders", 0, 10);
  manager.commit();
  manager.update_offset("orders", 0, 12);
  manager.checkpoint(1);
  backend->remove(checkpoint_key(1));

  const std::uint64_t id =
      (flags & kIdFromRecord) && record.size() >= 9 ? encoding::load_le<std::uint64_t>(record.data() + 1) : 2;
  backend->put(checkpoint_key(id), record);

  const ManagerView before = view_of(manager);
  std::optional<CheckpointInfo> restored;
  const bool ok = returns_or_corruption(
      "restore_from_checkpoint", [&] { restored = manager.restore_from_checkpoint(); },
      options.restore_policy == Policy::Fail ? std::initializer_list<ErrorKind>{ErrorKind::Kafka}
                                             : std::initializer_list<ErrorKind>{});
  if (!ok) {
    if (const ManagerView after = view_of(manager); after != before) {
      fuzz::violation("a failed restore_from_checkpoint() changed the manager's view:" +
                      changed_fields(before, after));
    }
    return;
  }
  require(restored.has_value(), "restore_from_checkpoint() found no checkpoint although one is stored");
  require(restored->id == id, "restore_from_checkpoint() restored a checkpoint of another id than its key's");
  require_sane(*restored);
  // Every partition the record lists is restored once: none listed twice and merged.
  require(restored->offsets.size() == encoding::load_le<std::uint32_t>(record.data() + 17),
          "the restored checkpoint has a different number of partitions than its record lists");
  for (const auto& [tp, offset] : restored->offsets) {
    require(manager.checkpointed_offset(tp.topic, tp.partition) == offset,
            "checkpointed_offset() differs from the restored checkpoint");
  }
  const auto report = manager.last_restore_report();
  require(report && report->checkpoint_id == id, "the restore report names another checkpoint");
  // The restored positions are good enough to checkpoint again (above checkpoint 1, taken before).
  if (id < UINT64_MAX) {
    const std::uint64_t next = std::max<std::uint64_t>(id, 1) + 1;
    try {
      manager.checkpoint(next);
      internal::decode_checkpoint(*backend->get(checkpoint_key(next)), checkpoint_key(next));
    } catch (const std::exception& error) {
      fuzz::violation(std::string("a checkpoint after a restore failed: ") + error.what());
    }
  }
}

// The fuzzed record as an older retained checkpoint, read by the restore journal because the
// store is behind the latest checkpoint.
void restore_behind_older(std::uint8_t flags, const std::string& record) {
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<StateBackendOffsetStore>(backend);
  OffsetManager manager(
      "g", backend, store,
      (flags & kOnCheckpoint) ? OffsetCommitStrategy::on_checkpoint() : OffsetCommitStrategy::manual());
  manager.update_offset("orders", 0, 10);
  manager.commit();
  manager.update_offset("orders", 0, 20);
  manager.checkpoint(5);  // the latest: orders:0 at 20, the store at 10

  const std::uint64_t id = (flags & kIdFromRecord) && record.size() >= 9
                               ? encoding::load_le<std::uint64_t>(record.data() + 1) % 5
                               : 3;
  backend->put(checkpoint_key(id), record);

  // What the older record says of orders:0, read as the journal reads it.
  std::vector<std::int64_t> older_orders;
  const bool older_reads = returns_or_corruption("read_checkpoint", [&] {
    internal::read_checkpoint(record, checkpoint_key(id),
                              [&](std::string_view topic, std::int32_t partition, std::int64_t offset) {
                                if (topic == "orders" && partition == 0) older_orders.push_back(offset);
                              });
  });

  const ManagerView before = view_of(manager);
  std::optional<CheckpointInfo> restored;
  if (!returns_or_corruption("restore_from_checkpoint",
                             [&] { restored = manager.restore_from_checkpoint(); })) {
    if (const ManagerView after = view_of(manager); after != before) {
      fuzz::violation("a failed restore_from_checkpoint() changed the manager's view:" +
                      changed_fields(before, after));
    }
    return;
  }
  const TopicPartition orders("orders", 0);
  require(restored && restored->id == 5 &&
              restored->offsets == std::unordered_map<TopicPartition, std::int64_t>{{orders, 20}},
          "an older checkpoint changed what the latest one restores");
  const auto report = manager.last_restore_report();
  require(report && report->checkpoint_id == 5, "the restore report names another checkpoint");
  const bool behind =
      report->store_behind == std::vector<TopicPartition>{orders} && report->external_moves.empty();
  const bool moved = report->store_behind.empty() && report->external_moves.size() == 1 &&
                     report->external_moves[0].partition == orders &&
                     report->external_moves[0].checkpoint_offset == 20 &&
                     report->external_moves[0].store_offset == 10;
  require(older_reads, "the restore journal accepted an older checkpoint that does not read");
  require(older_orders.size() <= 1,
          "the restore journal consulted an older checkpoint that lists orders:0 twice");
  // The store (orders:0 at 10) is ours exactly when the older checkpoint has it at 10.
  const bool explains = older_orders.size() == 1 && older_orders[0] == 10;
  require(explains ? behind : moved,
          explains ? "the restore journal reports an external move that an older checkpoint explains"
                   : "the restore journal explains the store with an older checkpoint that does not");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::silence_library_log();
  fuzz::InputReader input(data, size);
  const std::uint8_t flags = input.byte();
  const std::string_view raw = input.rest();
  const std::string record = (flags & fuzz::kSeal) ? fuzz::seal(raw) : std::string(raw);
  if (flags & kOlder) {
    restore_behind_older(flags, record);
  } else {
    restore_latest(flags, record);
  }
  return 0;
}
