#pragma once
// KafkaConsumer's state, shared by its files: kafka_consumer.cpp (construction, the poll loop,
// rewinds and checkpoints) and kafka_consumer_rebalance.cpp (assignments and revocations, and
// where each assigned partition starts). Internal.

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kafka/client/fetch_buffer.hpp"
#include "kafka/client/kafka_client_impl.hpp"
#include "kafka/client/out_of_range_policy.hpp"
#include "kafka/client/record_sink.hpp"
#include "kafka/failure/dead_letter_producer.hpp"
#include "kafka/group/start_offsets.hpp"
#include "kafka/wrap_errors.hpp"
#include "processor/detail/mutex.hpp"
#include "processor/kafka/kafka_consumer.hpp"

namespace processor::kafka {

using internal::RdPtr;

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

  // The failure policy (options.failure): the error every poll() throws after a record failed for
  // good under Fail, and the dead-letter producer of DeadLetter.
  std::exception_ptr failed;
  std::unique_ptr<internal::DeadLetterProducer> dead_letters;
  // Runs the handler on `record` (kafka_consumer_failures.cpp): tries it again and then applies
  // options.failure. Returns normally when the record's offset may be recorded; throws (and sets
  // `failed`) under Fail.
  void handle(const RecordHandler& handler, const ConsumedRecord& record, const rd_kafka_message_t& message);

  void count_records(std::size_t handled) {
    processor::detail::MutexLock lock(stats_mutex);
    stats.records += handled;
  }
  // Runs a call that may trigger a strategy commit; a failed commit is logged and counted.
  template <class Call>
  void automatic_commit(Call&& call);
};

}  // namespace processor::kafka
