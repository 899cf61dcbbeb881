// The consumer process of the kill-loop test (kill_loop_test.cpp): an exactly-once per-key counter.
//
//   kill_loop_worker --bootstrap B --topic T --partitions P --group G --dir DIR
//                    [--interval K] [--record-delay-us U] [--session-timeout-ms S]
//
// It keeps its state — a count per record key, under "count:<key>" — and its checkpoints in one
// RocksDB directory. On start it restores the latest checkpoint (positions) and loads the counts
// (which were written in the same atomic batch, so the two agree), then consumes with
// KafkaConsumer starting every partition at its checkpointed position, counts in memory, and
// every K records (and when it has caught up, and before partitions are revoked or lost) writes
// a checkpoint: the changed counts and every partition's position in ONE RocksDB write. Nothing
// else ever writes the counts. The parent SIGKILLs it at random moments; whatever instant the
// kill lands on, the directory holds a checkpoint whose counts cover exactly the records below
// its positions.
//
// It exits 0 by itself once every partition's checkpointed position equals the partition's
// high watermark (the topic does not grow while it runs).
//
// Output on stdout, one line each, unbuffered (the parent reads them):
//   restored <checkpoint id> <position of p0> <position of p1> ...   (id 0: no checkpoint yet)
//   assigned <n>                                                       (partitions assigned)
//   done <checkpoint id>                                               (all drained; exiting 0)
// Errors go to stderr and exit 1.

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "processor/kafka.hpp"
#include "processor/state.hpp"

namespace {

using namespace processor;
using namespace processor::kafka;

constexpr std::string_view kCountPrefix = "count:";

struct Arguments {
  std::string bootstrap;
  std::string topic;
  int partitions = 0;
  std::string group;
  std::string dir;
  std::int64_t interval = 200;
  std::int64_t record_delay_us = 0;
  int session_timeout_ms = 3000;  // the lowest the mock coordinator tolerates (see kill_loop_test.cpp)
};

Arguments parse(int argc, char** argv) {
  std::map<std::string, std::string> named;
  for (int i = 1; i + 1 < argc; i += 2) named[argv[i]] = argv[i + 1];
  if (argc % 2 != 1) throw std::invalid_argument("arguments come in --name value pairs");
  auto required = [&](const std::string& name) {
    const auto found = named.find(name);
    if (found == named.end()) throw std::invalid_argument("missing " + name);
    return found->second;
  };
  Arguments args;
  args.bootstrap = required("--bootstrap");
  args.topic = required("--topic");
  args.partitions = std::stoi(required("--partitions"));
  args.group = required("--group");
  args.dir = required("--dir");
  if (named.count("--interval")) args.interval = std::stoll(named["--interval"]);
  if (named.count("--record-delay-us")) args.record_delay_us = std::stoll(named["--record-delay-us"]);
  if (named.count("--session-timeout-ms")) args.session_timeout_ms = std::stoi(named["--session-timeout-ms"]);
  if (args.partitions <= 0 || args.interval <= 0)
    throw std::invalid_argument("bad --partitions or --interval");
  return args;
}

// One unbuffered write per line, so that a line is either all there or not at all when the
// parent kills this process.
void say(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return;  // the parent went away: nothing to report to
    done += static_cast<std::size_t>(n);
  }
}

int run(const Arguments& args) {
  auto backend = std::make_shared<state::RocksDbStateBackend>(args.dir);
  auto client = KafkaClient::create({
      {"bootstrap.servers", args.bootstrap},
      {"group.id", args.group},
      // Eager rebalancing: every rebalance revokes everything and assigns everything again.
      {"partition.assignment.strategy", "range"},
      // A killed member stays in the group until its session expires; the next worker's join
      // waits for that. Keep it as short as the mock coordinator allows.
      {"session.timeout.ms", std::to_string(args.session_timeout_ms)},
      {"heartbeat.interval.ms", "100"},
      {"log_level", "3"},
  });
  OffsetManagerOptions manager_options;
  manager_options.broker = std::make_shared<KafkaBrokerMetadata>(client);
  // The offset store is deliberately in memory: after a restart the only resume point is the
  // checkpoint in RocksDB.
  OffsetManager manager(args.group, backend, std::make_shared<InMemoryOffsetStore>(),
                        OffsetCommitStrategy::on_checkpoint(), manager_options);

  // Offsets and counts were written in one batch: restoring the checkpoint and reading the counts
  // gives a consistent pair (nothing writes the counts outside a checkpoint).
  const auto restored = manager.restore_from_checkpoint();
  std::uint64_t next_id = restored ? restored->id + 1 : 1;
  std::map<std::string, std::int64_t, std::less<>> counts;
  for (const auto& [key, value] : backend->scan(kCountPrefix)) {
    counts[key.substr(kCountPrefix.size())] = std::stoll(value);
  }
  {
    std::string line = "restored " + std::to_string(restored ? restored->id : 0);
    for (int p = 0; p < args.partitions; ++p) {
      line += " " + std::to_string(manager.checkpointed_offset(args.topic, p).value_or(0));
    }
    say(line);
  }

  std::set<std::string, std::less<>> dirty;  // keys counted since the last checkpoint
  std::int64_t since_checkpoint = 0;         // records counted since the last checkpoint

  // Called between records only (never inside the record handler: KafkaConsumer records a
  // record's offset after the handler returns), so that positions and counts match.
  auto take_checkpoint = [&] {
    state::WriteBatch batch;
    for (const auto& key : dirty) batch.put(std::string(kCountPrefix) + key, std::to_string(counts[key]));
    const std::uint64_t id = next_id;
    manager.checkpoint(id, batch);
    ++next_id;
    dirty.clear();
    since_checkpoint = 0;
    manager.notify_checkpoint_complete(id);
  };

  KafkaConsumerOptions options;
  options.topics = {args.topic};
  options.poll_timeout = std::chrono::milliseconds(50);
  // Resume exactly at the checkpoint, whatever may have been committed anywhere else.
  options.checkpoint_position = [&](const TopicPartition& tp) {
    return manager.checkpointed_offset(tp.topic, tp.partition);
  };
  options.on_assigned = [&](const std::vector<TopicPartition>& partitions) {
    say("assigned " + std::to_string(partitions.size()));
  };
  // A revoked or lost partition is re-assigned at its checkpointed position: checkpoint first, so
  // that the counts in memory (which include every record handled so far) match that position.
  // This process is the only writer of its state, so the checkpoint is valid in both cases.
  auto checkpoint_before_losing = [&](const std::vector<TopicPartition>&) {
    if (since_checkpoint > 0) take_checkpoint();
  };
  options.on_revoked = checkpoint_before_losing;
  options.on_lost = checkpoint_before_losing;
  KafkaConsumer consumer(client, manager, options);

  std::vector<std::int64_t> log_end(static_cast<std::size_t>(args.partitions));
  for (int p = 0; p < args.partitions; ++p) {
    log_end[static_cast<std::size_t>(p)] =
        manager_options.broker->log_range(TopicPartition(args.topic, p)).high_watermark;
  }
  auto drained = [&] {
    for (int p = 0; p < args.partitions; ++p) {
      if (manager.checkpointed_offset(args.topic, p).value_or(0) != log_end[static_cast<std::size_t>(p)])
        return false;
    }
    return true;
  };

  const auto record_delay = std::chrono::microseconds(args.record_delay_us);
  const KafkaConsumer::RecordHandler handler = [&](const ConsumedRecord& record) {
    if (record_delay.count() > 0) std::this_thread::sleep_for(record_delay);  // "processing"
    const auto [entry, inserted] = counts.try_emplace(std::string(record.key), 0);
    ++entry->second;
    dirty.insert(entry->first);
    // Ends this poll() right after this record's offset is recorded: the loop checkpoints then.
    if (++since_checkpoint >= args.interval) consumer.stop();
  };

  while (!drained()) {
    const std::size_t handled = consumer.poll(handler);
    if (since_checkpoint >= args.interval || (handled == 0 && since_checkpoint > 0)) take_checkpoint();
  }
  say("done " + std::to_string(next_id - 1));
  consumer.close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "kill_loop_worker: %s\n", error.what());
    return 1;
  }
}
