#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "processor/kafka/failure_policy.hpp"
#include "processor/kafka/kafka_client.hpp"
#include "processor/kafka/kafka_consumer.hpp"
#include "processor/kafka/topic_partition.hpp"
#include "processor/latency_histogram.hpp"
#include "processor/streams/partition_store.hpp"

namespace processor::streams {

// What a record function gets besides the record: the stores of the record's partition and the
// output. Valid only during the call.
class RecordContext {
 public:
  virtual ~RecordContext() = default;
  // The store named `name` (one of StreamProcessorOptions::stores) of the record's partition.
  // Throws StateError(InvalidArgument) for a name that is not one of them.
  virtual PartitionStore& store(std::string_view name) = 0;
  // The same by position in StreamProcessorOptions::stores: no lookup by name.
  // REQUIRES: index < stores.size().
  virtual PartitionStore& store(std::size_t index) = 0;
  virtual OutputSink& output() = 0;
};

// The per-record function a user writes. An exception from it aborts the open transaction, so
// nothing of it is visible, and the record is tried again or handed to the failure policy
// (StreamProcessorOptions::failure).
using RecordFunction = std::function<void(const kafka::ConsumedRecord& record, RecordContext& context)>;

enum class ProcessingGuarantee {
  // Output, changelog writes and input offsets commit in one Kafka transaction; local state
  // follows the committed transactions only. A crash, a rebalance or a fenced member loses and
  // duplicates nothing, in the output and in the state.
  ExactlyOnce,
  // No transaction: output and changelog are flushed, then the offsets committed. A crash
  // between the two processes records again: their results are duplicated, in the output and
  // in the state restored from the changelog. Faster; for idempotent results only.
  AtLeastOnce,
};

// Progress of restoring one store of one partition from its changelog.
struct RestoreProgress {
  std::string store;
  std::int32_t partition = 0;
  std::int64_t start_offset = 0;  // the changelog offset restoration started from
  std::int64_t position = 0;      // the next changelog offset to read
  std::int64_t end_offset = 0;    // the changelog's end offset, as last seen
  std::uint64_t records = 0;      // changelog records applied so far (tombstones included)
  std::uint64_t bytes = 0;        // their keys and values
  std::chrono::milliseconds elapsed{0};
  double records_per_second = 0;
  bool done = false;  // the last report of this restoration
};

// Counters of a StreamProcessor.
struct StreamProcessorStats {
  std::uint64_t records = 0;             // records processed (including those of aborted transactions)
  std::uint64_t commits = 0;             // transactions (or at-least-once commits) completed
  std::uint64_t aborts = 0;              // transactions aborted; their records are processed again
  std::uint64_t producers_replaced = 0;  // producers replaced under the same transactional.id: fenced,
                                         // failed for good (e.g. a sequence out of step with the
                                         // broker), or an abort that did not end in time
  std::uint64_t changelog_records = 0;   // changelog records written by completed commits
  std::uint64_t restored_records = 0;    // changelog records applied by restorations
  std::uint64_t restorations = 0;        // (store, partition) restorations completed
  std::uint64_t local_state_reused = 0;  // (store, partition) whose local state matched the changelog
  std::uint64_t local_state_wiped = 0;   // (store, partition) whose local state could not be used
  std::uint64_t assignments = 0;         // partitions assigned, summed over rebalances
  std::uint64_t revocations = 0;         // partitions revoked
  std::uint64_t lost = 0;                // partitions lost
  std::uint64_t standby_partitions = 0;  // partitions whose stores this member keeps warm now
  std::uint64_t standby_records = 0;     // changelog records applied to standby copies
  std::uint64_t standbys_promoted = 0;   // partitions assigned here while this member kept them warm
  // transactional.ids of departed members fenced by this one, to end the open transaction that
  // blocked the restoration of a partition they owned
  std::uint64_t departed_fenced = 0;
  std::uint64_t out_of_range_resets = 0;  // positions moved by the out_of_range policy
  std::uint64_t records_skipped = 0;      // records jumped over by those moves
  // Tries of a record that failed (the record function threw, or Kafka refused its output or
  // changelog record for good); each aborted the open transaction.
  std::uint64_t failed_attempts = 0;
  // Per input partition, records the failure policy skipped or dead-lettered (committed).
  std::map<kafka::TopicPartition, kafka::FailedRecordCounts> failed_records;
  // How long each completed (store, partition) restoration took, from its start to its last
  // report (RestoreProgress::elapsed with done set, so at millisecond resolution); its count is
  // restorations.
  LatencyHistogram restore_duration;
};

// Options of a StreamProcessor.
struct StreamProcessorOptions {
  // The application: the consumer group, the prefix of the changelog topics
  // (<application_id>-<store>-changelog) and of the transactional.id. Required.
  std::string application_id;
  // The input topic. Its partition p is a task: the stores' partition p, and changelog
  // partition p of each store. One topic, so that every assignor keeps a task whole. Required.
  std::string input_topic;
  // The state stores, by name; each name must make a valid changelog topic name. Default: none.
  std::vector<std::string> stores;
  // The local state: one RocksDB database, one process at a time. Required.
  std::filesystem::path state_dir;
  // librdkafka properties shared by the processor's clients: its consumer, its producer and its
  // restore consumer (bootstrap.servers is required; security.protocol, sasl.*, ssl.* belong
  // here). Each client takes those that apply to it: a consumer property such as
  // partition.assignment.strategy or session.timeout.ms does not reach the producer (where
  // librdkafka would warn that it ignores it), a producer property such as linger.ms does not
  // reach the consumers. The processor sets group.id, isolation.level=read_committed, the
  // transactional.id and the commit properties itself. Default: none.
  kafka::KafkaProperties properties;
  // Properties of one client, over the shared ones, taken whole. Default: none.
  kafka::KafkaProperties consumer_properties;
  kafka::KafkaProperties producer_properties;
  kafka::KafkaProperties restore_consumer_properties;
  ProcessingGuarantee guarantee = ProcessingGuarantee::ExactlyOnce;
  // Commit the open transaction once it is this old. Default: 100 ms (Kafka Streams' default
  // under exactly-once). Raise it for throughput; lower it for output latency.
  std::chrono::milliseconds commit_interval{100};
  // Also commit once the open transaction holds this many records. Default: 0 (interval only).
  std::uint64_t commit_records = 0;
  // The transaction timeout: how long the coordinator waits before aborting a transaction of a
  // member that died. Until then the changelog and output partitions it wrote stay blocked for
  // read_committed readers, so this bounds failover time. Default: 10 s (as Kafka Streams).
  std::chrono::milliseconds transaction_timeout{10'000};
  // Replication factor of the changelog topics the processor creates. Default: -1 (the broker's
  // default.replication.factor). Set 3 in production on a cluster without that default.
  int changelog_replication_factor = -1;
  // Keeps this member's id across restarts: the transactional.id is
  // <application_id>-<instance_id>, so that a restarted member fences its previous incarnation
  // and aborts that one's open transaction at once. Default: empty, i.e. an id generated once
  // and kept in the state directory.
  std::string instance_id;
  // Standby replicas: how many other members keep a warm copy of each partition's stores, by
  // following its changelogs (read_committed) into their own state directories, so that the
  // member that takes a partition over after a failure replays only the changelog's tail. Each
  // member places them from the group's description (every 2 s and after each rebalance): the
  // standbys of one member's partitions spread over the others. The assignor (librdkafka's, or
  // the broker's under group.protocol=consumer) picks a partition's next owner without knowing
  // where its standbys are: with num_standby_replicas = members - 1 every survivor is warm.
  // Default: 0 (none).
  int num_standby_replicas = 0;
  // Where a partition starts when its position has no place in the log, by cause, as
  // KafkaConsumer's (kafka::OutOfRangePolicy): no committed offset (a new group; default
  // Earliest), below the log start (retention removed its records; Earliest), above the log end
  // (Latest), truncated below it (Earliest). Checked when a task starts, and when the log moves
  // under a running one: its open transaction is then aborted and processed again, that
  // partition from the new start. Error makes poll() throw StateError(Kafka) naming the
  // partition, the cause and the log. Each move is logged and counted (out_of_range_resets).
  kafka::OutOfRangePolicy out_of_range;
  // A record the function cannot process (it throws), or whose output or changelog record Kafka
  // refuses for good (MSG_SIZE_TOO_LARGE, INVALID_RECORD, RECORD_LIST_TOO_LARGE): each try aborts
  // the open transaction, and the records before it are processed again up to it; after the last
  // try, `action` decides:
  // - Fail: the records before it are committed, then poll() throws StateError naming
  //   <input>:<partition>@<offset>, the tries and the cause (Kafka's code; the function's own
  //   exception through std::rethrow_if_nested), and every later poll() throws it again.
  // - Skip: it is committed unprocessed, with the records around it: none of its store writes
  //   and (exactly-once) none of its outputs are visible.
  // - DeadLetter: its key, value and headers go to dead_letter_topic with headers naming its
  //   origin and the cause (kafka::kDeadLetter*), in the transaction that commits its offset.
  // Each skip and dead letter is logged once and counted per partition (failed_records). A store
  // that fails under the function (StateError Storage or Corruption) is the processor's failure,
  // never the record's: the transaction aborts and poll() throws it, whatever the action.
  // Default: 3 tries, then Fail.
  kafka::FailurePolicy failure;
  // Called while stores are restored: at most once per restore_progress_interval per store and
  // partition, and once when each is done (done = true). Also logged. Default: none.
  std::function<void(const RestoreProgress&)> on_restore_progress;
  std::chrono::milliseconds restore_progress_interval{1'000};
  // How long one poll() waits for records. Default: 100 ms.
  std::chrono::milliseconds poll_timeout{100};
  // How long a request the processor makes may take (metadata, committed offsets, transaction
  // calls). Default: 30 s.
  std::chrono::milliseconds request_timeout{30'000};
};

// StreamProcessor runs a per-record function over one input topic with partitioned state stores
// and an output, exactly once when the consumer group scales out, shrinks, or loses members:
//
// - State: each store is split by input partition in a local RocksDB database, and every write
//   is also appended to the store's compacted changelog topic, partition for partition. The
//   changelog topics are created when missing (cleanup.policy=compact, the input's partition
//   count).
// - Commit: one transaction holds the output records, the changelog records (the last write of
//   each key in the transaction) and the input offsets, sent with the consumer's group metadata
//   (exactly-once v2), so a member fenced by a newer group generation commits nothing. Local
//   RocksDB takes a transaction's writes only after Kafka committed it, together with each
//   store partition's changelog position, in one atomic write: the local state is always the
//   changelog up to a known offset, never ahead of it, also after a crash.
// - Assignment: a partition's records are processed only once its stores are restored: the
//   local state is kept and only the changelog after its position replayed (read_committed),
//   or, when the local position cannot be used, wiped and the changelog replayed from the
//   start. Restoration waits for transactions still open on the changelog (e.g. of a member
//   that died) to be decided. It runs in the polling loop, so membership stays alive.
//   When a transaction left open by a departed member blocks a changelog, the processor fences
//   that member's transactional.id (named in the committed offset's metadata of the partition):
//   the coordinator aborts the transaction at once instead of after its timeout, and the
//   departed member can commit nothing after that. At once when the group's description shows
//   that id is no longer a member's (each member's consumer has its transactional.id as
//   client.id unless properties set one); otherwise after it has blocked for 2 s.
// - Revoke: the open transaction commits first; lost partitions abort it. Local state stays on
//   disk as a warm copy for the partition's return.
// - Standby replicas (num_standby_replicas): warm copies of other members' partitions, kept up
//   to date from the changelogs; a failover replays only what they have not read yet.
//
// Not safe for concurrent use: one thread calls poll()/run(); stop() and stats() may be called
// from any thread. Neither copyable nor movable.
class StreamProcessor {
 public:
  // Validates the options, opens the state directory, checks or creates the changelog topics,
  // initialises the transactional producer (fencing an older incarnation of this member) and
  // subscribes. Nothing is created or written when an option is refused.
  // Throws StateError(InvalidArgument) for a missing application id, input topic, state dir or
  // bootstrap.servers, an invalid store name, a duplicate store, or an existing changelog topic
  // whose partition count differs from the input's; StateError(Storage) when the state
  // directory is locked by another process or cannot be opened; StateError(Kafka or Timeout)
  // when the cluster cannot be reached or refuses.
  StreamProcessor(StreamProcessorOptions options, RecordFunction function);
  // Closes (see close()) and logs, never throws.
  ~StreamProcessor();

  StreamProcessor(const StreamProcessor&) = delete;
  StreamProcessor& operator=(const StreamProcessor&) = delete;

  // One turn of the loop: serves rebalances, restores a batch of changelog records when stores
  // are restoring, processes at most one batch of records, and commits when the interval or the
  // record count is reached. Returns how many records were processed. A record that fails its
  // last try under FailureAction::Fail makes this throw, now and at every later call.
  // Throws StateError(Kafka) for a fatal producer error (another process with this
  // transactional.id), StateError(Storage) for a failed local write.
  std::size_t poll();
  // Polls until stop() is called, then commits.
  void run();
  // Makes run() return after the current turn. Safe from any thread and from the function.
  void stop() noexcept;

  // Commits the open transaction now. Returns false when it had to be aborted (the records are
  // processed again).
  bool commit();

  // Commits, leaves the group and closes the state directory. Idempotent.
  void close();

  // Partitions whose records are being processed (restored), and those still restoring.
  // From the polling thread only.
  std::vector<kafka::TopicPartition> active_partitions() const;
  std::vector<kafka::TopicPartition> restoring_partitions() const;
  // Safe from any thread.
  StreamProcessorStats stats() const;
  // The transactional.id this member uses (empty under at-least-once).
  const std::string& transactional_id() const noexcept;

  // Internal: defined in src/, public so that the library's own code can name it.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The changelog topic of `store` in `application_id`: "<application_id>-<store>-changelog".
std::string changelog_topic(std::string_view application_id, std::string_view store);

}  // namespace processor::streams
