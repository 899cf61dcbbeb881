// `offsetctl state diff`: what the restore journal (kafka/checkpoint/restore_journal.hpp) would
// find if the application restored a checkpoint now, against the group's committed offsets in
// the cluster. The journal runs as the library runs it, with a KafkaOffsetStore as the store, so
// the tool and a restore never disagree.

#include <algorithm>
#include <unordered_set>

#include "command.hpp"
#include "kafka/checkpoint/restore_journal.hpp"
#include "state/state_broker.hpp"
#include "state/state_table.hpp"
#include "state/state_verbs.hpp"

namespace processor::offsetctl {
namespace {

// Per partition, in the journal's words.
constexpr std::string_view kOurs = "ours";                   // the store holds the checkpoint's offset
constexpr std::string_view kStoreBehind = "store behind";    // an older checkpoint of ours
constexpr std::string_view kExternalMove = "external move";  // no checkpoint of ours explains it
constexpr std::string_view kNoOffset = "no offset";          // never committed
constexpr std::string_view kStoreAhead = "store ahead";      // a later checkpoint of ours

}  // namespace

int run_state_diff(const StateTarget& target, const DiffRequest& request, std::ostream& out) {
  StateDirectory directory(target.dir, StateDirectory::Access::ReadOnly, target.layout);
  const auto checkpoint = directory.checkpoint(request.group, request.checkpoint_id);
  const auto retained = directory.checkpoint_records(request.group);

  StateBroker broker(request.bootstrap_servers, request.command_config, request.group);
  // checkpoints_only: the strictest reading, that of on_checkpoint() (every committed offset
  // should be a checkpoint's), so that any move nobody of ours made is shown.
  const kafka::internal::JournalContext context{
      broker.committed(), request.group, kafka::OffsetManagerOptions::RestorePolicy::TrustCheckpoint, true};
  const auto journal = kafka::internal::run_journal(context, checkpoint, retained);

  std::unordered_set<kafka::TopicPartition> behind(journal.report.store_behind.begin(),
                                                   journal.report.store_behind.end());
  std::unordered_set<kafka::TopicPartition> moved;
  for (const auto& move : journal.report.external_moves) moved.insert(move.partition);

  TextTable table(
      {{"TOPIC", 15}, {"PARTITION", 10}, {"CHECKPOINT-OFFSET", 0}, {"COMMITTED-OFFSET", 0}, {"STATUS", 0}});
  for (const auto& [tp, offset] : sorted_positions(checkpoint)) {
    std::string committed = std::to_string(offset);
    std::string_view status = kOurs;
    if (const auto differs = journal.store_differs.find(tp); differs != journal.store_differs.end()) {
      if (!differs->second) {
        committed = "-";
        status = kNoOffset;
      } else {
        committed = std::to_string(*differs->second);
        status = behind.contains(tp) ? kStoreBehind : moved.contains(tp) ? kExternalMove : kStoreAhead;
      }
    }
    table.add_row(
        {tp.topic, std::to_string(tp.partition), std::to_string(offset), committed, std::string(status)});
  }
  out << "checkpoint " << checkpoint.id << " of group " << request.group << ", created at "
      << format_utc(checkpoint.created_at) << ", against the group's committed offsets\n";
  table.print(out);
  return kExitOk;
}

}  // namespace processor::offsetctl
