#include "processor/kafka/kafka_consumer.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "common/log_internal.hpp"
#include "kafka/client/consumer_setup.hpp"
#include "kafka/client/fetch_buffer.hpp"
#include "kafka/client/kafka_client_impl.hpp"
#include "kafka/client/out_of_range_policy.hpp"
#include "kafka/client/record_sink.hpp"
#include "kafka/group/rebalance.hpp"
#include "kafka/group/start_offsets.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/wrap_errors.hpp"

namespace processor::kafka {

using internal::PartitionListPtr;
using internal::RdPtr;

namespace {

bool contains(const std::vector<TopicPartition>& partitions, std::string_view topic, std::int32_t partition) {
  return std::any_of(partitions.begin(), partitions.end(), [&](const TopicPartition& tp) {
    return tp.partition == partition && tp.topic == topic;
  });
}

}  // namespace

struct KafkaConsumer::Impl {
  using Clock = std::chrono::steady_clock;

  Impl(std::shared_ptr<KafkaClient> kafka_client, OffsetManager& offset_manager,
       KafkaConsumerOptions consumer_options)
      : client(std::move(kafka_client)),
        manager(offset_manager),
        options(std::move(consumer_options)),
        buffer(client->impl().rk()) {}

  // The manager of a one-call start (connect()), first so that it goes last.
  std::unique_ptr<OffsetManager> owned_manager;
  std::shared_ptr<KafkaClient> client;
  OffsetManager& manager;
  const KafkaConsumerOptions options;
  std::atomic<bool> stop_requested{false};
  // Parallel mode: records, partition ends and rebalances also go to the sink. Polling thread.
  internal::RecordSink* sink = nullptr;
  bool running = false;  // inside run()
  bool closed = false;
  // An error raised inside a librdkafka callback, rethrown on the polling thread.
  std::exception_ptr callback_error;
  Clock::time_point next_high_watermark_refresh{};

  mutable processor::detail::Mutex stats_mutex;
  ConsumerStats stats PROCESSOR_GUARDED_BY(stats_mutex);

  rd_kafka_t* rk() const noexcept { return client->impl().rk(); }

  // Where a partition starts, and what the manager's offset store holds for it: the committed
  // view, which a start position that nobody committed must not pretend to be.
  struct Start {
    std::int64_t position = 0;
    std::optional<OffsetInfo> stored;
    // The leader epoch of the record before `position`, when the position is a stored or
    // committed offset that carries one (KIP-320); else -1. A start with an epoch is validated
    // against the log (validate_starts()).
    std::int32_t leader_epoch = -1;
  };

  void on_rebalance(rd_kafka_resp_err_t event, rd_kafka_topic_partition_list_t* partitions);
  void assign(rd_kafka_topic_partition_list_t* partitions);
  void revoke(rd_kafka_topic_partition_list_t* partitions);
  // Forgets the manager's partitions of the subscribed topics that this member does not own
  // after an assignment: e.g. partitions restored from a checkpoint taken while it owned more.
  // They belong to other members; our checkpoints must not carry their stale positions, nor
  // our completions try to commit them (the offset store refuses a partition not owned).
  void forget_unowned();
  // Retried while the cluster's errors are retriable (internal::start_retry_policy). Throws
  // StateError when they last past the retries, or when the policy is Error and the position is
  // out of range. `committed_epoch`: the leader epoch of the group's committed offset, or -1.
  Start start_position(const TopicPartition& tp, const std::optional<std::int64_t>& committed,
                       std::int32_t committed_epoch = -1);
  // Where `tp` starts again after librdkafka's offset validation found its log truncated at
  // `divergence` (the end offset of the position's leader epoch), by the policy's `truncated`.
  Start start_after_truncation(const TopicPartition& tp, std::int64_t divergence);
  // What the manager's offset store holds for `tp`.
  std::optional<OffsetInfo> stored_offset(const TopicPartition& tp) {
    return internal::call_backend("reading the stored offset of " + tp.to_key(), [&] {
      return manager.offset_store()->get_offset(manager.consumer_group(), tp);
    });
  }
  // The log range of `tp` (retried like start_position), noted as the manager's high watermark.
  internal::LogRange log_range(const TopicPartition& tp);
  // Applies a decision of the out-of-range policy to `start`: the decided position when in range;
  // else throws for Error, or counts and logs the move. `position` names where the partition
  // would have resumed, for the message (nullopt: nowhere).
  Start decided(const TopicPartition& tp, const internal::StartDecision& decision,
                std::optional<std::int64_t> position, internal::LogRange range, Start start);
  // Starts that carry a leader epoch and were not yet validated against the log. librdkafka
  // validates a position (OffsetForLeaderEpoch) only when it is sought with its epoch, not when
  // it is assigned: each is sought once its partition's fetcher runs, before any of its records
  // is read. A truncation comes back as a consume error (on_consume_error). Polling thread only.
  struct Unvalidated {
    TopicPartition tp;
    std::int64_t offset = 0;
    std::int32_t leader_epoch = -1;
  };
  std::vector<Unvalidated> unvalidated;
  // Seeks every unvalidated start with its epoch; keeps those whose fetcher has not started yet
  // (tried again after the next poll), drops those whose partition has delivered records since.
  void validate_starts();
  void forget_unvalidated(const std::vector<TopicPartition>& partitions);
  void on_partition_end(const rd_kafka_message_t& message);
  void on_consume_error(const rd_kafka_message_t& message);
  // Starts each listed partition again at its offset (`restarts` parallel to `positions`): the
  // manager forgets what was pending and adopts the start, then the consumer seeks there.
  void restart_at(rd_kafka_topic_partition_list_t* positions, const std::vector<Start>& restarts,
                  const char* what);
  void refresh_high_watermarks();
  // Records the high watermark librdkafka holds for each partition that records came from in
  // this poll (cached from the fetch responses that brought them: no request), so that lag read
  // right after consuming is current.
  void record_fetched_high_watermarks();
  // Runs options.take_checkpoint and counts it.
  void take_checkpoint();
  // Runs the checkpoint that request_checkpoint() asked for, if any.
  void take_requested_checkpoint() {
    if (checkpoint_requested.load(std::memory_order_relaxed)) [[unlikely]] {
      checkpoint_requested.store(false, std::memory_order_relaxed);
      take_checkpoint();
    }
  }
  void rethrow_callback_error();
  // The next record of the fetch buffer, filled first when empty: returns the record, if any;
  // consumer errors and partition ends are served here. `arrived` says whether anything came
  // within the timeout.
  RdPtr<rd_kafka_message_t> next_record(int timeout_ms, bool& arrived);
  // Records taken from the consumer queue and not handed out yet. Polling thread.
  internal::FetchBuffer buffer;
  // Inside buffer.fill(): a revocation served there is noted with the number of records the call
  // had taken before it. Those of its partitions are dropped when the call returns; the records
  // taken after it are the next assignment's (a wait can span a whole rebalance, and an eager
  // group gives a partition back to the member that had it). The call is not ended early:
  // rd_kafka_yield() does not end a batch call (librdkafka's own calls inside the callback,
  // such as the assignment, reset it), and a yield still set when the call dequeues a record
  // loses that record.
  struct RevokedWhileFilling {
    std::size_t taken_before = 0;
    std::vector<TopicPartition> partitions;
  };
  bool filling = false;
  std::vector<RevokedWhileFilling> revoked_while_filling;
  // One buffer.fill(), then the records it took before a revocation of their partition are dropped.
  void fill_buffer(int timeout_ms);
  // Drops the buffered records of `partitions`: sought elsewhere, or no longer this member's.
  void drop_buffered(const std::vector<TopicPartition>& partitions);
  // After a poll's batch: counts, high watermarks, the commit strategy.
  void finish_poll(std::size_t handled);
  // The manager's handle of the message's partition. Records arrive in runs of one partition,
  // so the last one is remembered: the by-name lookup runs once per run, not once per record.
  // Each run's partition is noted for record_fetched_high_watermarks() (poll() forgets the
  // last handle when it starts, so every poll notes its first run too).
  // The record's leader epoch goes to the manager when it differs from the run's last one, for
  // the commits (KIP-320).
  PartitionHandle& handle_for(const rd_kafka_message_t& message, std::string_view topic) {
    if (!last_handle || last_topic != message.rkt || last_handle->partition() != message.partition ||
        last_handle->topic() != topic) {
      last_handle.emplace(manager.partition(topic, message.partition));
      last_topic = message.rkt;
      last_epoch = -1;
      note_fetched(*last_handle);
    }
    const std::int32_t epoch = rd_kafka_message_leader_epoch(&message);
    if (epoch != last_epoch) [[unlikely]] {
      last_epoch = epoch;
      if (epoch >= 0) last_handle->set_leader_epoch(epoch);
    }
    return *last_handle;
  }
  std::optional<PartitionHandle> last_handle;
  const rd_kafka_topic_t* last_topic = nullptr;
  std::int32_t last_epoch = -1;
  // The partitions records came from in the current poll, in runs.
  std::vector<PartitionHandle> fetched;
  void note_fetched(const PartitionHandle& partition) {
    if (fetched.empty() || &fetched.back().topic() != &partition.topic() ||
        fetched.back().partition() != partition.partition()) {
      fetched.push_back(partition);
    }
  }
  std::atomic<bool> checkpoint_requested{false};
  // Each assigned partition's start, kept so that a rewind before its first commit returns
  // there instead of asking the out-of-range policy again. Polling thread only.
  std::unordered_map<TopicPartition, Start> starts;
  // The start of `tp` while no commit was made since it started, i.e. its committed view in
  // `committed` (the manager's get_all_committed()) is still what the store held then: a rewind
  // goes back there. nullptr when a commit was made since, or the partition was never started here.
  const Start* uncommitted_start(const TopicPartition& tp,
                                 const std::unordered_map<TopicPartition, OffsetInfo>& committed) const {
    const auto start = starts.find(tp);
    if (start == starts.end()) return nullptr;
    const auto view = committed.find(tp);
    const std::optional<std::int64_t> now =
        view == committed.end() ? std::nullopt : std::optional<std::int64_t>(view->second.offset);
    const std::optional<std::int64_t> then =
        start->second.stored ? std::optional<std::int64_t>(start->second.stored->offset) : std::nullopt;
    return now == then ? &start->second : nullptr;
  }

  void count_records(std::size_t handled) {
    processor::detail::MutexLock lock(stats_mutex);
    stats.records += handled;
  }
  // Runs a call that may trigger a strategy commit; a failed commit is logged and counted.
  template <class Call>
  void automatic_commit(Call&& call);
};

KafkaConsumer::KafkaConsumer(std::shared_ptr<KafkaClient> client, OffsetManager& manager,
                             KafkaConsumerOptions options) {
  if (!client) throw StateError(ErrorKind::InvalidArgument, "KafkaConsumer needs a KafkaClient, got null");
  if (options.topics.empty())
    throw StateError(ErrorKind::InvalidArgument, "KafkaConsumer needs at least one topic");
  for (const auto& topic : options.topics) validate_topic(topic);
  if (manager.consumer_group() != client->group_id()) {
    throw StateError(ErrorKind::InvalidArgument,
                     "the OffsetManager tracks group '" + manager.consumer_group() +
                         "' but the KafkaClient belongs to group '" + client->group_id() + "'");
  }
  impl_ = std::make_unique<Impl>(std::move(client), manager, std::move(options));
  KafkaClient::Impl& client_impl = impl_->client->impl();
  {
    processor::detail::MutexLock lock(client_impl.rebalance_mutex);
    client_impl.rebalance_handler = [impl = impl_.get()](rd_kafka_resp_err_t event,
                                                         rd_kafka_topic_partition_list_t* partitions) {
      impl->on_rebalance(event, partitions);
    };
  }
  rd_kafka_poll_set_consumer(impl_->rk());
  auto topics = internal::make_partition_list(impl_->options.topics.size());
  for (const auto& topic : impl_->options.topics) {
    rd_kafka_topic_partition_list_add(topics.get(), topic.c_str(), RD_KAFKA_PARTITION_UA);
  }
  const rd_kafka_resp_err_t error = rd_kafka_subscribe(impl_->rk(), topics.get());
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(error, "subscribing");
  client_impl.subscribed = true;
}

KafkaConsumer::~KafkaConsumer() {
  try {
    close();
  } catch (const std::exception& error) {
    processor::internal::log(LogLevel::Error, "consumer",
                             "closing the Kafka consumer failed: ", error.what());
  }
  processor::detail::MutexLock lock(impl_->client->impl().rebalance_mutex);
  impl_->client->impl().rebalance_handler = nullptr;
}

std::unique_ptr<KafkaConsumer> KafkaConsumer::connect(ConsumerSetup setup, KafkaConsumerOptions options) {
  internal::ConsumerParts parts = internal::build_consumer(setup);
  options.topics = std::move(setup.topics);
  auto consumer =
      std::make_unique<KafkaConsumer>(std::move(parts.client), *parts.manager, std::move(options));
  consumer->impl_->owned_manager = std::move(parts.manager);
  return consumer;
}

OffsetManager& KafkaConsumer::manager() noexcept { return impl_->manager; }

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
  const auto [low, high] = range;
  const bool truncated = decision.cause == internal::OutOfRangeCause::Truncated;
  const std::string what = tp.to_key() + " " + internal::describe(decision.cause) + " (" +
                           (truncated ? "the log diverged at " : "position ") +
                           (position ? std::to_string(*position) : std::string("none")) + ", log [" +
                           std::to_string(low) + ", " + std::to_string(high) + "])";
  if (decision.action == OutOfRangeAction::Error) {
    throw internal::kafka_error(RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET, what + " and its policy is Error");
  }
  // A new group starting somewhere is routine; anything else moved a position that was kept.
  processor::internal::log(
      decision.cause == internal::OutOfRangeCause::NoOffset ? LogLevel::Info : LogLevel::Warning, "consumer",
      what, ": starting at ", decision.start);
  // Records jumped over: lost to retention below the log start, or left unread by Latest.
  const std::int64_t from = position ? *position : low;
  processor::detail::MutexLock lock(stats_mutex);
  ++stats.out_of_range_resets;
  ++internal::resets_of(stats, decision.cause);
  if (decision.start > from) stats.records_skipped += static_cast<std::uint64_t>(decision.start - from);
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
  const bool lost = rd_kafka_assignment_lost(rk()) != 0;
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

void KafkaConsumer::Impl::take_checkpoint() {
  options.take_checkpoint();
  processor::detail::MutexLock lock(stats_mutex);
  ++stats.checkpoints;
}

void KafkaConsumer::Impl::on_partition_end(const rd_kafka_message_t& message) {
  // At the end of a partition the fetch position is the log end: it has stepped over
  // transaction markers and compacted-away offsets that no record reports.
  const char* topic = rd_kafka_topic_name(message.rkt);
  if (sink != nullptr) {
    note_fetched(manager.partition(topic, message.partition));
    sink->on_partition_end(TopicPartition(topic, message.partition), message.offset);
    return;
  }
  try {
    automatic_commit([&] { manager.update_offset(topic, message.partition, message.offset); });
  } catch (const StateError& error) {
    // A position below the floor means a reset moved the partition meanwhile: keep the reset.
    if (error.kind() != ErrorKind::InvalidArgument) throw;
  }
  note_fetched(manager.partition(topic, message.partition));
  if (options.on_partition_end)
    options.on_partition_end(TopicPartition(topic, message.partition), message.offset);
  take_requested_checkpoint();
}

void KafkaConsumer::Impl::on_consume_error(const rd_kafka_message_t& message) {
  if (message.err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
    on_partition_end(message);
    return;
  }
  if (message.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
      message.err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) {
    // The log moved under a running consumer (retention or truncation): decide again by cause.
    // A truncation that librdkafka's offset validation found names where the log diverged.
    const TopicPartition tp(rd_kafka_topic_name(message.rkt), message.partition);
    auto list = internal::to_partition_list(std::vector<TopicPartition>{tp});
    const std::optional<std::int64_t> divergence =
        message.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET
            ? internal::truncation_divergence(rd_kafka_message_errstr(&message))
            : std::nullopt;
    const std::vector<Start> restarts{
        divergence ? start_after_truncation(tp, *divergence)
                   : start_position(tp, message.offset >= 0 ? std::optional(message.offset) : std::nullopt)};
    list->elems[0].offset = restarts[0].position;
    restart_at(list.get(), restarts, "seek");
    return;
  }
  if (auto fatal = internal::fatal_error(rk(), "the consumer failed for good")) throw *std::move(fatal);
  // A broker's refusal that cannot heal by itself is surfaced with its code; anything else is
  // transient (a broker connection, a leader move, a rejoin): librdkafka retries those quietly.
  const rd_kafka_resp_err_t code = message.err;
  if (internal::consume_error_is_final(code))
    throw internal::consume_error(message, client->group_id(), options.topics);
}

void KafkaConsumer::Impl::restart_at(rd_kafka_topic_partition_list_t* positions,
                                     const std::vector<Start>& restarts, const char* what) {
  const auto moved = internal::from_partition_list(positions);
  manager.forget_partitions(moved);
  forget_unvalidated(moved);
  drop_buffered(moved);
  for (int i = 0; i < positions->cnt; ++i) {
    manager.adopt_start_position(positions->elems[i].topic, positions->elems[i].partition,
                                 restarts[i].position, restarts[i].stored);
    starts.insert_or_assign(TopicPartition(positions->elems[i].topic, positions->elems[i].partition),
                            restarts[i]);
  }
  internal::move_partitions(rk(), positions, internal::to_timeout_ms(options.request_timeout), what,
                            [&](const char* topic, std::int32_t partition) {
                              const auto start = starts.find(TopicPartition(topic, partition));
                              return start == starts.end() ? RD_KAFKA_OFFSET_INVALID : start->second.position;
                            });
}

void KafkaConsumer::Impl::refresh_high_watermarks() {
  const auto now = Clock::now();
  if (now < next_high_watermark_refresh) return;
  next_high_watermark_refresh = now + options.high_watermark_refresh;
  for (const auto& tp : client->assignment()) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    // Cached from fetch responses: no request.
    if (rd_kafka_get_watermark_offsets(rk(), tp.topic.c_str(), tp.partition, &low, &high) ==
            RD_KAFKA_RESP_ERR_NO_ERROR &&
        high >= 0) {
      manager.update_high_watermark(tp.topic, tp.partition, high);
    }
  }
}

void KafkaConsumer::Impl::record_fetched_high_watermarks() {
  for (const PartitionHandle& partition : fetched) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    if (rd_kafka_get_watermark_offsets(rk(), partition.topic().c_str(), partition.partition(), &low, &high) ==
            RD_KAFKA_RESP_ERR_NO_ERROR &&
        high >= 0) {
      manager.update_high_watermark(partition.topic(), partition.partition(), high);
    }
  }
  fetched.clear();
}

void KafkaConsumer::Impl::fill_buffer(int timeout_ms) {
  filling = true;
  buffer.fill(timeout_ms);
  filling = false;
  if (!revoked_while_filling.empty()) [[unlikely]] {
    buffer.drop_filled([&](std::size_t index, std::string_view topic, std::int32_t partition) {
      return std::any_of(revoked_while_filling.begin(), revoked_while_filling.end(),
                         [&](const RevokedWhileFilling& r) {
                           return index < r.taken_before && contains(r.partitions, topic, partition);
                         });
    });
    revoked_while_filling.clear();
  }
  rethrow_callback_error();
}

void KafkaConsumer::Impl::drop_buffered(const std::vector<TopicPartition>& partitions) {
  if (buffer.empty() || partitions.empty()) return;
  buffer.drop(
      [&](std::string_view topic, std::int32_t partition) { return contains(partitions, topic, partition); });
}

void KafkaConsumer::Impl::rethrow_callback_error() {
  if (callback_error) std::rethrow_exception(std::exchange(callback_error, nullptr));
}

std::size_t KafkaConsumer::poll(const RecordHandler& handler) {
  if (impl_->closed) throw StateError(ErrorKind::InvalidArgument, "poll on a closed KafkaConsumer");
  constexpr std::size_t kMaxBatch = internal::FetchBuffer::kMaxBatch;  // one batch of the fetch path
  // Outside run(), a stop() ends only the poll() it interrupted.
  if (!impl_->running) impl_->stop_requested = false;
  std::size_t handled = 0;
  impl_->last_handle.reset();
  int timeout_ms = internal::to_timeout_ms(impl_->options.poll_timeout);
  while (handled < kMaxBatch && !impl_->stop_requested.load(std::memory_order_relaxed)) {
    bool arrived = false;
    RdPtr<rd_kafka_message_t> message = impl_->next_record(timeout_ms, arrived);
    if (!arrived) break;
    timeout_ms = 0;  // drain what is already fetched, then return
    if (!message) continue;
    ConsumedRecord record;
    record.topic = rd_kafka_topic_name(message->rkt);
    record.partition = message->partition;
    record.offset = message->offset;
    record.timestamp_ms = rd_kafka_message_timestamp(message.get(), nullptr);
    record.key = std::string_view(static_cast<const char*>(message->key), message->key_len);
    record.value = std::string_view(static_cast<const char*>(message->payload), message->len);
    try {
      handler(record);
    } catch (...) {
      impl_->count_records(handled);
      throw;
    }
    ++handled;
    PartitionHandle& partition = impl_->handle_for(*message, record.topic);
    impl_->automatic_commit([&] { partition.update(record.offset + 1); });
    impl_->take_requested_checkpoint();
  }
  impl_->finish_poll(handled);
  return handled;
}

RdPtr<rd_kafka_message_t> KafkaConsumer::Impl::next_record(int timeout_ms, bool& arrived) {
  // A batch handed out slower than its rate foresaw: librdkafka's callbacks (a rebalance) are
  // served now, not once the batch is handed out.
  if (!buffer.empty() && buffer.due()) fill_buffer(0);
  if (buffer.empty()) {
    // What is queued first; then, with nothing queued, a wait.
    fill_buffer(0);
    if (buffer.empty() && timeout_ms > 0) fill_buffer(timeout_ms);
  }
  RdPtr<rd_kafka_message_t> message = buffer.pop();
  arrived = message != nullptr;
  // Nothing arrives from a cluster that refuses this client (a wrong password, an untrusted
  // certificate): librdkafka retries for ever, and only the user can fix it.
  if (!message) internal::throw_if_refused(rk());
  if (message && message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    on_consume_error(*message);
    message.reset();
  }
  return message;
}

void KafkaConsumer::Impl::finish_poll(std::size_t handled) {
  if (!unvalidated.empty()) [[unlikely]]
    validate_starts();
  count_records(handled);
  record_fetched_high_watermarks();
  refresh_high_watermarks();
  automatic_commit([&] { manager.poll(); });
}

template <class Call>
void KafkaConsumer::Impl::automatic_commit(Call&& call) {
  try {
    call();
  } catch (const StateError& error) {
    // A commit the strategy triggered failed: e.g. ILLEGAL_GENERATION while a rebalance is under
    // way. The offsets stay pending and the next trigger retries them; the consumer goes on.
    // An update the manager refuses is a bug in the caller and is not swallowed.
    if (error.kind() == ErrorKind::InvalidArgument) throw;
    processor::detail::MutexLock lock(stats_mutex);
    ++stats.failed_automatic_commits;
    if (stats.failed_automatic_commits <= 10 || stats.failed_automatic_commits % 1000 == 0) {
      processor::internal::log(LogLevel::Warning, "consumer", "automatic commit failed (",
                               stats.failed_automatic_commits,
                               " so far), offsets stay pending: ", error.what());
    }
  }
}

void KafkaConsumer::run(const RecordHandler& handler) {
  impl_->running = true;
  try {
    while (!impl_->stop_requested.load(std::memory_order_relaxed)) poll(handler);
  } catch (...) {
    impl_->running = false;
    throw;
  }
  impl_->running = false;
  impl_->stop_requested = false;
}

void KafkaConsumer::stop() noexcept { impl_->stop_requested = true; }

void KafkaConsumer::request_checkpoint() {
  if (!impl_->options.take_checkpoint) {
    throw StateError(ErrorKind::InvalidArgument,
                     "request_checkpoint() needs KafkaConsumerOptions::take_checkpoint, which is not set");
  }
  impl_->checkpoint_requested.store(true, std::memory_order_relaxed);
}

void KafkaConsumer::close() {
  if (impl_->closed) return;
  impl_->closed = true;
  KafkaClient::Impl& client_impl = impl_->client->impl();
  if (client_impl.closed.exchange(true)) return;
  // Fetched records not handed out are not handled: the partitions' next owner reads them.
  impl_->buffer.clear();
  // Revokes every partition through on_rebalance, which commits first.
  const rd_kafka_resp_err_t error = rd_kafka_consumer_close(impl_->rk());
  impl_->rethrow_callback_error();
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(error, "closing the consumer");
}

void KafkaConsumer::rewind_to_committed() {
  const auto assigned = impl_->client->assignment();
  if (assigned.empty()) return;
  auto committed = internal::to_partition_list(assigned);
  const auto timeout = impl_->options.request_timeout;
  internal::read_committed(impl_->rk(), committed.get(), timeout, internal::start_retry_policy(timeout));
  auto positions = internal::to_partition_list(assigned);
  const auto committed_views = impl_->manager.get_all_committed();
  std::vector<Impl::Start> restarts;
  restarts.reserve(assigned.size());
  for (int i = 0; i < positions->cnt; ++i) {
    const TopicPartition tp(positions->elems[i].topic, positions->elems[i].partition);
    if (const Impl::Start* start = impl_->uncommitted_start(tp, committed_views)) {
      // Nothing committed since the partition started: back to its start, with the store's view.
      restarts.push_back(*start);
    } else {
      std::optional<std::int64_t> known = impl_->manager.get_offset(tp.topic, tp.partition);
      if (!known && committed->elems[i].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
          committed->elems[i].offset >= 0) {
        known = committed->elems[i].offset;
      }
      restarts.push_back(impl_->start_position(tp, known));
    }
    positions->elems[i].offset = restarts.back().position;
  }
  impl_->restart_at(positions.get(), restarts, "rewinding");
}

std::vector<TopicPartition> KafkaConsumer::assignment() const { return impl_->client->assignment(); }

ConsumerStats KafkaConsumer::stats() const {
  processor::detail::MutexLock lock(impl_->stats_mutex);
  return impl_->stats;
}

}  // namespace processor::kafka

namespace processor::kafka::internal {

void attach_sink(KafkaConsumer::Impl& consumer, RecordSink* sink) { consumer.sink = sink; }

bool poll_into_sink(KafkaConsumer::Impl& impl, int timeout_ms) {
  if (impl.closed) throw StateError(ErrorKind::InvalidArgument, "poll on a closed KafkaConsumer");
  bool arrived = false;
  RdPtr<rd_kafka_message_t> message = impl.next_record(timeout_ms, arrived);
  if (message) {
    impl.handle_for(*message, rd_kafka_topic_name(message->rkt));
    impl.sink->on_record(std::move(message));
  }
  return arrived;
}

void update_at_partition_end(KafkaConsumer::Impl& consumer, const TopicPartition& tp, std::int64_t end) {
  consumer.automatic_commit([&] { consumer.manager.update_offset(tp.topic, tp.partition, end); });
}

void finish_poll(KafkaConsumer::Impl& consumer, std::size_t records) {
  consumer.finish_poll(records);
  // The next poll notes its first run of records again (see handle_for).
  consumer.last_handle.reset();
}

void take_checkpoint(KafkaConsumer::Impl& consumer) { consumer.take_checkpoint(); }

rd_kafka_t* handle(KafkaConsumer::Impl& consumer) { return consumer.rk(); }

}  // namespace processor::kafka::internal
