#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "processor/kafka/consumer_setup.hpp"
#include "processor/kafka/failure_policy.hpp"
#include "processor/kafka/kafka_client.hpp"
#include "processor/kafka/offset_manager.hpp"

namespace processor::kafka {

// What to do with a partition whose starting position is missing or outside the log.
enum class OutOfRangeAction {
  Earliest,  // start at the log start offset (for a truncated log: where it diverged)
  Latest,    // start at the log end (high watermark, or last stable offset)
  Error,     // throw StateError(Kafka, RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET) from poll
};

// One action per cause, because the causes mean different things: a new group, data lost to
// retention, or a log truncated under the consumer.
struct OutOfRangePolicy {
  // No committed offset anywhere. Default: Earliest (a new group reads everything).
  OutOfRangeAction no_offset = OutOfRangeAction::Earliest;
  // The position is below the log start: retention deleted records before they were processed.
  // Default: Earliest (process what is left; the skipped records are counted).
  OutOfRangeAction below_log_start = OutOfRangeAction::Earliest;
  // The position is above the log end: the log was truncated (unclean leader election), and the
  // position carries no leader epoch that says where. Default: Latest.
  OutOfRangeAction above_log_end = OutOfRangeAction::Latest;
  // The log was truncated below the position after the records before it were read, and other
  // records took their offsets (an unclean leader election): detected through the leader epoch
  // that the stored or committed position carries (KIP-320), also when the log has since grown
  // past the position. Earliest resumes where the log diverged, so that the records that took
  // the truncated offsets are processed, as Kafka's Java consumer does; Latest skips to the log
  // end. Default: Earliest.
  OutOfRangeAction truncated = OutOfRangeAction::Earliest;
};

// A consumed record, valid only during the handler call.
struct ConsumedRecord {
  std::string_view topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;         // the record's own offset; its committed offset is offset + 1
  std::int64_t timestamp_ms = -1;  // -1 when the record has none
  std::string_view key;
  std::string_view value;
};

// Counters of a KafkaConsumer.
struct ConsumerStats {
  std::uint64_t records = 0;                   // records handed to the handler
  std::uint64_t assignments = 0;               // partitions assigned, summed over rebalances
  std::uint64_t revocations = 0;               // partitions revoked (committed first)
  std::uint64_t lost = 0;                      // partitions lost (dropped without a commit)
  std::uint64_t failed_revoke_commits = 0;     // revocations whose final commit failed (logged)
  std::uint64_t failed_automatic_commits = 0;  // strategy commits from the loop that failed
                                               // (logged; the offsets stay pending)
  std::uint64_t out_of_range_resets = 0;       // positions moved by the OutOfRangePolicy
  // out_of_range_resets by cause, the four fields of OutOfRangePolicy (they sum to it):
  std::uint64_t no_offset_resets = 0;        // nothing committed or checkpointed
  std::uint64_t below_log_start_resets = 0;  // retention or truncation removed the position
  std::uint64_t above_log_end_resets = 0;    // the log was truncated below the position
  std::uint64_t truncated_resets = 0;        // ... and the position's leader epoch told where
  std::uint64_t records_skipped = 0;         // records jumped over by those moves
  std::uint64_t checkpoints = 0;             // take_checkpoint calls: requested, or before a revoke
  std::uint64_t failed_attempts = 0;         // handler calls that threw (KafkaConsumerOptions::failure)
  // Per partition, records the failure policy skipped or dead-lettered (their offsets recorded).
  std::map<TopicPartition, FailedRecordCounts> failed_records;
};

// Options of a KafkaConsumer.
struct KafkaConsumerOptions {
  std::vector<std::string> topics;
  OutOfRangePolicy out_of_range;
  // A record whose handler throws is handled again in place, `failure.retry.max_attempts` times
  // in all with back-off (the poll waits meanwhile), then:
  // - Fail: poll() throws StateError naming topic:partition@offset, the tries and the cause (the
  //   handler's exception through std::rethrow_if_nested), and so does every later poll(); the
  //   record's offset is never recorded, so no commit passes it. Close and fix, or reset.
  // - Skip: logged once, counted (stats().failed_records), its offset recorded as if handled.
  // - DeadLetter: its key, value and headers are written to failure.dead_letter_topic with the
  //   kDeadLetter* headers by a producer of the client's connection settings (idempotent,
  //   acks=all), and its offset is recorded only once Kafka acknowledged that dead letter. A
  //   dead letter Kafka refuses is handled as Fail.
  // ParallelConsumer applies it on its workers (see ParallelConsumerOptions::on_failure).
  // Default: 3 tries, then Fail.
  FailurePolicy failure;
  // The longest one poll() waits for a record. Default: 100 ms.
  std::chrono::milliseconds poll_timeout{100};
  // How often the high watermarks of assigned partitions are refreshed into the manager, for
  // lag. Default: 1 s.
  std::chrono::milliseconds high_watermark_refresh{1'000};
  // How long one request the consumer makes on its own may take: the committed offsets and log
  // ranges read when partitions are assigned or rewound, and seeks. Default: 10 s. Raise it for
  // a slow or distant cluster; lower it to fail an assignment sooner.
  std::chrono::milliseconds request_timeout{10'000};
  // Commit pending offsets when partitions are revoked. Default: true. Set it to false when
  // offsets are committed inside a producer's transaction (TransactionalProducer): the pending
  // offsets of revoked partitions then belong to the open transaction, which on_revoked should
  // abort, and are dropped. Under OffsetCommitStrategy::on_checkpoint() a revoke never commits,
  // whatever this says: offsets reach the store only with a completed checkpoint (take_checkpoint).
  bool commit_on_revoke = true;
  // The first source of a partition's starting position, before the offset store and the
  // broker: e.g. a checkpoint in the state backend. Default: none.
  std::function<std::optional<std::int64_t>(const TopicPartition&)> checkpoint_position;
  // Takes a checkpoint at a record boundary, on the polling thread: snapshot your state, call
  // OffsetManager::checkpoint() with it and, once it is durable, notify_checkpoint_complete().
  // Called (1) after the handler that called request_checkpoint() returned and its record's
  // offset was recorded (or after an on_partition_end that called it), and (2) before partitions
  // are revoked (not lost), while this member still owns them: the rebalance-aware checkpoint,
  // so that the state and the offsets that match it leave together. Under on_checkpoint() set
  // it, or roll your state back to the last completed checkpoint in on_revoked: a partition that
  // comes back resumes at that checkpoint. An exception from it propagates from poll().
  // Default: none.
  std::function<void()> take_checkpoint;
  // Called when a partition is drained: every record up to `end_offset` (the log end, or the
  // last stable offset under read_committed) was handled and the position recorded. It is
  // called again each time the partition is drained anew. Default: none.
  std::function<void(const TopicPartition&, std::int64_t end_offset)> on_partition_end;
  // Called after partitions are assigned (positions set) and before they are revoked
  // (after take_checkpoint, before the commit) or after they are lost. Default: none.
  std::function<void(const std::vector<TopicPartition>&)> on_assigned;
  std::function<void(const std::vector<TopicPartition>&)> on_revoked;
  std::function<void(const std::vector<TopicPartition>&)> on_lost;
};

// KafkaConsumer owns the consume loop of one group member: it subscribes the KafkaClient, polls
// records into a handler, records each handled record's offset in the OffsetManager, and drives
// the manager's commit strategy (OffsetManager::poll()) on every loop, so a periodic strategy
// commits trailing offsets within one interval after traffic stops.
//
// Rebalances, eager (range, roundrobin) and cooperative (cooperative-sticky), set by the
// client's partition.assignment.strategy:
// - assigned: each partition starts at, in order of precedence, the checkpoint position, the
//   OffsetManager's store, the broker's committed offset, then the OutOfRangePolicy; the
//   position is checked against the log and moved by the policy when outside it. The manager's
//   committed view is what its store holds (OffsetManager::adopt_start_position()): a start
//   that nobody committed is pending, and the next commit writes it.
// - revoked: take_checkpoint runs, then pending offsets are committed synchronously before the
//   partitions go (not under on_checkpoint(): there the checkpoint carries them). If that
//   commit fails (e.g. the coordinator already started the next generation) it is logged and
//   counted: the next owner resumes from the last commit, so records are repeated, never lost.
// - lost: the partitions are dropped without a commit.
//
// Records come from librdkafka in batches (rd_kafka_consume_batch_queue: its per-call costs are
// paid once per batch, not per record) and are handed to the handler one by one, in order. A
// batch is sized to what the handler gets through in about half a second (at most 500 records),
// and while its records are handled librdkafka hears from the consumer at least every second
// and every 4 records, as if it polled per record (max.poll.interval.ms). Records of a batch that
// a poll() did not reach (a stop(), an exception) are the next poll()'s first; those of a
// partition revoked or sought meanwhile are dropped, never handled: the partition's next reader
// fetches them again.
//
// After each poll the manager holds, for every partition records came from, the high watermark
// of the fetch that brought them, so lag read right after consuming is current.
//
// The committed position steps over transaction markers and compaction gaps: at the end of a
// partition the position is the broker's end offset, so a drained partition shows lag 0.
//
// Not safe for concurrent use: one thread runs poll()/run(); stop() may be called from any
// thread. Neither copyable nor movable.
class KafkaConsumer {
 public:
  using RecordHandler = std::function<void(const ConsumedRecord&)>;

  // Subscribes `client` to options.topics. The manager must belong to the client's group.
  // Throws StateError(InvalidArgument) for no topics, an invalid topic or a group mismatch.
  KafkaConsumer(std::shared_ptr<KafkaClient> client, OffsetManager& manager, KafkaConsumerOptions options);
  // The one-call start: the client, offset store, broker metadata and OffsetManager that
  // `setup` describes, owned by the consumer; setup.topics replace options.topics. Throws
  // StateError(InvalidArgument) naming a missing or refused value, and the constructor's errors.
  static std::unique_ptr<KafkaConsumer> connect(ConsumerSetup setup, KafkaConsumerOptions options = {});
  // Closes (see close()) and logs, never throws.
  ~KafkaConsumer();

  KafkaConsumer(const KafkaConsumer&) = delete;
  KafkaConsumer& operator=(const KafkaConsumer&) = delete;

  // Polls once: serves rebalances, hands at most 500 records to `handler` (recording
  // offset + 1 after each returns), refreshes high watermarks when due and calls
  // OffsetManager::poll(). Returns how many records were handled. A handler that throws is
  // answered by options.failure (Fail: this throws, and so does every later poll()). A commit that the strategy triggers and
  // that fails (a rebalance under way, a coordinator moving) does not stop the loop: it is
  // logged and counted in stats().failed_automatic_commits, and its offsets stay pending.
  // Fatal client errors (a fenced member) and OutOfRangeAction::Error do throw, and so does a
  // broker error that is not retriable and will not heal by itself (e.g. the group refused
  // with GROUP_AUTHORIZATION_FAILED): StateError(Kafka) with its code; the consumer keeps
  // trying to join, and poll() may be called again once the cause is fixed.
  std::size_t poll(const RecordHandler& handler);

  // Polls until stop() is called.
  void run(const RecordHandler& handler);
  // Makes the current poll() return after the record being handled, and run() return.
  // Safe from any thread and from the handler.
  void stop() noexcept;

  // Asks for a checkpoint at the next record boundary: after the record being handled returns
  // and its offset is recorded, poll() calls options.take_checkpoint once. Call it from the
  // handler (or from on_partition_end, or from any thread: then after the next record).
  // Throws StateError(InvalidArgument) when options.take_checkpoint is not set.
  void request_checkpoint();

  // Commits pending offsets, leaves the group (revoking every partition) and stops consuming.
  // Idempotent.
  void close();

  // Moves every assigned partition back to the manager's committed offset (else the broker's,
  // else the OutOfRangePolicy) and drops the pending offsets: after an aborted transaction, the
  // records since the last commit are consumed again. A partition with no commit since it was
  // assigned goes back to where it started (the policy is not asked again: with Latest its
  // answer now would skip the aborted records).
  void rewind_to_committed();

  std::vector<TopicPartition> assignment() const;
  ConsumerStats stats() const;
  // The manager this consumer feeds (commit(), lag(), checkpoints).
  OffsetManager& manager() noexcept;

  // Internal: defined in src/, public so that the library's own code can name it.
  struct Impl;

 private:
  friend class ParallelConsumer;  // runs it in parallel mode, with the records going to its workers
  std::unique_ptr<Impl> impl_;
};

}  // namespace processor::kafka
