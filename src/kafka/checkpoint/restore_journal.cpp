#include "kafka/checkpoint/restore_journal.hpp"

#include <cstdint>
#include <utility>

#include "kafka/wrap_errors.hpp"

namespace processor::kafka::internal {
namespace {

// The checkpoint's offsets by topic, then by partition number, for the journal's pass over the
// store: there the topics come in runs (key order), so a lookup is a compare of the topic name
// and an index into a vector, instead of hashing a TopicPartition into a 100k-entry map.
// Each entry also records whether the store holds the partition at all.
class CheckpointIndex {
 public:
  static constexpr std::int64_t kNone = -1;  // checkpoint offsets are never negative

  struct Entry {
    std::int64_t offset = kNone;
    bool in_store = false;
  };

  explicit CheckpointIndex(const CheckpointInfo& checkpoint) {
    for (const auto& [tp, offset] : checkpoint.offsets) {
      Topic& topic = topics_[tp.topic];
      const auto partition = static_cast<std::size_t>(tp.partition);
      // Dense while the numbers stay near the count seen: a topic with partition 2^31-1 alone
      // must not allocate 16 GiB.
      if (partition < topic.dense.size() || partition <= 2 * topic.count + 1024) {
        if (partition >= topic.dense.size()) topic.dense.resize(partition + 1);
        topic.dense[partition].offset = offset;
      } else {
        topic.sparse[tp.partition].offset = offset;
      }
      ++topic.count;
    }
  }

  // The checkpoint's entry of the partition, or nullptr.
  Entry* find(std::string_view topic_name, std::int32_t partition) {
    if (last_ == nullptr || topic_name != last_name_) {
      const auto found = topics_.find(topic_name);
      if (found == topics_.end()) return nullptr;
      last_name_ = found->first;
      last_ = &found->second;
    }
    const auto index = static_cast<std::size_t>(partition);
    if (index < last_->dense.size() && last_->dense[index].offset != kNone) return &last_->dense[index];
    const auto sparse = last_->sparse.find(partition);
    return sparse == last_->sparse.end() ? nullptr : &sparse->second;
  }

 private:
  struct Topic {
    std::size_t count = 0;
    std::vector<Entry> dense;
    std::unordered_map<std::int32_t, Entry> sparse;
  };
  std::unordered_map<std::string_view, Topic> topics_;  // views of the checkpoint's topic names
  std::string_view last_name_;
  Topic* last_ = nullptr;
};

}  // namespace

// The journal compares the checkpoint with the store partition by partition, and needs the
// other retained checkpoints only where the two differ. So: one pass over the store, looking
// each partition up in the checkpoint's index (nothing else is built); then one pass over each
// other record, consulted only for the partitions that differ. Every record is still checked,
// so that a corrupt one fails the restore.
JournalResult run_journal(const JournalContext& context, const CheckpointInfo& checkpoint,
                          const std::vector<StoredCheckpoint>& retained) {
  JournalResult result;
  RestoreReport& report = result.report;
  report.checkpoint_id = checkpoint.id;
  report.policy = context.policy;

  struct Difference {
    std::optional<std::int64_t> store_offset;  // nullopt: the store has none
    bool explained;                            // a retained checkpoint of ours gave the partition this offset
    // The index in `retained` of the last record that listed the partition (SIZE_MAX: none): a
    // record listing it twice is corrupt (as decode_checkpoint() says), and explains nothing.
    std::size_t listed_by;
  };
  std::unordered_map<TopicPartition, Difference> differences;
  CheckpointIndex index(checkpoint);
  std::size_t in_store = 0;
  TopicPartition probe;
  const auto compare = [&](std::string_view topic, std::int32_t partition, std::int64_t store_offset) {
    CheckpointIndex::Entry* entry = index.find(topic, partition);
    if (entry == nullptr) return;
    if (!entry->in_store) {
      entry->in_store = true;
      ++in_store;
    }
    if (entry->offset == store_offset && differences.empty()) return;
    probe.topic.assign(topic);
    probe.partition = partition;
    // A partition stored twice counts with its later value, as in get_all_offsets().
    if (entry->offset == store_offset) {
      differences.erase(probe);
    } else {
      differences.insert_or_assign(probe, Difference{store_offset, false, SIZE_MAX});
    }
  };
  call_backend("reading the offsets of group '" + context.group + "' for the restore journal", [&] {
    context.store.for_each_offset(
        context.group, [&](std::string_view topic, std::int32_t partition, const OffsetInfo& info) {
          compare(topic, partition, info.offset);
        });
  });
  // Partitions the store has never seen (checkpointed, never completed): rare, so looked up
  // only when the count says there are some.
  if (in_store < checkpoint.offsets.size()) {
    for (const auto& [tp, offset] : checkpoint.offsets) {
      if (!index.find(tp.topic, tp.partition)->in_store)
        differences.emplace(tp, Difference{std::nullopt, false, SIZE_MAX});
    }
  }

  for (std::size_t record = 0; record < retained.size(); ++record) {
    const StoredCheckpoint& other = retained[record];
    if (other.id == checkpoint.id) continue;  // already decoded by the caller
    read_checkpoint(other.record, other.key,
                    [&](std::string_view topic, std::int32_t partition, std::int64_t offset) {
                      if (differences.empty()) return;
                      probe.topic.assign(topic);
                      probe.partition = partition;
                      const auto found = differences.find(probe);
                      if (found == differences.end()) return;
                      if (std::exchange(found->second.listed_by, record) == record) {
                        corrupt_checkpoint(other.key, "partition " + probe.to_key() + " is listed twice");
                      }
                      if (found->second.store_offset == offset) found->second.explained = true;
                    });
  }
  if (differences.empty()) return result;

  for (const auto& [tp, checkpoint_offset] : checkpoint.offsets) {
    const auto found = differences.find(tp);
    if (found == differences.end()) continue;
    const std::optional<std::int64_t> store_offset = found->second.store_offset;
    const bool explained = found->second.explained;
    result.store_differs.emplace(tp, store_offset);
    if (!store_offset) continue;  // never committed: nothing moved it
    if (explained && *store_offset < checkpoint_offset) {
      report.store_behind.push_back(tp);
    } else if (!explained && (context.checkpoints_only || *store_offset < checkpoint_offset)) {
      report.external_moves.push_back(ExternalMove{tp, checkpoint_offset, *store_offset});
    }
  }
  return result;
}

}  // namespace processor::kafka::internal
