#pragma once
// Restores store partitions from their changelog topics, in the processor's polling loop.
// Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kafka/rdkafka/retry.hpp"
#include "processor/kafka/kafka_client.hpp"
#include "processor/log.hpp"
#include "processor/state/write_batch.hpp"
#include "processor/streams/stream_processor.hpp"
#include "streams/changelog_reader.hpp"
#include "streams/store_partition.hpp"

namespace processor::streams::internal {

// ChangelogRestorer brings store partitions up to date with their changelog partitions through
// a ChangelogReader of its own (read_committed, no group, no commits). A store partition is restored
// when its position reached the changelog's high watermark, not only its last stable offset:
// then every transaction that wrote to it before is decided (committed records applied, aborted
// ones skipped). That includes a transaction whose commit was acknowledged but whose markers are
// not written yet (the coordinator writes them after answering), and one left open by a member
// that died, which the coordinator aborts after its transaction timeout.
//
// Each poll() applies what arrived as one bulk load per store partition (sorted table files
// ingested into RocksDB, StorePartition::commit_restored), with the new position in the same
// load: durable at once, and a crash mid-restore resumes from there.
//
// In Follow mode (standby replicas) a store partition is never done: it keeps following its
// changelog, read_committed, and loads what arrived at most once a second (or every
// kRecordsPerWrite records), with its position, so that the member that takes the partition over
// replays only the tail. Nothing is reported to the progress callback.
//
// Not safe for concurrent use: the processor's polling thread owns it.
class ChangelogRestorer {
 public:
  enum class Mode { Restore, Follow };

  struct Counters {
    std::uint64_t records = 0;    // changelog records applied
    std::uint64_t completed = 0;  // store partitions restored
    std::uint64_t reused = 0;     // whose local position was usable (only the tail replayed)
    std::uint64_t wiped = 0;      // whose local state was wiped and restored from the start
  };

  // `properties`: the restore consumer's (bootstrap.servers and the user's properties).
  ChangelogRestorer(const kafka::KafkaProperties& properties,
                    std::function<void(const RestoreProgress&)> on_progress,
                    std::chrono::milliseconds progress_interval, std::chrono::milliseconds request_timeout,
                    Mode mode = Mode::Restore);

  // Starts restoring `store` from partition store.partition() of `changelog`: from its local
  // position when that lies within the changelog, else (no position, or outside the changelog's
  // offsets: a recreated or truncated topic) after wiping the local data, from the start.
  // Returns true when that start is already the changelog's end: then `store` is restored at
  // once (a clean hand-back, a restart) and poll() will not report it. Follow mode: always false.
  // One try to read the changelog's offsets (add() runs inside a rebalance callback): when it
  // fails for a retriable cause (a new topic without leaders yet, a leader moving, a broker
  // down), the start waits, and poll() tries again every half second (then reports the store
  // when it is restored, also when at once).
  bool add(StorePartition& store, const std::string& changelog);
  // Stops restoring every store of `partition` (revoked); what was applied stays, with its
  // position. Follow mode: what was read and not loaded yet is loaded first.
  void remove(std::int32_t partition);
  // Partitions with a store partition that has read everything read_committed may read for at
  // least `at_least` while the high watermark stays above: a transaction on its changelog is
  // still undecided (e.g. left open by a member that died).
  std::vector<std::int32_t> blocked(std::chrono::milliseconds at_least) const;
  bool idle() const noexcept { return entries_.empty() && waiting_.empty(); }

  // Applies the changelog records that arrive within `timeout`; returns the partitions of the
  // store partitions whose restoration completed in this call (one entry per store partition).
  // Throws StateError(Corruption) for a changelog record that is not ours, StateError(Storage)
  // when a local write fails.
  std::vector<std::int32_t> poll(std::chrono::milliseconds timeout);

  const Counters& counters() const noexcept { return counters_; }

 private:
  struct Entry {
    StorePartition* store = nullptr;
    std::string topic;
    std::int64_t start = 0;  // the offset restoration started from
    std::int64_t next = 0;   // the next offset to read (steps over markers at each end of partition)
    std::uint64_t records = 0;
    std::uint64_t bytes = 0;
    std::chrono::steady_clock::time_point started;
    std::chrono::steady_clock::time_point last_report;
    std::size_t batch_records = 0;  // records queued in the store partition, not yet written
    std::int64_t batch_next = -1;   // `next` once they are written
    std::int64_t end = 0;           // the high watermark, as last read
    bool at_end = false;            // read_committed reached its end (the last stable offset)
    std::chrono::steady_clock::time_point next_end_check;  // when the high watermark is asked again
    std::chrono::steady_clock::time_point blocked_since;   // epoch: not blocked
    std::chrono::steady_clock::time_point last_load;       // Follow mode
  };
  // A store whose start waits for its changelog's offsets.
  struct Waiting {
    StorePartition* store = nullptr;
    std::string changelog;
    std::chrono::steady_clock::time_point next_try;
  };
  // One try of the changelog's offsets; nullopt (logged at `level`) when it failed for a
  // retriable cause.
  std::optional<std::pair<std::int64_t, std::int64_t>> try_offsets(const StorePartition& store,
                                                                   const std::string& changelog,
                                                                   LogLevel level);
  // add() once the changelog's offsets [low, high] are known.
  bool start(StorePartition& store, const std::string& changelog, std::int64_t low, std::int64_t high);
  // Tries the waiting starts that are due; adds the partitions of those restored at once.
  void start_waiting(std::vector<std::int32_t>& completed);
  // Loads what `entry` read and has not loaded yet, with its new position.
  void load(Entry& entry);

  // Adds `entries` to the consumer's assignment, at their `next` offsets, or removes them.
  void change_assignment(const std::vector<const Entry*>& entries, bool assign);
  Entry* find(const rd_kafka_message_t& message);
  void restart_from_start(Entry& entry, const char* why);
  void report(const Entry& entry, std::int64_t end, bool done);
  // The log start and high watermark of a changelog partition, whatever its transactions;
  // retried under `policy`.
  std::pair<std::int64_t, std::int64_t> offsets_of(const std::string& topic, std::int32_t partition,
                                                   const kafka::internal::RetryPolicy& policy);
  // At the end of what read_committed may read: reads the high watermark again, one try, and
  // returns false when that try failed for a retriable cause (asked again later).
  bool check_end(Entry& entry, std::chrono::steady_clock::time_point now);

  ChangelogReader reader_;
  std::function<void(const RestoreProgress&)> on_progress_;
  std::chrono::milliseconds progress_interval_;
  std::chrono::milliseconds request_timeout_;
  Mode mode_;
  std::vector<Entry> entries_;
  std::vector<Waiting> waiting_;
  Counters counters_;
};

}  // namespace processor::streams::internal
