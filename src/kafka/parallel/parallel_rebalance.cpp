// ParallelConsumer and rebalances: a partition's tenure starts with the records its previous
// owner acknowledged, and ends with its running records drained or abandoned.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "common/log_internal.hpp"
#include "kafka/parallel/parallel_consumer_impl.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

namespace {

std::string describe(const std::vector<TopicPartition>& partitions) {
  std::string text;
  for (const auto& tp : partitions) {
    if (!text.empty()) text += ", ";
    text += tp.to_key();
  }
  return text;
}

}  // namespace

void ParallelConsumer::Impl::on_assigned(const std::vector<internal::AssignedStart>& partitions) {
  std::vector<PartitionRun*> assigned;
  for (const auto& start : partitions) {
    const TopicPartition& tp = start.partition;
    auto run = std::make_shared<PartitionRun>();
    run->partition = tp;
    run->serial = next_serial++;
    run->start = start.position;
    // This member's own acknowledgements first: they hold those of the committed metadata, and
    // the records acknowledged since that commit.
    std::optional<AckedSet> acked;
    std::optional<LeftAcks> left = take_own_acks(tp, start.position);
    const bool own = left.has_value();
    if (own) {
      acked = resume_own_tenure(*run, std::move(*left));
    } else {
      // Metadata of another tool, garbage, or written for another offset is ignored (the
      // manager logs why and counts it): every record from the committed offset is processed
      // again, which is what a consumer without it would do.
      const std::uint64_t ignored_before = manager.stats().ack_metadata_ignored;
      acked = manager.acked_after_restart(tp.topic, tp.partition);
      metadata_warnings.fetch_add(manager.stats().ack_metadata_ignored - ignored_before,
                                  std::memory_order_relaxed);
    }
    if (acked && acked->committable == std::max(start.position, run->skip_below)) {
      try {
        manager.resume_tracking(tp.topic, tp.partition, *acked);
        run->restored = std::move(acked);
      } catch (const StateError& error) {
        if (error.kind() != ErrorKind::InvalidArgument) throw;
        metadata_warnings.fetch_add(1, std::memory_order_relaxed);
        processor::internal::log(
            LogLevel::Warning, "parallel", "ignoring the acknowledgements of ", tp.to_key(),
            own ? " from this member's last tenure: " : " from its previous owner: ", error.what());
      }
    } else if (acked) {
      processor::internal::log(LogLevel::Info, "parallel", tp.to_key(), " starts at ", start.position,
                               ", not at the committed offset ", acked->committable,
                               " its acknowledgements were written for: they are not used");
    }
    assigned.push_back(run.get());
    runs.insert_or_assign(tp, std::move(run));
  }
  last_run = nullptr;
  // Set explicitly either way: librdkafka keeps a partition's pause across its loss and
  // reassignment, so one paused in its previous tenure here would stay paused for good.
  set_paused(assigned, buffer_paused);
}

void ParallelConsumer::Impl::on_revoking(const std::vector<TopicPartition>& partitions, bool lost) {
  submit_batch();
  std::vector<PartitionRun*> leaving;
  std::size_t abandoned = 0;
  for (const auto& tp : partitions) {
    const auto it = runs.find(tp);
    if (it == runs.end()) continue;
    PartitionRun& run = *it->second;
    leaving.push_back(&run);
    // No record of it is retried from here on, and records not started are not processed here:
    // the next owner fetches them again.
    run.revoking.store(true, std::memory_order_release);
    const auto dropped = queue.drop_group(&run);
    run.queued.fetch_sub(dropped.size(), std::memory_order_acq_rel);
    abandoned += dropped.size() + run.held.size();
    run.held.clear();
    run.pending_end.reset();
  }
  const std::vector<const void*> groups(leaving.begin(), leaving.end());
  // The checkpoint that KafkaConsumer takes next holds exactly what is acknowledged: nothing
  // runs while it is taken.
  revoke_barrier = static_cast<bool>(options.consumer.take_checkpoint) && !lost;
  if (revoke_barrier) queue.raise_barrier();
  std::size_t still_running = 0;
  if (lost) {
    for (const void* group : groups) still_running += queue.running_in(group);
  } else if (!queue.wait_idle(groups, Clock::now() + options.drain_timeout)) {
    for (const void* group : groups) still_running += queue.running_in(group);
  }
  if (still_running > 0) {
    processor::internal::log(
        LogLevel::Warning, "parallel", still_running, " records of ", describe(partitions),
        lost ? " were running when the partitions were lost" : " were still running after drain_timeout",
        ": they are not committed, and the next owner processes them again");
  }
  for (PartitionRun* run : leaving) run->drained.store(true, std::memory_order_release);
  remember_acks(leaving);
  abandoned_on_revoke.fetch_add(abandoned + still_running, std::memory_order_relaxed);
  if (revoke_barrier) {
    while (!queue.wait_idle(
        {}, Clock::now() + std::max(options.drain_timeout, std::chrono::milliseconds(1000)))) {
      if (queue.gauges().running <= still_running) break;  // only the abandoned ones are left
      processor::internal::log(LogLevel::Warning, "parallel", "the checkpoint before a revoke waits for ",
                               queue.gauges().running, " running records to finish");
    }
  }
}

void ParallelConsumer::Impl::on_revoked(const std::vector<TopicPartition>& partitions) {
  for (const auto& tp : partitions) runs.erase(tp);
  last_run = nullptr;
  if (std::exchange(revoke_barrier, false)) queue.lower_barrier();
}

bool ParallelConsumer::Impl::acks_are_final() const {
  if (options.consumer.take_checkpoint) return false;
  const auto kind = manager.strategy().kind();
  return kind != OffsetCommitStrategy::Kind::OnCheckpoint;
}

void ParallelConsumer::Impl::remember_acks(const std::vector<PartitionRun*>& leaving) {
  if (!acks_are_final()) return;
  // After the drain: a record finishing from here on is not acknowledged (drained).
  for (const PartitionRun* run : leaving) {
    const TopicPartition& tp = run->partition;
    if (std::optional<AckedSet> acked = manager.tracked_acks(tp.topic, tp.partition)) {
      left_acks.insert_or_assign(tp, LeftAcks{run->start, std::move(*acked)});
    } else {
      left_acks.erase(tp);
    }
  }
}

std::optional<ParallelConsumer::Impl::LeftAcks> ParallelConsumer::Impl::take_own_acks(
    const TopicPartition& tp, std::int64_t position) {
  const auto it = left_acks.find(tp);
  if (it == left_acks.end()) return std::nullopt;
  LeftAcks left = std::move(it->second);
  left_acks.erase(it);
  // Every offset in [left.start, done) was processed here (or skipped as a previous owner's, or
  // is no record). A start outside that range was committed by another member, or reset. A start
  // not known (librdkafka's committed offset, unchecked: the cluster did not answer) says
  // neither, so nothing is skipped and the position is not moved.
  const std::int64_t done = left.acked.committable;
  if (position < 0 || left.start < 0) return std::nullopt;
  if (position < left.start || position > done || !acks_are_final()) return std::nullopt;
  if (position == done && left.acked.acked.empty()) return std::nullopt;
  return left;
}

std::optional<AckedSet> ParallelConsumer::Impl::resume_own_tenure(PartitionRun& run, LeftAcks left) {
  const TopicPartition& tp = run.partition;
  const std::int64_t done = left.acked.committable;
  if (done > run.start) {
    try {
      internal::update_position(*consumer_impl, tp, done);
    } catch (const StateError& error) {
      if (error.kind() != ErrorKind::InvalidArgument) throw;
      processor::internal::log(LogLevel::Warning, "parallel", "not resuming ", tp.to_key(), " at ", done,
                               " after this member's last tenure: ", error.what());
      return std::nullopt;
    }
    run.skip_below = done;
  }
  processor::internal::log(LogLevel::Info, "parallel", tp.to_key(), " is back at ", run.start, ": the ",
                           static_cast<std::uint64_t>(done - run.start) + left.acked.size(),
                           " records this member processed there in its last tenure are skipped");
  if (left.acked.acked.empty()) return std::nullopt;
  return std::move(left.acked);
}

}  // namespace processor::kafka
