#pragma once
// The restore journal: before a restore, compares the checkpoint with what the offset store holds
// and reports each difference as the store being behind (an older checkpoint of ours committed
// last) or as an external move (someone else committed), so that the RestorePolicy can decide.

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kafka/checkpoint/checkpoint_record.hpp"
#include "processor/kafka/offset_manager_options.hpp"
#include "processor/kafka/offset_store.hpp"

namespace processor::kafka::internal {

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
// other retained checkpoints only where the two differ (`retained` includes `checkpoint`'s own
// record, which is skipped). Throws StateError(Corruption) when a retained record is corrupt.
JournalResult run_journal(const JournalContext& context, const CheckpointInfo& checkpoint,
                          const std::vector<StoredCheckpoint>& retained);

}  // namespace processor::kafka::internal
