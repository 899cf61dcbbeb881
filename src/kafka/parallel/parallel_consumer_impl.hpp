#pragma once
// ParallelConsumer's internals, shared by parallel_consumer.cpp (the polling thread),
// parallel_rebalance.cpp (assignments and revocations) and parallel_workers.cpp (the handlers).
//
// Threads: the polling thread owns `runs`, the batch being built, pausing and everything the
// KafkaConsumer does; workers (own threads or the executor's) run handlers and finish records.
// Lock order: WorkQueue's mutex, then errors_mutex; neither is held while calling out (handler,
// executor, manager, librdkafka).

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kafka/client/record_sink.hpp"
#include "kafka/failure/dead_letter_producer.hpp"
#include "kafka/parallel/work_queue.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "processor/detail/mutex.hpp"
#include "processor/kafka/parallel_consumer.hpp"

namespace processor::kafka {

// One tenure of a partition at this member: from its assignment to its revocation. A partition
// that comes back gets a new one, so nothing of the old tenure (lanes, late acks) mixes in.
struct PartitionRun : std::enable_shared_from_this<PartitionRun> {
  TopicPartition partition;
  std::uint64_t serial = 0;
  std::int64_t start = 0;  // where the tenure began: its first record, or the partition's end
  // Records below it were processed here in this member's previous tenure: skipped.
  std::int64_t skip_below = 0;
  // Records the previous owner acknowledged above the start: skipped.
  std::optional<AckedSet> restored;
  // Records that tracking refused (PartitionAcksOptions limits), in offset order, with every
  // later record of the partition that arrived meanwhile: the partition is paused until they fit.
  std::deque<internal::RdPtr<rd_kafka_message_t>> held;
  bool paused = false;  // by back-pressure: its own (held non-empty) or the buffer's
  // The log end reached while records were still queued: recorded once they are done.
  std::optional<std::int64_t> pending_end;
  // Records submitted and not finished nor dropped. Written by workers, read by the poller.
  std::atomic<std::size_t> queued{0};
  // Set when its revocation (or loss) starts: from then on no record of it is retried.
  std::atomic<bool> revoking{false};
  // Set when the revoke's drain ended (at once for a loss): a record finishing from then on is
  // abandoned, and its acknowledgement is not given, so the revoke's commit never holds it.
  std::atomic<bool> drained{false};
  // Records queued when tracking refused the first held record: held records are offered again
  // once half of them finished, so that a full partition is not paused and resumed (and its
  // prefetched data dropped and fetched again by librdkafka) for every record.
  std::size_t queued_when_held = 0;
};

// A fetched record on its way through the WorkQueue. It holds a copy of the key and value, not
// librdkafka's message: a message pins its whole fetch response (up to max.partition.fetch.bytes),
// so keeping messages would make memory depend on librdkafka's buffers instead of
// max_buffered_bytes.
struct RecordWork : internal::QueuedWork {
  RecordWork(const rd_kafka_message_t& message, AckTicket record_ticket,
             std::shared_ptr<PartitionRun> tenure);
  // Makes a finished record (a spare of the WorkQueue) this one, keeping its buffer.
  void reuse(const rd_kafka_message_t& message, AckTicket record_ticket,
             std::shared_ptr<PartitionRun> tenure);

  // The record as the handler sees it (views into this object and its run).
  ConsumedRecord record() const;
  // Records of a partition being revoked are not retried: the next owner processes them.
  bool abandoned() const noexcept override { return run->revoking.load(std::memory_order_acquire); }

  std::string key_and_value;
  std::size_t key_size = 0;
  std::int64_t offset = 0;
  std::int64_t timestamp_ms = -1;
  std::optional<AckTicket> ticket;    // released once settled
  std::shared_ptr<PartitionRun> run;  // released once settled
};

struct ParallelConsumer::Impl final : internal::RecordSink {
  using Clock = std::chrono::steady_clock;

  Impl(OffsetManager& offset_manager, ParallelConsumerOptions consumer_options, RecordHandler record_handler);
  ~Impl() override;

  // ---- RecordSink (parallel_consumer.cpp, parallel_rebalance.cpp) ----
  void on_record(internal::RdPtr<rd_kafka_message_t> message) override;
  void on_partition_end(const TopicPartition& partition, std::int64_t end_offset) override;
  void on_assigned(const std::vector<internal::AssignedStart>& partitions) override;
  void on_revoking(const std::vector<TopicPartition>& partitions, bool lost) override;
  void on_revoked(const std::vector<TopicPartition>& partitions) override;

  // ---- this member's own acknowledgements across a loss (parallel_rebalance.cpp) ----
  // What a tenure left acknowledged: every offset from `start` below acked.committable, and
  // acked.acked above it.
  struct LeftAcks {
    std::int64_t start = 0;
    AckedSet acked;
  };
  // Whether an acknowledged record is done for good: offsets commit automatically, and no
  // checkpoint (a transaction) holds the records' results.
  bool acks_are_final() const;
  // Keeps what the leaving runs acknowledged (acks_are_final() only).
  void remember_acks(const std::vector<PartitionRun*>& leaving);
  // What this member acknowledged in its last tenure of `tp`, when a tenure starting at
  // `position` may skip it: `position` lies between that tenure's start and the offset it could
  // commit (no one else committed past it since) and something is left to skip. Forgets it
  // either way.
  std::optional<LeftAcks> take_own_acks(const TopicPartition& tp, std::int64_t position);
  // Resumes `run` after its previous tenure here (`left`): skips the records below the offset
  // that tenure could commit, records that offset as the position, and returns the
  // acknowledgements above it. nullopt when there are none, or when the position is refused.
  std::optional<AckedSet> resume_own_tenure(PartitionRun& run, LeftAcks left);

  // ---- polling thread (parallel_consumer.cpp) ----
  PartitionRun* run_for(const rd_kafka_message_t& message);
  // Tracks and queues the record, or holds it (and pauses its partition) when tracking refuses.
  // Returns false when it was held.
  bool dispatch(PartitionRun& run, internal::RdPtr<rd_kafka_message_t>& message);
  void submit_batch();
  // Dispatches held records that fit now and resumes their partitions; applies the buffer's
  // back-pressure.
  void relieve_back_pressure();
  void pause(PartitionRun& run);
  void set_paused(const std::vector<PartitionRun*>& runs, bool paused);
  // Records the log ends of partitions whose records are all done.
  void record_partition_ends();
  bool any_paused() const;
  // Stops dispatch, waits for running handlers, runs take_checkpoint.
  void checkpoint_at_barrier();
  // Throws the error a worker or the executor left for the poller, if any.
  void rethrow_pending_error();
  std::uint64_t lane_of(const PartitionRun& run, const rd_kafka_message_t& message) const;

  // ---- workers (parallel_workers.cpp) ----
  void start_workers();
  void stop_workers();
  void worker_loop();
  // Executor mode: submits what may run, up to max_concurrency.
  void pump_executor();
  // What became of a record after one run of the handler.
  enum class Outcome {
    Done,       // processed, or accepted by on_failure: acknowledge it, then finish it
    Retrying,   // queued again for a later try
    Abandoned,  // failed while its partition is being revoked: finish it unacknowledged
  };
  // Runs the handler once; retries the record, or dead-letters it (on_failure). Times the run
  // (run_nanos).
  Outcome run_record(RecordWork& work);
  // Whether handlers run quicker than handing a record to another thread costs: then a batch runs
  // in series on one worker (WorkQueue's quiet), with one wake-up per batch.
  bool runs_are_quick() const noexcept { return run_nanos.load(std::memory_order_relaxed) < quick_run_nanos; }
  // A record whose run ended (not Retrying): acknowledged if Done (unless its partition left),
  // then no longer counted by its partition. The queue's finish() comes next.
  void settle(RecordWork& work, Outcome outcome);
  // settle(), then the queue's finish().
  void finish(RecordWork& work, Outcome outcome);
  void fail(std::exception_ptr error);
  // After the last try of a record, without on_failure: the policy's skip or dead-letter
  // (options.consumer.failure). False when the dead letter could not be written (logged): the
  // record is tried again later.
  bool pass_over(const ConsumedRecord& record, const std::exception_ptr& error, int attempts);

  // The manager of a one-call start (connect()), first so that it goes last.
  std::unique_ptr<OffsetManager> owned_manager;
  OffsetManager& manager;
  const ParallelConsumerOptions options;
  const RecordHandler handler;
  std::unique_ptr<KafkaConsumer> consumer;
  std::unique_ptr<internal::DeadLetterProducer> dead_letters;  // FailureAction::DeadLetter
  internal::ConsumerImpl* consumer_impl = nullptr;
  rd_kafka_t* rk = nullptr;
  internal::WorkQueue queue;
  std::vector<std::thread> workers;
  // The handler's run time, averaged over the last runs (each weighs 1/8), and the most that
  // counts as quick on this machine.
  std::atomic<std::int64_t> run_nanos{0};
  const std::int64_t quick_run_nanos;

  // Polling thread only.
  std::unordered_map<TopicPartition, std::shared_ptr<PartitionRun>> runs;
  std::unordered_map<TopicPartition, LeftAcks> left_acks;  // of partitions that left this member
  const rd_kafka_topic_t* last_topic = nullptr;
  std::int32_t last_partition = -1;
  PartitionRun* last_run = nullptr;
  std::vector<internal::WorkQueue::Item> batch;
  std::size_t batch_bytes = 0;  // of the records in `batch`, which the queue does not count yet
  std::vector<internal::WorkQueue::Item> spares;  // finished RecordWork, to reuse
  std::uint64_t next_serial = 1;
  std::uint64_t fetched = 0;  // records that reached on_record
  bool buffer_paused = false;
  bool revoke_barrier = false;  // raised by on_revoking for the checkpoint, lowered by on_revoked
  bool closed = false;

  std::atomic<bool> stop_requested{false};
  std::atomic<bool> checkpoint_requested{false};

  // Counters (relaxed: read only for stats()).
  std::atomic<std::uint64_t> processed{0};
  std::atomic<std::uint64_t> failed_attempts{0};
  std::atomic<std::uint64_t> dead_lettered{0};
  std::atomic<std::uint64_t> skipped_after_restart{0};
  std::atomic<std::uint64_t> abandoned_on_revoke{0};
  std::atomic<std::uint64_t> late_acks_ignored{0};
  std::atomic<std::uint64_t> partition_pauses{0};
  std::atomic<std::uint64_t> executor_rejections{0};
  std::atomic<std::uint64_t> metadata_warnings{0};

  // The first error of a handler (without on_failure) or the executor since the last poll.
  mutable processor::detail::Mutex errors_mutex;
  std::exception_ptr pending_error PROCESSOR_GUARDED_BY(errors_mutex);
  // Records skipped or dead-lettered by the failure policy, per partition.
  std::map<TopicPartition, FailedRecordCounts> failed_records PROCESSOR_GUARDED_BY(errors_mutex);
};

}  // namespace processor::kafka
