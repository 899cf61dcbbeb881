// The parallel consumer under kills and a scale-up, on the real broker (KAFKA_BOOTSTRAP):
// parallel_worker processes (ParallelConsumer, key order, 32 records at once, handlers sleeping a
// random 0-20 ms and failing 1% of their tries) share a 12-partition topic of records keyed over
// 200 keys, each value the key's sequence number. Two workers start; a third joins after the
// third kill; a random worker is SIGKILLed every few seconds (once it is processing) and started
// again as a new process. When the input is produced, the survivors drain it to the log end.
//
// Afterwards, from the workers' journals (parallel_journal_check.hpp states the order property):
// every produced record was processed at least once, with the key and sequence number produced
// there, and each key's records were tried in offset order within each assignment of each
// process. The exactly-once variant (checkpoints: a transaction per checkpoint, output and
// offsets together) also reads the output topic read_committed: exactly one result per input
// record, so the per-key counts are exact, and per key in offset order.
//
// The metadata spill: record 0/kSlowOffset sleeps 8 s until one process has finished that sleep,
// while the records behind it go on; the acknowledged set above it outgrows the commit metadata
// budget and the manager spills it to its RocksDB state directory, committing a reference. A
// monitor reads the group's committed metadata of partition 0 every 200 ms and must see a
// reference there. The workers lower the budget (OffsetManagerOptions::acks) to 64 bytes: at
// this test's rate an 8 s stall spans ~800 offsets of partition 0, whose acknowledged set then
// grows by ~14 bytes of metadata a second (128 bytes were reached in some runs only), while the
// broker's 4 KiB would take ~25,000 offsets; the spill path is the same at any size.
//
// PARALLEL_KILL_SEED=<n> replays the kill choices (the seed is printed); PARALLEL_KILL_KEEP_LOGS=1
// keeps the journals and logs (kept anyway when a check fails); PARALLEL_KILL_RECORDS and
// PARALLEL_KILL_KILLS change the sizes; PARALLEL_WORKER=<path> runs another worker binary (e.g. one
// linked against a deliberately broken consumer, to see the checks catch it). About 1-2 minutes
// per test.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "broker_kills.hpp"
#include "group_offsets.hpp"
#include "kafka_test_support.hpp"
#include "parallel_journal_check.hpp"
#include "topic_reader.hpp"
#include "worker_process.hpp"

#ifndef PARALLEL_WORKER_PATH
#error "PARALLEL_WORKER_PATH must name the parallel_worker executable"
#endif

namespace processor::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kPartitions = 12;
constexpr int kKeys = 200;
constexpr std::int64_t kSlowOffset = 300;  // of partition 0
constexpr int kSlowMs = 8'000;
constexpr int kMetadataBudget = 64;

struct Scenario {
  std::string mode;  // journal | transactional
  std::string assignment = "cooperative-sticky";
  int records = 36'000;
  std::chrono::milliseconds produce_for{30'000};
  int kills = 8;
  int scale_up_at = 3;  // after this many kills, the third worker joins
  // The classic protocols' session.timeout.ms. On a cluster whose brokers are killed it must
  // outlast the group coordinator's failover (the dead node's broker session, 4 s, plus the
  // election): librdkafka calls a member's assignment lost when no heartbeat succeeded for that
  // long, and the member then processes its uncommitted records again.
  int session_timeout_ms = 3'000;
};

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::stoi(text) : fallback;
}

std::string worker_path() {
  const char* path = std::getenv("PARALLEL_WORKER");
  return path != nullptr && *path != '\0' ? path : PARALLEL_WORKER_PATH;
}

struct Worker {
  int slot = 0;
  int incarnation = 0;
  pid_t pid = -1;
  fs::path out;  // this incarnation's stdout and stderr
};

bool is_spill_reference(const std::string& metadata) {
  // Acknowledgement metadata is base64; a spill reference starts with a character base64 never uses.
  if (metadata.empty()) return false;
  const char c = metadata[0];
  return !(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '=');
}

class ParallelKillRun {
 public:
  // With a cluster, its brokers are SIGKILLed and restarted on `broker_kills`' schedule while the
  // workers are.
  ParallelKillRun(std::string bootstrap, Scenario scenario, OwnedBroker* cluster = nullptr,
                  BrokerKillSchedule broker_kills = BrokerKillSchedule{0})
      : bootstrap_(std::move(bootstrap)),
        scenario_(std::move(scenario)),
        cluster_(cluster),
        broker_schedule_(broker_kills) {
    scenario_.records = env_int("PARALLEL_KILL_RECORDS", scenario_.records);
    scenario_.kills = env_int("PARALLEL_KILL_KILLS", scenario_.kills);
    group_ = unique_name("parallel-" + scenario_.mode.substr(0, 5));
    input_ = group_ + "-input";
    output_ = group_ + "-output";
    dir_ = fs::temp_directory_path() / group_;
    fs::create_directories(dir_);
    create_topic(bootstrap_, input_, kPartitions);
    if (scenario_.mode == "transactional") create_topic(bootstrap_, output_, kPartitions);
  }
  ~ParallelKillRun() {
    monitoring_ = false;
    if (monitor_.joinable()) monitor_.join();
    for (auto& worker : workers_) stop_worker(worker.pid, SIGKILL);
    if (::testing::Test::HasFailure() || std::getenv("PARALLEL_KILL_KEEP_LOGS") != nullptr) {
      std::cerr << "journals and logs kept in " << dir_ << "\n";
    } else {
      fs::remove_all(dir_);
    }
  }

  void run(unsigned seed) {
    const auto started = Clock::now();
    std::mt19937 random(seed);
    monitor_ = std::thread([this] { monitor_spills(); });
    for (int slot = 0; slot < 2; ++slot) start(slot);
    std::thread producer([this] { produce(); });
    std::thread broker_killer([this] {
      if (cluster_ != nullptr && broker_schedule_.kills > 0)
        broker_kills_ = kill_brokers(*cluster_, broker_schedule_);
    });
    for (int kill = 0; kill < scenario_.kills; ++kill) {
      if (kill == scenario_.scale_up_at) {
        std::cerr << "scale-up: worker 2 joins\n";
        start(2);
      }
      const int slot = std::uniform_int_distribution<int>(0, static_cast<int>(workers_.size()) - 1)(random);
      wait_until_processing(slot);
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 1500)(random)));
      restart_exited();
      stop_worker(workers_[static_cast<std::size_t>(slot)].pid, SIGKILL);
      died_.insert(journal_of(workers_[static_cast<std::size_t>(slot)]));
      ++kills_;
      std::cerr << "SIGKILL worker " << slot << " (" << kills_ << ") at " << seconds_since(started) << " s\n";
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 800)(random)));
      start(slot);
    }
    producer.join();
    broker_killer.join();
    std::cerr << "produced " << scenario_.records << " records at " << seconds_since(started) << " s\n";
    // The survivors drain the input: every partition's committed offset reaches its end.
    GroupOffsetsReader reader(bootstrap_, group_);
    std::vector<std::int64_t> ends;
    for (const auto& records : produced_) ends.push_back(static_cast<std::int64_t>(records.size()));
    const auto drain_deadline = Clock::now() + std::chrono::seconds(120);
    bool drained = false;
    while (!drained && Clock::now() < drain_deadline) {
      restart_exited();
      drained = reader.wait_until_at(input_, ends, std::chrono::seconds(2));
    }
    EXPECT_TRUE(drained) << "the group's committed offsets did not reach the log end within 120 s";
    drained_seconds_ = seconds_since(started);
    for (auto& worker : workers_) {
      // A worker started again after the last kill may still be starting: before its "started"
      // line its SIGTERM handler may not be installed, and SIGTERM would end it uncleanly.
      wait_until_started(worker.out);
      EXPECT_EQ(stop_worker(worker.pid, SIGTERM), 0)
          << "worker " << worker.slot << " did not exit cleanly; see " << worker.out;
      worker.pid = -1;
    }
    monitoring_ = false;
    monitor_.join();
  }

  JournalFindings check_journals() const {
    std::vector<fs::path> journals;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      if (entry.path().filename().string().rfind("journal-", 0) == 0) journals.push_back(entry.path());
    }
    return processor::testing::check_journals(journals, produced_, died_);
  }

  // The output topic, read_committed: results per input record, and keys whose results are not
  // in input offset order.
  struct Output {
    std::size_t records = 0;
    std::size_t missing = 0;
    std::size_t duplicates = 0;
    std::size_t keys_out_of_order = 0;
    std::size_t keys_wrong_count = 0;
  };
  Output check_output() const {
    Output out;
    std::map<std::pair<int, std::int64_t>, int> results;
    std::map<std::string, std::vector<std::int64_t>> offsets_by_key;
    for (const auto& record : read_topic(bootstrap_, output_, true, std::chrono::seconds(90))) {
      const std::string& value = *record.value;
      const auto first = value.find(':');
      const auto second = value.find(':', first + 1);
      const int partition = std::stoi(value.substr(0, first));
      const std::int64_t offset = std::stoll(value.substr(first + 1, second - first - 1));
      ++results[{partition, offset}];
      offsets_by_key[record.key].push_back(offset);
      ++out.records;
    }
    std::map<std::string, std::size_t> expected_count;
    for (int p = 0; p < kPartitions; ++p) {
      const auto& records = produced_[static_cast<std::size_t>(p)];
      for (std::size_t o = 0; o < records.size(); ++o) {
        ++expected_count[records[o].key];
        const auto it = results.find({p, static_cast<std::int64_t>(o)});
        if (it == results.end())
          ++out.missing;
        else
          out.duplicates += static_cast<std::size_t>(it->second - 1);
      }
    }
    for (const auto& [key, count] : expected_count) {
      const auto& offsets = offsets_by_key[key];
      if (offsets.size() != count) ++out.keys_wrong_count;
      if (!std::is_sorted(offsets.begin(), offsets.end())) ++out.keys_out_of_order;
    }
    return out;
  }

  // What the workers' outputs say, over every worker process: from their last stats lines, how
  // many poll() calls threw and the longest one (rebalance callbacks included: a revoke drains
  // running records); the partitions whose spilled acknowledgements a new owner could not read
  // (it logs that and processes them again: by design, see spill_ack_metadata); and the
  // library's warnings and errors, printed when a check fails.
  struct WorkerLogs {
    long long poll_errors = 0;
    long long longest_poll_ms = 0;
    std::set<int> unreadable_spills;
    std::vector<std::string> warnings;
  };
  WorkerLogs worker_logs() const {
    WorkerLogs logs;
    const std::string unreadable = "ignoring the acknowledgement metadata of " + input_ + ":";
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("worker-", 0) != 0) continue;
      std::ifstream out(entry.path());
      long long errors = 0, longest = 0;
      for (std::string line; std::getline(out, line);) {
        const auto at = line.find(" poll_errors ");
        if (line.rfind("stats ", 0) == 0 && at != std::string::npos) {
          std::sscanf(line.c_str() + at, " poll_errors %lld longest_poll_ms %lld", &errors, &longest);
        } else if (line.find("Warning") != std::string::npos || line.find("Error") != std::string::npos) {
          logs.warnings.push_back(name + ": " + line);
          if (const auto spill = line.find(unreadable); spill != std::string::npos) {
            logs.unreadable_spills.insert(std::atoi(line.c_str() + spill + unreadable.size()));
          }
        }
      }
      logs.poll_errors += errors;
      logs.longest_poll_ms = std::max(logs.longest_poll_ms, longest);
    }
    return logs;
  }

  int kills() const { return kills_; }
  int broker_kills() const { return broker_kills_; }
  int self_exits() const { return self_exits_; }
  bool spill_seen() const { return spill_seen_; }
  std::size_t longest_metadata() const { return longest_metadata_; }
  double drained_seconds() const { return drained_seconds_; }
  const std::map<int, int>& exit_codes() const { return exit_codes_; }

 private:
  static double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  static std::string journal_of(const Worker& worker) {
    return "journal-" + std::to_string(worker.slot) + "-" + std::to_string(worker.incarnation) + ".log";
  }

  void start(int slot) {
    if (workers_.size() <= static_cast<std::size_t>(slot))
      workers_.resize(static_cast<std::size_t>(slot) + 1);
    Worker& worker = workers_[static_cast<std::size_t>(slot)];
    worker.slot = slot;
    ++worker.incarnation;
    const std::string name = std::to_string(slot) + "-" + std::to_string(worker.incarnation);
    worker.out = dir_ / ("worker-" + name + ".out");
    const fs::path state_dir = dir_ / ("state-" + std::to_string(slot));  // reused by the slot's next process
    fs::create_directories(state_dir);
    worker.pid = spawn_worker({worker_path(),
                               "--bootstrap",
                               bootstrap_,
                               "--group",
                               group_,
                               "--input",
                               input_,
                               "--output",
                               output_,
                               "--mode",
                               scenario_.mode,
                               "--assignment",
                               scenario_.assignment,
                               "--session-timeout-ms",
                               std::to_string(scenario_.session_timeout_ms),
                               "--journal",
                               (dir_ / journal_of(worker)).string(),
                               "--state-dir",
                               state_dir.string(),
                               "--seed",
                               std::to_string(slot * 1000 + worker.incarnation),
                               "--metadata-budget",
                               std::to_string(kMetadataBudget),
                               "--slow-partition",
                               "0",
                               "--slow-offset",
                               std::to_string(kSlowOffset),
                               "--slow-ms",
                               std::to_string(kSlowMs),
                               "--slow-done",
                               (dir_ / "slow-done").string()},
                              worker.out);
  }

  // A worker that exited by itself is started again, as after a crash. Transactional workers
  // exit 2 (a failed checkpoint transaction) or 3 (partitions lost with a transaction open).
  void restart_exited() {
    for (auto& worker : workers_) {
      if (const auto code = exited_worker(worker.pid)) {
        ++self_exits_;
        ++exit_codes_[*code];
        std::cerr << "worker " << worker.slot << " exited by itself (" << *code << "); see " << worker.out
                  << "; its last lines:\n"
                  << log_tail(worker.out);
        died_.insert(journal_of(worker));
        worker.pid = -1;
        start(worker.slot);
      }
    }
  }

  // Until the worker's stats lines show its processed count growing (at most 20 s: a member can
  // be without partitions for a while, and the slow record stalls a transactional worker).
  void wait_until_processing(int slot) {
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    long long seen = -1;
    while (Clock::now() < deadline) {
      restart_exited();
      std::ifstream log(workers_[static_cast<std::size_t>(slot)].out);
      long long processed = -1;
      for (std::string line; std::getline(log, line);) {
        long long value = 0;
        if (std::sscanf(line.c_str(), "stats processed %lld", &value) == 1) processed = value;
      }
      if (seen >= 0 && processed > seen) return;
      if (processed >= 0) seen = processed;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // Key k lives on partition k % 12; its values are its sequence numbers 0, 1, 2, ... in the order
  // of sending.
  void produce() {
    produced_.assign(kPartitions, {});
    std::map<int, long long> next_seq;
    Producer producer(bootstrap_, {{"enable.idempotence", "true"}, {"log_level", "3"}});
    const auto started = Clock::now();
    std::mt19937 random(11);
    for (int i = 0; i < scenario_.records; ++i) {
      const int key = std::uniform_int_distribution<int>(0, kKeys - 1)(random);
      const std::string name = "k" + std::to_string(key);
      const std::string seq = std::to_string(next_seq[key]++);
      producer.send(input_, key % kPartitions, name, seq);
      produced_[static_cast<std::size_t>(key % kPartitions)].push_back({name, seq});
      if (i % 20 == 0) std::this_thread::sleep_until(started + scenario_.produce_for * i / scenario_.records);
    }
    producer.flush();
    ProducedLog written(kPartitions);
    for (const auto& record :
         read_input_as_written(bootstrap_, input_, static_cast<std::size_t>(scenario_.records))) {
      written[static_cast<std::size_t>(record.partition)].push_back({record.key, record.value.value_or("")});
    }
    produced_ = std::move(written);
  }

  // The group's committed metadata of partition 0, where the slow record is.
  void monitor_spills() {
    GroupOffsetsReader reader(bootstrap_, group_);
    while (monitoring_) {
      if (const auto offsets = reader.read(input_, kPartitions)) {
        const std::string& metadata = (*offsets)[0].metadata;
        longest_metadata_ = std::max(longest_metadata_.load(), metadata.size());
        if (is_spill_reference(metadata) && !spill_seen_) {
          spill_seen_ = true;
          std::cerr << "spill reference committed for partition 0 at offset " << (*offsets)[0].offset << ": "
                    << metadata << "\n";
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  std::string bootstrap_;
  Scenario scenario_;
  OwnedBroker* cluster_;
  BrokerKillSchedule broker_schedule_;
  std::string group_, input_, output_;
  fs::path dir_;
  std::vector<Worker> workers_;
  ProducedLog produced_;
  int kills_ = 0;
  int broker_kills_ = 0;
  int self_exits_ = 0;
  std::map<int, int> exit_codes_;
  std::set<std::string> died_;  // journals of the processes killed or exited by themselves
  double drained_seconds_ = 0;
  std::thread monitor_;
  std::atomic<bool> monitoring_{true};
  std::atomic<bool> spill_seen_{false};
  std::atomic<std::size_t> longest_metadata_{0};
};

unsigned seed_of_run() {
  const char* text = std::getenv("PARALLEL_KILL_SEED");
  const unsigned seed =
      text != nullptr ? static_cast<unsigned>(std::stoul(text)) : std::random_device{}() & 0x7fffffff;
  std::cerr << "PARALLEL_KILL_SEED=" << seed << "\n";
  return seed;
}

void report(const char* name, const ParallelKillRun& run, const JournalFindings& found) {
  std::cerr << name << ": " << run.kills() << " SIGKILLs, " << run.self_exits() << " self-exits, drained at "
            << run.drained_seconds() << " s; " << found.incarnations << " processes, " << found.tries
            << " tries, " << found.failures << " transient failures, " << found.replays << " replays ("
            << found.replays_victim << " by killed processes; by live ones: " << found.replays_revoked
            << " revoked uncommitted, " << found.replays_lost << " lost, " << found.replays_late
            << " finished after the revoke, " << found.replays_survivor << " held), " << found.slow_sleeps
            << " slow sleeps; missing " << found.missing << ", wrong values " << found.wrong_values
            << ", overlaps " << found.overlaps << ", overtaken " << found.overtaken << ", backwards "
            << found.backwards << ", started unassigned " << found.started_unassigned << " (after a loss "
            << found.started_after_loss << "); spill " << (run.spill_seen() ? "seen" : "NOT seen")
            << ", longest metadata of partition 0: " << run.longest_metadata() << " bytes\n";
  for (const auto& example : found.examples) std::cerr << "  " << example << "\n";
}

class ParallelKill : public ::testing::Test {
 protected:
  void SetUp() override {
    bootstrap_ = real_broker();
    if (bootstrap_.empty()) GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: no real broker";
  }
  std::string bootstrap_;
};

// At least once, under `assignment` (a classic assignor, or "consumer": Kafka 4's protocol).
void expect_at_least_once(const std::string& bootstrap, const std::string& assignment,
                          OwnedBroker* cluster = nullptr,
                          BrokerKillSchedule broker_kills = BrokerKillSchedule{0}) {
  Scenario scenario{"journal", assignment};
  if (cluster != nullptr) scenario.session_timeout_ms = 10'000;
  ParallelKillRun run(bootstrap, scenario, cluster, broker_kills);
  run.run(seed_of_run());
  const JournalFindings found = run.check_journals();
  report(("at-least-once, " + assignment).c_str(), run, found);
  const auto logs = run.worker_logs();
  std::cerr << "poll(): " << logs.poll_errors << " threw, longest " << logs.longest_poll_ms << " ms\n";
  EXPECT_EQ(logs.poll_errors, 0) << "poll() threw (see the workers' logs)";
  // Partitions whose spilled acknowledged set a new owner could not read excepted: it processes
  // every record above the committed offset again, also when the previous owner lives on.
  std::size_t survivor_replays = 0;
  for (const auto& [partition, replays] : found.survivor_replays_by_partition) {
    if (logs.unreadable_spills.count(partition) == 0) survivor_replays += replays;
  }
  std::ostringstream warnings;
  for (std::size_t i = 0; i < logs.warnings.size() && i < 20; ++i) warnings << "\n  " << logs.warnings[i];
  EXPECT_EQ(survivor_replays, 0u) << "records processed again because of a member that was not killed; "
                                  << logs.unreadable_spills.size() << " partitions with an unreadable spill; "
                                  << logs.warnings.size()
                                  << " warnings in the workers' logs:" << warnings.str();
  EXPECT_EQ(run.kills(), env_int("PARALLEL_KILL_KILLS", Scenario{}.kills));
  EXPECT_EQ(run.broker_kills(), broker_kills.kills);
  EXPECT_EQ(run.self_exits(), 0);
  EXPECT_EQ(found.missing, 0u);
  EXPECT_EQ(found.wrong_values, 0u);
  EXPECT_EQ(found.order_violations(), 0u);
  EXPECT_GT(found.failures, 0u) << "no transient failure was injected";
  EXPECT_GE(found.slow_sleeps, 1u);
  // Coverage, not a guarantee: on one broker the schedule holds partition 0's slow record long
  // enough for its acknowledgements to spill in every run. With brokers killed, partition 0 moves
  // more often (each owner starts a fresh set), and a CI run saw 60 bytes at most: the report
  // above says whether the spill was met there.
  if (cluster == nullptr) {
    EXPECT_TRUE(run.spill_seen()) << "no spill reference was committed for partition 0 (longest metadata "
                                  << run.longest_metadata() << " bytes)";
  }
}

TEST_F(ParallelKill, EveryRecordProcessedAtLeastOnceAndPerKeyInOffsetOrder) {
  expect_at_least_once(bootstrap_, "cooperative-sticky");
}

TEST_F(ParallelKill, UnderTheConsumerGroupProtocolEveryRecordAtLeastOnceAndInOrder) {
  expect_at_least_once(bootstrap_, "consumer");
}

// The same on a 3-node cluster (every topic replicated 3 times, min.insync.replicas 2) whose
// brokers are SIGKILLed one at a time every 9 s and restarted 6 s later (3 kills: each node once),
// under each group protocol: no record lost, each key in order, no worker exits.
class ParallelKillOnACluster : public ::testing::TestWithParam<std::string> {};

TEST_P(ParallelKillOnACluster, BrokerAndWorkerKillsLoseNothingAndKeepKeyOrder) {
  if (broker_script().empty()) GTEST_SKIP() << "KAFKA_BROKER_SCRIPT is not set: no cluster can be started";
  OwnedBroker cluster(broker_script(), fs::temp_directory_path() / unique_name("parallel-cluster"), 3);
  BrokerKillSchedule schedule;
  schedule.kills = 3;
  schedule.every = std::chrono::milliseconds(9'000);
  expect_at_least_once(cluster.bootstrap(), GetParam(), &cluster, schedule);
  if (::testing::Test::HasFailure()) cluster.keep_directory();
}

INSTANTIATE_TEST_SUITE_P(EveryProtocol, ParallelKillOnACluster, ::testing::ValuesIn(group_protocols()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return group_protocol_name(param.param);
                         });

TEST_F(ParallelKill, WithCheckpointTransactionsEveryRecordHasExactlyOneResult) {
  ParallelKillRun run(bootstrap_, Scenario{"transactional", "range"});
  run.run(seed_of_run());
  const JournalFindings found = run.check_journals();
  report("exactly-once", run, found);
  const auto output = run.check_output();
  std::cerr << "exactly-once output: " << output.records << " records, " << output.missing << " missing, "
            << output.duplicates << " duplicates, " << output.keys_wrong_count << " keys with a wrong count, "
            << output.keys_out_of_order << " keys out of order\n";
  for (const auto& [code, times] : run.exit_codes())
    EXPECT_TRUE(code == 2 || code == 3) << times << " exits with " << code;
  EXPECT_EQ(found.missing, 0u);
  EXPECT_EQ(found.wrong_values, 0u);
  EXPECT_EQ(found.order_violations(), 0u);
  EXPECT_EQ(output.missing, 0u);
  EXPECT_EQ(output.duplicates, 0u);
  EXPECT_EQ(output.keys_wrong_count, 0u);
  EXPECT_EQ(output.keys_out_of_order, 0u);
}

}  // namespace
}  // namespace processor::testing
