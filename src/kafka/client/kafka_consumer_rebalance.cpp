// KafkaConsumer's rebalances: an assignment's start positions (a checkpoint, the offset store,
// the group's committed offset, each checked against the log by the out-of-range policy and,
// with a leader epoch, validated against truncation), and a revocation's commit.

#include <algorithm>
#include <unordered_set>

#include "common/log_internal.hpp"
#include "kafka/client/kafka_consumer_impl.hpp"
#include "kafka/group/rebalance.hpp"

namespace processor::kafka {

using internal::PartitionListPtr;

void KafkaConsumer::Impl::on_rebalance(rd_kafka_resp_err_t event,
                                       rd_kafka_topic_partition_list_t* partitions) {
  try {
    if (event == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      assign(partitions);
    } else {
      revoke(partitions);
    }
  } catch (...) {
    if (!callback_error) callback_error = std::current_exception();
    // librdkafka must still see a revocation applied, or the member stalls. A failed assignment
    // (the policy refused a start, or a user callback threw) is left unapplied: nothing must be
    // consumed from an undecided position, and the error reaches poll().
    if (event != RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS)
      internal::apply_rebalance_noexcept(rk(), event, partitions);
  }
}

KafkaConsumer::Impl::Start KafkaConsumer::Impl::start_position(const TopicPartition& tp,
                                                               const std::optional<std::int64_t>& committed,
                                                               std::int32_t committed_epoch) {
  Start start;
  start.stored = stored_offset(tp);
  std::optional<std::int64_t> position;
  std::int32_t epoch = -1;  // a checkpoint position carries none
  if (options.checkpoint_position) position = options.checkpoint_position(tp);
  if (!position && start.stored) {
    position = start.stored->offset;
    epoch = start.stored->leader_epoch.value_or(-1);
  }
  if (!position && committed) {
    position = committed;
    epoch = committed_epoch;
  }
  const internal::LogRange range = log_range(tp);
  start = decided(tp, internal::decide_start(position, range.low, range.high, options.out_of_range), position,
                  range, std::move(start));
  if (position && start.position == *position) start.leader_epoch = epoch;
  return start;
}

KafkaConsumer::Impl::Start KafkaConsumer::Impl::start_after_truncation(const TopicPartition& tp,
                                                                       std::int64_t divergence) {
  Start start;
  start.stored = stored_offset(tp);
  const internal::LogRange range = log_range(tp);
  return decided(tp, internal::decide_truncated(divergence, range.low, range.high, options.out_of_range),
                 divergence, range, std::move(start));
}

internal::LogRange KafkaConsumer::Impl::log_range(const TopicPartition& tp) {
  const internal::LogRange range = internal::query_log_range(
      rk(), tp, options.request_timeout, internal::start_retry_policy(options.request_timeout));
  manager.update_high_watermark(tp.topic, tp.partition, range.high);
  return range;
}

KafkaConsumer::Impl::Start KafkaConsumer::Impl::decided(const TopicPartition& tp,
                                                        const internal::StartDecision& decision,
                                                        std::optional<std::int64_t> position,
                                                        internal::LogRange range, Start start) {
  start.position = decision.start;
  if (decision.cause == internal::OutOfRangeCause::InRange) return start;
  const std::uint64_t skipped = internal::enact(tp, decision, position, range.low, range.high, "consumer");
  processor::detail::MutexLock lock(stats_mutex);
  ++stats.out_of_range_resets;
  ++internal::resets_of(stats, decision.cause);
  stats.records_skipped += skipped;
  return start;
}

void KafkaConsumer::Impl::validate_starts() {
  auto positions = internal::make_partition_list(unvalidated.size());
  for (const Unvalidated& start : unvalidated) {
    rd_kafka_topic_partition_list_add(positions.get(), start.tp.topic.c_str(), start.tp.partition);
  }
  // The application's position is INVALID until a record of the partition was consumed since it
  // was assigned or sought.
  rd_kafka_position(rk(), positions.get());
  auto seeks = internal::make_partition_list(unvalidated.size());
  for (int i = 0; i < positions->cnt; ++i) {
    const Unvalidated& start = unvalidated[static_cast<std::size_t>(i)];
    // Records came from the start unvalidated: librdkafka validates their epochs on leader changes.
    if (positions->elems[i].offset != RD_KAFKA_OFFSET_INVALID) continue;
    rd_kafka_topic_partition_t* entry =
        rd_kafka_topic_partition_list_add(seeks.get(), start.tp.topic.c_str(), start.tp.partition);
    entry->offset = start.offset;
    rd_kafka_topic_partition_set_leader_epoch(entry, start.leader_epoch);
  }
  unvalidated.clear();
  if (seeks->cnt == 0) return;
  RdPtr<rd_kafka_error_t> error(
      rd_kafka_seek_partitions(rk(), seeks.get(), internal::to_timeout_ms(options.request_timeout)));
  for (int i = 0; i < seeks->cnt; ++i) {
    const rd_kafka_topic_partition_t& entry = seeks->elems[i];
    const rd_kafka_resp_err_t code = error ? rd_kafka_error_code(error.get()) : entry.err;
    if (code == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    if (code == RD_KAFKA_RESP_ERR__STATE) {  // the fetcher has not started yet
      unvalidated.push_back({TopicPartition(entry.topic, entry.partition), entry.offset,
                             rd_kafka_topic_partition_get_leader_epoch(&entry)});
      continue;
    }
    processor::internal::log(LogLevel::Warning, "consumer", partition_key(entry.topic, entry.partition),
                             " starts at ", entry.offset,
                             " without its leader epoch checked against the log: ",
                             error ? rd_kafka_error_string(error.get()) : rd_kafka_err2str(code));
  }
}

void KafkaConsumer::Impl::forget_unvalidated(const std::vector<TopicPartition>& partitions) {
  std::erase_if(unvalidated, [&](const Unvalidated& start) {
    return std::find(partitions.begin(), partitions.end(), start.tp) != partitions.end();
  });
}

void KafkaConsumer::Impl::assign(rd_kafka_topic_partition_list_t* partitions) {
  if (closed) {
    // An assignment that waited in the queue, served by rd_kafka_consumer_close: the terminating
    // client answers no query, and nothing will be consumed. It is applied as it is, so that the
    // close goes on to revoke it; the manager never adopts these partitions, so the revocation
    // commits nothing for them.
    internal::apply_rebalance(rk(), RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS, partitions);
    return;
  }
  const auto assigned = internal::from_partition_list(partitions);
  // One OffsetFetch for the whole assignment; it and each log range query are retried inside the
  // rebalance while their errors are retriable (a topic seconds old, a leader moving, a
  // coordinator loading). Should such an error outlast the retries, the partition is still
  // assigned, from the group's committed offset (librdkafka then asks for it itself, and a
  // position out of range comes back as a consume error that the out-of-range policy decides):
  // a member never holds an assignment it did not apply, which would stall the whole group.
  auto committed = internal::to_partition_list(assigned);
  std::optional<StateError> unknown_starts;
  try {
    internal::read_committed(rk(), committed.get(), options.request_timeout,
                             internal::start_retry_policy(options.request_timeout));
  } catch (const StateError& error) {
    if (!error.retriable()) throw;
    unknown_starts = error;
  }
  for (int i = 0; i < partitions->cnt; ++i) {
    const TopicPartition tp(partitions->elems[i].topic, partitions->elems[i].partition);
    std::optional<Start> start;
    if (!unknown_starts) {
      const std::optional<std::int64_t> broker_committed =
          committed->elems[i].offset >= 0 ? std::optional(committed->elems[i].offset) : std::nullopt;
      try {
        start = start_position(tp, broker_committed,
                               rd_kafka_topic_partition_get_leader_epoch(&committed->elems[i]));
      } catch (const StateError& error) {
        if (!error.retriable()) throw;
        unknown_starts = error;
      }
    }
    if (!start) {
      processor::internal::log(
          LogLevel::Warning, "consumer", tp.to_key(),
          " starts from the group's committed offset, unchecked: ", unknown_starts->what());
      partitions->elems[i].offset = RD_KAFKA_OFFSET_INVALID;
      continue;
    }
    manager.adopt_start_position(tp.topic, tp.partition, start->position, start->stored);
    partitions->elems[i].offset = start->position;
    starts.insert_or_assign(tp, *start);
    if (start->leader_epoch >= 0 && start->position > 0) {
      unvalidated.push_back({tp, start->position, start->leader_epoch});
    }
  }
  internal::apply_rebalance(rk(), RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS, partitions);
  if (!unvalidated.empty()) validate_starts();
  forget_unowned();
  {
    processor::detail::MutexLock lock(stats_mutex);
    stats.assignments += assigned.size();
  }
  if (sink != nullptr) {
    std::vector<internal::AssignedStart> started;
    started.reserve(assigned.size());
    for (int i = 0; i < partitions->cnt; ++i) {
      started.push_back({assigned[static_cast<std::size_t>(i)], partitions->elems[i].offset});
    }
    sink->on_assigned(started);
  }
  if (options.on_assigned) options.on_assigned(assigned);
}

void KafkaConsumer::Impl::forget_unowned() {
  const auto owned_list = client->assignment();
  const std::unordered_set<TopicPartition> owned(owned_list.begin(), owned_list.end());
  std::vector<TopicPartition> stale;
  const auto collect = [&](const std::unordered_map<TopicPartition, OffsetInfo>& view) {
    for (const auto& [tp, info] : view) {
      if (!owned.contains(tp) &&
          std::find(options.topics.begin(), options.topics.end(), tp.topic) != options.topics.end()) {
        stale.push_back(tp);
      }
    }
  };
  collect(manager.get_all_committed());
  collect(manager.get_all_pending());
  if (!stale.empty()) manager.forget_partitions(stale);
}

void KafkaConsumer::Impl::revoke(rd_kafka_topic_partition_list_t* partitions) {
  const auto revoked = internal::from_partition_list(partitions);
  const bool lost = internal::assignment_lost(rk());
  bool commit_failed = false;
  // An exception from the user's callbacks is kept for the polling thread; the partitions are
  // still forgotten and librdkafka still sees the revocation applied.
  std::exception_ptr user_error;
  if (sink != nullptr) {
    // In flight records of the revoked partitions finish (and are acknowledged) or are abandoned
    // before the checkpoint and the commit below.
    try {
      sink->on_revoking(revoked, lost);
    } catch (...) {
      user_error = std::current_exception();
    }
  }
  if (lost) {
    try {
      if (options.on_lost) options.on_lost(revoked);
    } catch (...) {
      user_error = std::current_exception();
    }
  } else {
    try {
      // The rebalance-aware checkpoint: state and offsets leave together, while this member
      // still owns the partitions.
      if (options.take_checkpoint) take_checkpoint();
      if (options.on_revoked) options.on_revoked(revoked);
    } catch (...) {
      user_error = std::current_exception();
    }
    // Final offsets go out while this member still owns the partitions. If that fails the next
    // owner resumes from the last commit: records since then are processed again, never lost.
    // Under on_checkpoint() offsets reach the store only with a completed checkpoint: pending
    // offsets beyond it are not in any checkpoint of the state.
    const bool on_checkpoint = manager.strategy().kind() == OffsetCommitStrategy::Kind::OnCheckpoint;
    if (options.commit_on_revoke && !on_checkpoint) {
      try {
        manager.commit();
      } catch (const StateError& error) {
        commit_failed = true;
        processor::internal::log(
            LogLevel::Warning, "consumer",
            "commit on revoke failed, the next owner reprocesses from the last commit: ", error.what());
      }
    }
  }
  manager.forget_partitions(revoked);
  for (const auto& tp : revoked) starts.erase(tp);
  forget_unvalidated(revoked);
  // Their fetched records are the next owner's. (librdkafka pauses the partitions when the
  // rebalance starts and purges what was fetched before: normally none is left here.) Those a
  // batch being filled took before this revocation go when the call returns (fill_buffer).
  drop_buffered(revoked);
  if (filling) revoked_while_filling.push_back({buffer.taken_in_fill(), revoked});
  if (sink != nullptr) sink->on_revoked(revoked);
  internal::apply_rebalance_noexcept(rk(), RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS, partitions);
  {
    processor::detail::MutexLock lock(stats_mutex);
    (lost ? stats.lost : stats.revocations) += revoked.size();
    if (commit_failed) ++stats.failed_revoke_commits;
  }
  if (user_error && !callback_error) callback_error = user_error;
}

}  // namespace processor::kafka
