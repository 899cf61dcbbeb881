// StreamProcessor's tasks and rebalances: an assigned partition becomes a task, is restored from
// its changelogs, positioned at its committed offset and resumed; a revoked one commits first.

#include <librdkafka/rdkafka.h>

#include "common/log_internal.hpp"
#include "kafka/client/out_of_range_policy.hpp"
#include "kafka/group/rebalance.hpp"
#include "kafka/group/start_offsets.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "streams/state_keys.hpp"
#include "streams/stream_processor_impl.hpp"

namespace processor::streams {

using kafka::internal::RdPtr;
namespace {

// Refused seeks of a restored partition (one per poll, every 10 ms while it waits) after which
// it is assigned again at its start instead.
constexpr int kSeekRefusalsBeforeReassigning = 100;

// "partitions 0, 3 and 7", for the log.
std::string describe_partitions(const std::vector<kafka::TopicPartition>& partitions) {
  std::string out = partitions.size() == 1 ? "partition " : "partitions ";
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    if (i > 0) out += i + 1 == partitions.size() ? " and " : ", ";
    out += std::to_string(partitions[i].partition);
  }
  return out;
}

}  // namespace

// librdkafka calls this from inside rd_kafka_consumer_poll(): no exception may cross it. The
// assignment is applied whatever happens, so that librdkafka's state stays consistent.
void StreamProcessor::Impl::rebalance_callback(rd_kafka_t* rk, rd_kafka_resp_err_t event,
                                               rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  auto* impl = static_cast<Impl*>(opaque);
  impl->rebalance_applied = false;
  try {
    impl->on_rebalance(event, partitions);
    return;
  } catch (...) {
    if (!impl->callback_error) impl->callback_error = std::current_exception();
  }
  if (!impl->rebalance_applied) kafka::internal::apply_rebalance_noexcept(rk, event, partitions);
}

void StreamProcessor::Impl::on_rebalance(rd_kafka_resp_err_t event, rd_kafka_topic_partition_list_t* list) {
  rd_kafka_t* rk = consumer.get();
  const auto assigned = kafka::internal::from_partition_list(list);
  next_placement = Clock::now();  // the standbys follow the new assignment
  if (event == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    if (!assigned.empty()) {  // a cooperative rebalance that changed nothing here says nothing
      processor::internal::log(LogLevel::Info, "streams", "assigned ", describe_partitions(assigned), " of '",
                               options.input_topic, "'");
    }
    kafka::internal::apply_rebalance(rk, event, list);
    rebalance_applied = true;
    remember_member_id();
    // Nothing is fetched for processing until its stores are restored and it is positioned.
    rd_kafka_pause_partitions(rk, list);
    for (const auto& tp : assigned) add_task(tp.partition);
    count([&](StreamProcessorStats& stats) { stats.assignments += assigned.size(); });
    return;
  }
  const bool lost = kafka::internal::assignment_lost(rk);
  if (!assigned.empty()) {
    processor::internal::log(LogLevel::Info, "streams", lost ? "lost " : "revoked ",
                             describe_partitions(assigned), " of '", options.input_topic, "'",
                             lost ? ": the open transaction is aborted" : ": committing first");
  }
  try {
    if (broken) {
      // Nothing can commit any more (the producer failed for good); the transaction dies with it.
      for (auto& [partition, task] : tasks) {
        for (auto& store : task.stores) store->discard();
      }
      transaction_open = false;
    } else if (lost) {
      // The group moved on: this member's offsets would be refused, its transaction is void.
      abort("partitions lost");
    } else {
      // The open transaction covers these partitions' records: it commits while this member
      // still owns them (or aborts, and their next owner processes them again).
      commit();
    }
  } catch (...) {
    for (const auto& tp : assigned) remove_task(tp.partition);
    kafka::internal::apply_rebalance_noexcept(rk, event, list);
    rebalance_applied = true;
    throw;
  }
  for (const auto& tp : assigned) remove_task(tp.partition);
  count([&](StreamProcessorStats& stats) { (lost ? stats.lost : stats.revocations) += assigned.size(); });
  rebalance_applied = true;
  kafka::internal::apply_rebalance(rk, event, list);
}

// Kept with the state, so that a restart on this directory tells its killed incarnation, still
// listed in the group until its session expires, from another instance under its transactional.id.
void StreamProcessor::Impl::remember_member_id() {
  const std::string self = kafka::internal::member_id(consumer.get());
  if (self.empty() || self == stored_member_id) return;
  try {
    db->put(internal::kMemberIdKey, self);
    stored_member_id = self;
  } catch (const StateError& error) {  // only a fencing's diagnosis depends on it
    processor::internal::log(LogLevel::Warning, "streams", "keeping the group member id in ",
                             options.state_dir, " failed: ", error.what());
  }
}

std::vector<std::unique_ptr<internal::StorePartition>> StreamProcessor::Impl::open_stores(
    std::int32_t partition) {
  std::vector<std::unique_ptr<internal::StorePartition>> stores;
  for (const auto& name : options.stores) {
    try {
      stores.push_back(std::make_unique<internal::StorePartition>(*db, name, partition));
    } catch (const StateError& error) {
      if (error.kind() != ErrorKind::Corruption) throw;
      // The local state is a cache of the changelog: a damaged position means restore it all.
      processor::internal::log(LogLevel::Warning, "streams", error.what(), ": restoring from the changelog");
      db->remove(internal::position_key(name, partition));
      stores.push_back(std::make_unique<internal::StorePartition>(*db, name, partition));
    }
  }
  return stores;
}

void StreamProcessor::Impl::add_task(std::int32_t partition) {
  if (partition >= partitions) {
    throw StateError(ErrorKind::InvalidArgument, "input topic '" + options.input_topic +
                                                     "' now has partition " + std::to_string(partition) +
                                                     " but its changelogs have " +
                                                     std::to_string(partitions) + " partitions");
  }
  if (standbys.count(partition) != 0) {
    // Its warm copy becomes the task's local state: the restoration replays only the tail.
    drop_standby(partition);
    processor::internal::log(LogLevel::Info, "streams", input_key(partition),
                             " was kept warm by a standby here: restoring only what it had not read");
    count([](StreamProcessorStats& stats) { ++stats.standbys_promoted; });
  }
  fenced_for.erase(partition);
  Task& task = tasks[partition];
  task = Task{};
  task.partition = partition;
  task.stores = open_stores(partition);
  task.restoring = task.stores.size();
  for (std::size_t i = 0; i < task.stores.size(); ++i) {
    if (restorer->add(*task.stores[i], changelogs[i])) --task.restoring;
  }
  // The poll that serves this callback returns now, not at its timeout (the partitions assigned
  // stay paused meanwhile, so nothing else would end its wait): the next one starts reading the
  // changelogs. bench_streams' restore of 1M keys began ~100 ms late.
  if (task.restoring > 0) buffer->end_wait();
  // Activated from the polling loop (activate_restored()), never inside this callback: librdkafka
  // refuses to seek a partition that a revoke in the same rebalance is still stopping.
}

void StreamProcessor::Impl::remove_task(std::int32_t partition) {
  restorer->remove(partition);
  tasks.erase(partition);
  fenced_for.erase(partition);
  failing.erase(failing.lower_bound({partition, INT64_MIN}), failing.upper_bound({partition, INT64_MAX}));
}

bool StreamProcessor::Impl::activate_restored() {
  bool waiting = false;
  for (auto& [partition, task] : tasks) {
    if (!task.active && task.restoring == 0 && !activate(task)) waiting = true;
  }
  return waiting;
}

bool StreamProcessor::Impl::activate(Task& task) {
  // Read after restoration: every transaction that wrote to this partition's changelogs is
  // decided by now, and librdkafka asks for stable offsets (read_committed), so the committed
  // offset is the one that matches the restored state.
  auto list = kafka::internal::make_partition_list(1);
  rd_kafka_topic_partition_list_add(list.get(), options.input_topic.c_str(), task.partition);
  kafka::internal::read_committed(consumer.get(), list.get(), options.request_timeout,
                                  kafka::internal::RetryPolicy{options.request_timeout});
  const std::int64_t committed = list->elems[0].offset;
  PositionDecision decided;
  try {
    decided = decide_position(task.partition, committed >= 0 ? std::optional(committed) : std::nullopt,
                              std::nullopt);
  } catch (const StateError& error) {
    if (!error.retriable()) throw;  // the policy's Error, or a refusal
    processor::internal::log(LogLevel::Warning, "streams", "the log range of ", input_key(task.partition),
                             " cannot be read yet (", error.what(), "): trying again");
    return false;
  }
  const std::int64_t start = decided.decision.start;
  try {
    seek(task.partition, start);
  } catch (const StateError& error) {
    if (error.kafka_error_code() != RD_KAFKA_RESP_ERR__STATE) throw;
    processor::internal::log(LogLevel::Debug, "streams", input_key(task.partition),
                             " cannot be positioned yet (", error.what(), "): trying again");
    // A revoke in the same rebalance stops it for moments; refused for longer, librdkafka has
    // stopped its fetcher (an out-of-range start whose error event this member did not see):
    // assigned again at the start instead.
    if (++task.seek_refusals >= kSeekRefusalsBeforeReassigning) task.fetch_stopped = true;
    return false;
  }
  if (decided.moves()) count_move(task.partition, decided);
  task.rewind_offset = start;
  task.next_offset = -1;
  task.active = true;
  list->elems[0].offset = RD_KAFKA_OFFSET_INVALID;
  rd_kafka_resume_partitions(consumer.get(), list.get());
  processor::internal::log(LogLevel::Info, "streams", input_key(task.partition),
                           " restored; processing from offset ", start);
  return true;
}

StreamProcessor::Impl::PositionDecision StreamProcessor::Impl::decide_position(
    std::int32_t partition, std::optional<std::int64_t> position, std::optional<std::int64_t> divergence) {
  PositionDecision decided;
  // read_committed: the end is the last stable offset, which a committed offset never passes.
  decided.range = kafka::internal::query_log_range(
      consumer.get(), kafka::TopicPartition(options.input_topic, partition), options.request_timeout,
      kafka::internal::start_retry_policy(options.request_timeout));
  decided.from = divergence ? divergence : position;
  decided.decision = divergence ? kafka::internal::decide_truncated(*divergence, decided.range.low,
                                                                    decided.range.high, options.out_of_range)
                                : kafka::internal::decide_start(position, decided.range.low,
                                                                decided.range.high, options.out_of_range);
  if (decided.moves() && decided.decision.action == kafka::OutOfRangeAction::Error)
    count_move(partition, decided);
  return decided;
}

void StreamProcessor::Impl::count_move(std::int32_t partition, const PositionDecision& decided) {
  const std::uint64_t skipped = kafka::internal::enact(kafka::TopicPartition(options.input_topic, partition),
                                                       decided.decision, decided.from, decided.range.low,
                                                       decided.range.high, "streams");  // throws for Error
  count([&](StreamProcessorStats& stats) {
    ++stats.out_of_range_resets;
    stats.records_skipped += skipped;
  });
}

void StreamProcessor::Impl::seek(std::int32_t partition, std::int64_t offset) {
  auto list = kafka::internal::make_partition_list(1);
  rd_kafka_topic_partition_list_add(list.get(), options.input_topic.c_str(), partition)->offset = offset;
  const std::string what = "seeking " + input_key(partition) + " to " + std::to_string(offset);
  const auto it = tasks.find(partition);
  // librdkafka refuses to seek a partition whose fetcher it stopped (Task::fetch_stopped; its
  // error event may still be queued): that one is assigned again at the offset. An inactive
  // partition is also refused while a revoke in the same rebalance still stops it: that one
  // waits for the next poll (the caller's _STATE).
  if (it != tasks.end() && (it->second.active || it->second.fetch_stopped)) {
    kafka::internal::move_partitions(
        consumer.get(), list.get(), kafka::internal::to_timeout_ms(options.request_timeout), what.c_str(),
        [&](const char*, std::int32_t other) {
          // Where a partition stands that no record came from since it was sought: an active
          // one at its rewind offset; an inactive one is sought when it is activated.
          const auto found = tasks.find(other);
          return found != tasks.end() && found->second.active ? found->second.rewind_offset
                                                              : RD_KAFKA_OFFSET_INVALID;
        });
    it->second.fetch_stopped = false;
    pause_inactive();  // a whole new assignment (eager) fetches every partition
  } else {
    kafka::internal::throw_if_error(
        RdPtr<rd_kafka_error_t>(rd_kafka_seek_partitions(
            consumer.get(), list.get(), kafka::internal::to_timeout_ms(options.request_timeout))),
        what);
    if (list->elems[0].err != RD_KAFKA_RESP_ERR_NO_ERROR)
      throw kafka::internal::kafka_error(list->elems[0].err, what);
  }
  // Fetched before the seek: librdkafka drops those still in its queue, the buffer its own.
  buffer->drop([&](std::string_view, std::int32_t buffered) { return buffered == partition; });
}

void StreamProcessor::Impl::pause_inactive() {
  auto list = kafka::internal::make_partition_list(tasks.size());
  for (const auto& [partition, task] : tasks) {
    if (!task.active) rd_kafka_topic_partition_list_add(list.get(), options.input_topic.c_str(), partition);
  }
  if (list->cnt > 0) rd_kafka_pause_partitions(consumer.get(), list.get());
}

void StreamProcessor::Impl::rewind() {
  rewind_pending = false;
  for (auto& [partition, task] : tasks) {
    if (!task.active) continue;
    seek(partition, task.rewind_offset);
    task.next_offset = -1;
  }
}

void StreamProcessor::Impl::restore_some() {
  if (restorer->idle()) return;
  for (const std::int32_t partition : restorer->poll(std::chrono::milliseconds(50))) {
    const auto it = tasks.find(partition);
    if (it != tasks.end()) --it->second.restoring;
  }
  // At once when the group's description can tell a departed member (see fence_departed_owner),
  // else after kFenceAfter.
  for (const std::int32_t partition : restorer->blocked(std::chrono::milliseconds(0))) {
    if (fenced_for.count(partition) == 0) fence_departed_owner(partition);
  }
  const auto& restored = restorer->counters();
  count([&](StreamProcessorStats& stats) {
    stats.restored_records = restored.records;
    stats.restorations = restored.completed;
    stats.local_state_reused = restored.reused;
    stats.local_state_wiped = restored.wiped;
  });
}

}  // namespace processor::streams
