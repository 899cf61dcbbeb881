#pragma once
// StreamProcessor's state, shared by its files, one concern each. Internal.
//   stream_processor.cpp           options, setup (permissions, state, clients), the public API
//   stream_processor_tasks.cpp     rebalances and tasks: restore, position, resume, revoke
//   stream_processor_loop.cpp      the poll loop: records to the record function, commits due
//   stream_processor_commit.cpp    transactions (commit, abort) and the producer's replacement
//   stream_processor_standbys.cpp  standby replicas: placement, following their changelogs
//   stream_processor_fencing.cpp   a departed member's blocking transaction; a shared
//                                  transactional.id
//   stream_processor_failures.cpp  records that fail: their tries, then the failure policy

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kafka/client/fetch_buffer.hpp"
#include "kafka/client/out_of_range_policy.hpp"
#include "kafka/group/commit_offsets.hpp"
#include "kafka/group/start_offsets.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "processor/detail/mutex.hpp"
#include "processor/kafka/group_admin.hpp"
#include "processor/state/rocksdb_state_backend.hpp"
#include "processor/streams/stream_processor.hpp"
#include "streams/changelog_restorer.hpp"
#include "streams/store_partition.hpp"

namespace processor::streams {

// One input partition: its store partitions, and where its records stand.
struct Task {
  std::int32_t partition = 0;
  std::vector<std::unique_ptr<internal::StorePartition>> stores;  // in StreamProcessorOptions::stores order
  std::size_t restoring = 0;  // stores whose restoration has not completed
  bool active = false;        // restored, positioned, resumed: its records are processed
  // Where a rewind seeks: the offset after the last committed record, or where processing
  // started (a logical offset until the first record arrives).
  std::int64_t rewind_offset = RD_KAFKA_OFFSET_INVALID;
  // The offset after the last record processed in the open transaction; -1 when none.
  std::int64_t next_offset = -1;
  // The leader epoch of that record (KIP-320), committed with next_offset; -1 when unknown.
  std::int32_t next_leader_epoch = -1;
  // librdkafka stopped fetching it: its position had no place in the log, and under
  // auto.offset.reset=error it refuses a seek then (_STATE) until it is assigned again.
  bool fetch_stopped = false;
  int seek_refusals = 0;  // activate()'s seeks refused so far (_STATE)
};

struct StreamProcessor::Impl final : RecordContext, OutputSink {
  using Clock = std::chrono::steady_clock;

  Impl(StreamProcessorOptions processor_options, RecordFunction record_function)
      : options(std::move(processor_options)), function(std::move(record_function)) {}

  const StreamProcessorOptions options;
  const RecordFunction function;
  std::vector<std::string> changelogs;  // per store
  std::int32_t partitions = 0;          // of the input topic, and of every changelog
  std::string transactional_id;
  // The group member id this state directory's previous incarnation had last (kMemberIdKey): a
  // killed incarnation stays a member, under the same client.id, until its session expires.
  std::string previous_member_id;
  std::string stored_member_id;                    // the one kMemberIdKey holds now
  bool members_named_by_transactional_id = false;  // the consumer's client.id is transactional_id
  kafka::KafkaProperties producer_config;          // kept to replace a producer that failed for good
  int replacements_without_commit = 0;             // producers replaced since the last commit
  // "<input topic>:<partition>", as every message names an input partition.
  std::string input_key(std::int32_t partition) const {
    return kafka::partition_key(options.input_topic, partition);
  }
  bool exactly_once() const noexcept { return options.guarantee == ProcessingGuarantee::ExactlyOnce; }

  // Destroyed in reverse order: the clients before the database their callbacks write to.
  std::unique_ptr<state::RocksDbStateBackend> db;
  kafka::internal::RdPtr<rd_kafka_t> producer;
  kafka::internal::RdPtr<rd_kafka_t> consumer;
  // At-least-once commits given up on unanswered, waited for before the next (commit_offsets.hpp).
  kafka::internal::UnansweredCommits unanswered_commits;
  // The consumer's records, a batch of its queue at a time. What it holds librdkafka counts as
  // consumed: a partition's records there are dropped where it is sought (seek()).
  std::unique_ptr<kafka::internal::FetchBuffer> buffer;
  std::unique_ptr<internal::ChangelogRestorer> restorer;
  std::map<std::int32_t, Task> tasks;
  // The group's description (standby placement) and committed offsets' metadata (fencing).
  std::unique_ptr<kafka::GroupAdmin> admin;
  // Standby replicas: the store partitions of partitions other members own, followed by their own
  // restorer (Follow mode), which is destroyed first.
  std::map<std::int32_t, std::vector<std::unique_ptr<internal::StorePartition>>> standbys;
  std::unique_ptr<internal::ChangelogRestorer> standby_restorer;
  Clock::time_point next_placement;
  // Partitions of this assignment whose departed owner was fenced already (at most once each).
  std::set<std::int32_t> fenced_for;
  Clock::time_point next_fence_look;  // at most two looks at the group per second while blocked

  // The open transaction (under at-least-once: the records since the last commit).
  bool transaction_open = false;
  Clock::time_point transaction_started;
  std::uint64_t transaction_records = 0;
  // Per store, per partition: the offset after the last changelog record the open transaction
  // wrote there, from the delivery reports.
  std::vector<std::vector<std::int64_t>> delivered;
  rd_kafka_resp_err_t delivery_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string delivery_error_topic;  // the topic of the first delivery that failed

  // Set by an abort: every active partition must seek back before another record is processed.
  bool rewind_pending = false;
  // Set when producing into the open transaction failed with an error that an abort clears (the
  // producer is in its abortable-error state: e.g. OUT_OF_ORDER_SEQUENCE_NUMBER, which needs the
  // epoch bump an abort makes): the record function's failure is then the transaction's, and
  // poll() aborts, rewinds and goes on instead of rethrowing.
  bool transaction_failed = false;
  // Records whose try failed (the failure policy), by (partition, offset): tried again when the
  // records before them, processed again after the abort, reach them, or handed to the policy's
  // action after their last try. An entry goes once its record is committed, or its partition.
  struct FailingRecord {
    int attempts = 0;
    std::exception_ptr error;  // the last try's
    bool acted = false;        // skipped or dead-lettered in the open transaction (logged once)
  };
  std::map<std::pair<std::int32_t, std::int64_t>, FailingRecord> failing;
  // The record being processed opened the transaction: a failure of it aborts nothing else, and
  // it is tried again (or handed to the policy) from `retry_message`, without seeking back.
  bool record_alone = false;
  // Commit right after the record being processed: it failed before, or Kafka refused a
  // transaction it was in (isolate_until).
  bool commit_after_record = false;
  // After Kafka refused a transaction of several records for good without saying which record's
  // output it refused: per partition, the offset up to which records run one transaction each,
  // so that the refusal names its record.
  std::map<std::int32_t, std::int64_t> isolate_until;
  kafka::internal::RdPtr<rd_kafka_message_t> retry_message;
  // Records the open transaction skipped or dead-lettered, per partition: counted at its commit.
  std::map<std::int32_t, kafka::FailedRecordCounts> transaction_failed_records;
  std::exception_ptr callback_error;  // from the rebalance callback, rethrown by poll()
  bool rebalance_applied = false;     // on_rebalance() has (un)assigned: no fallback
  std::exception_ptr broken;          // the processor cannot go on (fenced, local write failed)
  std::atomic<bool> stop_requested{false};
  bool closed = false;

  // The record being processed, for RecordContext.
  Task* current = nullptr;
  std::string validated_topic;  // the last output topic checked
  // The output topics of the open transaction: a refusal of the principal names them.
  std::set<std::string, std::less<>> transaction_topics;
  std::set<std::string, std::less<>> written_topics;  // those of the transaction aborted last

  mutable processor::detail::Mutex stats_mutex;
  StreamProcessorStats counters PROCESSOR_GUARDED_BY(stats_mutex);
  template <class Update>
  void count(Update&& update) {
    processor::detail::MutexLock lock(stats_mutex);
    update(counters);
  }

  // RecordContext and OutputSink.
  PartitionStore& store(std::string_view name) override;
  PartitionStore& store(std::size_t index) override { return *current->stores[index]; }
  OutputSink& output() override { return *this; }
  void send(std::string_view topic, std::string_view key, std::string_view value,
            std::int32_t partition) override;

  // stream_processor.cpp
  // Checks the principal's permissions, then open_state_and_clients(); a state directory it
  // created is removed again when opening fails.
  void open();
  void open_state_and_clients();
  kafka::KafkaProperties admin_properties() const;

  // stream_processor_tasks.cpp
  // librdkafka's rebalance callback (opaque: this): on_rebalance(), no exception crossing it.
  static void rebalance_callback(rd_kafka_t* rk, rd_kafka_resp_err_t event,
                                 rd_kafka_topic_partition_list_t* partitions, void* opaque);
  void on_rebalance(rd_kafka_resp_err_t event, rd_kafka_topic_partition_list_t* partitions);
  // The store partitions of `partition`, in StreamProcessorOptions::stores order; a damaged
  // local position means no usable local state (restored from the changelog's start).
  std::vector<std::unique_ptr<internal::StorePartition>> open_stores(std::int32_t partition);
  void add_task(std::int32_t partition);
  void remember_member_id();  // kMemberIdKey := this member's group member id
  void remove_task(std::int32_t partition);
  // Positions a restored partition at its committed offset and resumes it; false when
  // librdkafka cannot seek it yet (still stopping from a revoke just before): tried again on the
  // next poll.
  bool activate(Task& task);
  // Activates the restored partitions; true when one must wait for the next poll.
  bool activate_restored();
  void restore_some();
  // Where a partition goes on, decided against its log.
  struct PositionDecision {
    kafka::internal::StartDecision decision;
    std::optional<std::int64_t> from;  // the position decided on, or where the log diverged
    kafka::internal::LogRange range;
    bool moves() const noexcept { return decision.cause != kafka::internal::OutOfRangeCause::InRange; }
  };
  // From `position` (nullopt: none committed), or from where its log diverged (`divergence`, a
  // truncation librdkafka found): the position when it lies in the log, else where
  // options.out_of_range says. Throws for the policy's Error, naming the partition, the cause and
  // the log.
  PositionDecision decide_position(std::int32_t partition, std::optional<std::int64_t> position,
                                   std::optional<std::int64_t> divergence);
  // Logs and counts a move, once made.
  void count_move(std::int32_t partition, const PositionDecision& decided);
  // Seeks `partition` to `offset`; one whose fetcher librdkafka stopped (Task::fetch_stopped) is
  // assigned again at it instead, the inactive tasks' partitions paused again.
  void seek(std::int32_t partition, std::int64_t offset);
  void pause_inactive();
  void rewind();

  // stream_processor_loop.cpp
  // The next record or consumer error from `buffer`, filled from librdkafka's queue when empty
  // (or due, see FetchBuffer); null when nothing arrives within `timeout_ms`.
  kafka::internal::RdPtr<rd_kafka_message_t> next_message(int timeout_ms);
  void process(const rd_kafka_message_t& message);
  // The consumer's error events, by the policy every consumer follows (kafka/group/consume_errors);
  // a partition whose log moved under it goes on where decide_position() says.
  void on_consume_error(const rd_kafka_message_t& message);
  std::size_t poll();
  // Before processing, when a replaced producer could not start yet: tries again. False while the
  // coordinator still cannot answer (the consumer's rebalances are served meanwhile).
  bool start_producer_again();

  // stream_processor_failures.cpp
  // After a try of `message` failed with `error` (the record function threw, or Kafka refused its
  // output for good): aborts and rewinds, and waits the retry's backoff. A transaction that failed
  // for a cause that is not the record's (an abortable producer error) is aborted and its records
  // processed again, without counting a try.
  void fail_record(kafka::internal::RdPtr<rd_kafka_message_t>& message, std::exception_ptr error);
  // A record that failed before, or one of a transaction Kafka refused, runs in a transaction of
  // its own (commit_after_record): the open transaction's records commit first. When it has no
  // try left, applies the failure policy's action (Fail: throws and breaks the processor).
  // Returns true when the record is done here (or comes again after an aborted commit).
  bool start_alone(const rd_kafka_message_t& message, Task& task);
  // What a transaction Kafka refused held, taken before its abort.
  struct RefusedTransaction {
    std::optional<StateError> refusal;  // the record's failure; none when the cause is not one
    std::vector<std::pair<std::int32_t, std::int64_t>> ends;  // (partition, offset after its last record)
    std::uint64_t records = 0;
  };
  RefusedTransaction refused_transaction(const std::exception_ptr& failure);
  // After the abort: a transaction of one record makes that record's try fail; one of several
  // makes its records run one transaction each (isolate_until) until the refusal names its record.
  // Throws (and breaks the processor) when the record refused was a dead letter.
  void find_refused_record(const RefusedTransaction& refused);
  // After a commit: the failed records it committed are done.
  void forget_committed_failures();

  // stream_processor_standbys.cpp
  // Standby replicas: places them from the group's description when due, and follows the
  // changelogs of those held here.
  void maintain_standbys();
  void place_standbys();
  void drop_standby(std::int32_t partition);

  // stream_processor_fencing.cpp
  // Ends the transaction that blocks the restoration of `partition`: fences the transactional.id
  // that last committed its offset (a departed member's), which aborts it. Logs and returns when
  // that is not possible (no such id, ours, not of this application, the request failed).
  void fence_departed_owner(std::int32_t partition);
  // The host of another group member whose client.id is this transactional.id, if the group's
  // description says so.
  std::optional<std::string> member_sharing_transactional_id() const;
  // The group's description; nullopt (logged at debug, naming `purpose`) when describing it
  // failed: the callers look again later.
  std::optional<kafka::GroupDescription> describe_group(std::string_view purpose) const;

  // stream_processor_commit.cpp
  void begin();
  bool commit_due(Clock::time_point now) const noexcept;
  // Commits the open transaction; false when it had to be aborted. Throws when the processor
  // cannot go on (see `broken`).
  bool commit();
  // Aborts the open transaction; `rewind` false when it held nothing but the record that failed
  // (record_alone), which is then tried again or handed to the policy without seeking back.
  void abort(const std::string& reason, bool rewind = true);
  // After an abort: throws (and keeps the processor broken) when Kafka refused the transaction for
  // a missing ACL, naming the topics of the aborted transaction the principal may not write.
  void throw_if_unauthorized(const StateError& failure);
  // The local side of an abort: the stores drop the open transaction's writes, and every active
  // partition must rewind before another record is processed (unless `rewind` is false).
  void drop_open_transaction(bool rewind = true);
  // Whether `producer` has failed for good (fenced, or an error only a new producer clears).
  bool producer_failed_for_good() const;
  // Creates `producer` from producer_config and, exactly-once, initialises its transactions
  // (which fences an older producer of the same transactional.id and aborts its transaction).
  void start_producer();
  // start_producer() in two steps: the client, then (exactly-once) its transactions' start.
  void create_producer();
  void init_producer();
  // start_producer(), or, when the coordinator cannot answer in time, no producer (null): false,
  // and poll() tries again. Throws StateError for any other failure.
  bool start_producer_or_wait();
  // After `failure` of a commit or an abort, when a new producer can go on (an abort that failed,
  // or a fatal error other than a refusal a new producer would meet too: see
  // new_producer_fails_too()): replaces the producer under the same transactional.id, drops the
  // open transaction's local state and asks for a rewind: true. False (nothing changed)
  // otherwise. Throws StateError when another member runs under this transactional.id, or after
  // 5 replacements without a commit in between.
  bool replace_producer(const StateError& failure);
  // replace_producer(), else the processor is broken: throws.
  void replace_producer_or_break(const StateError& failure);
  void produce(const std::string& topic, std::int32_t partition, std::string_view key, const char* value,
               std::size_t value_size, void* opaque);
  static void on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque);
};

}  // namespace processor::streams
