// The lag monitor's evaluation at 10^5 partitions, next to its floor in the same run:
//   - LagMonitor::poll_once() of one group reading 100 topics x 1000 partitions from an in-memory
//     LagSource (the source's copies of its answers, the evaluation, the snapshot): partition-offsets
//     per second, and the evaluation alone (MonitorStats::last_evaluation_seconds);
//   - the floor: a loop that only copies the same 10^5 (committed offset, log end) samples and
//     subtracts them — what any evaluator must at least do.
//
// Every measure uses manual time: the offsets advance before each poll (untimed), so that each
// poll sees moving logs and commits, as in a live cluster.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "processor/monitor/lag_monitor.hpp"

namespace {

using namespace processor;
using namespace processor::monitor;

constexpr int kTopics = 100;
constexpr int kPartitionsPerTopic = 1'000;
constexpr std::size_t kPartitions = std::size_t{kTopics} * kPartitionsPerTopic;  // 10^5
constexpr int kMembers = 10;

std::string topic_name(int t) {
  char name[32];
  std::snprintf(name, sizeof name, "bench-topic-%03d", t);
  return name;
}

// One group, ten members, 10^5 partitions; every call answers from vectors kept in memory.
class InMemorySource : public LagSource {
 public:
  InMemorySource() {
    description_.group = "bench-group";
    description_.state = "Stable";
    for (int m = 0; m < kMembers; ++m) {
      kafka::GroupMember member;
      member.member_id = "bench-client-" + std::to_string(m) + "-0f4e8c1a-4d6b-4a53-9c1e-2b7f7d7c9e01";
      member.client_id = "bench-client-" + std::to_string(m);
      member.host = "/127.0.0.1";
      description_.members.push_back(std::move(member));
    }
    for (int t = 0; t < kTopics; ++t) {
      for (int p = 0; p < kPartitionsPerTopic; ++p) {
        kafka::TopicPartition tp(topic_name(t), p);
        description_.members[committed_.size() % kMembers].assignment.push_back(tp);
        committed_.push_back({tp, 0, "", {}});
        logs_.push_back({0, 0});
      }
    }
  }

  // Producers add 100 records per partition, consumers commit 90 of them (untimed).
  void advance() {
    for (std::size_t i = 0; i < kPartitions; ++i) {
      *logs_[i].log_end_offset += 100;
      committed_[i].offset += 90;
    }
  }

  std::vector<std::string> list_groups() override { return {"bench-group"}; }
  std::vector<kafka::GroupDescription> describe_groups(const std::vector<std::string>&) override {
    return {description_};
  }
  std::vector<kafka::CommittedOffset> committed_offsets(std::string_view) override { return committed_; }
  std::vector<LogOffsets> log_offsets(const std::vector<kafka::TopicPartition>& partitions) override {
    if (partitions.size() != logs_.size()) return {};
    return logs_;
  }

  const std::vector<kafka::CommittedOffset>& committed() const { return committed_; }
  const std::vector<LogOffsets>& logs() const { return logs_; }

 private:
  kafka::GroupDescription description_;
  std::vector<kafka::CommittedOffset> committed_;
  std::vector<LogOffsets> logs_;
};

double elapsed(bench::Clock::time_point start, bench::Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

void BM_PollOnce100k(benchmark::State& state) {
  auto source = std::make_shared<InMemorySource>();
  LagMonitorOptions options;
  options.history_capacity = 1;  // the history's copies are the chart's business, not the evaluation's
  LagMonitor monitor(source, options);
  auto now = std::chrono::system_clock::now();
  for (int warm = 0; warm < 3; ++warm) {  // fill windows and tables past their first sample
    source->advance();
    monitor.poll_once(now += std::chrono::seconds(5));
  }
  double evaluation_seconds = 0;
  std::size_t partitions = 0;
  for (auto _ : state) {
    source->advance();
    now += std::chrono::seconds(5);
    const auto start = bench::Clock::now();
    const LagSnapshot snapshot = monitor.poll_once(now);
    state.SetIterationTime(elapsed(start, bench::Clock::now()));
    evaluation_seconds += snapshot.stats.last_evaluation_seconds;
    partitions = snapshot.groups.at(0).partitions.size();
  }
  if (partitions != kPartitions) state.SkipWithError("the snapshot does not hold every partition");
  state.counters["evaluation_ms"] = evaluation_seconds * 1e3 / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PollOnce100k)->UseManualTime()->Unit(benchmark::kMillisecond);

// The floor: copy the same samples and compute the offset lag, nothing else.
void BM_Anchor_CopySamples100k(benchmark::State& state) {
  InMemorySource source;
  std::vector<std::int64_t> lag(kPartitions);
  for (auto _ : state) {
    source.advance();
    const auto start = bench::Clock::now();
    const std::vector<kafka::CommittedOffset>& committed = source.committed();
    const std::vector<LogOffsets>& logs = source.logs();
    for (std::size_t i = 0; i < kPartitions; ++i) {
      lag[i] = std::max<std::int64_t>(0, *logs[i].log_end_offset - committed[i].offset);
    }
    benchmark::DoNotOptimize(lag.data());
    benchmark::ClobberMemory();
    state.SetIterationTime(elapsed(start, bench::Clock::now()));
  }
}
BENCHMARK(BM_Anchor_CopySamples100k)->UseManualTime()->Unit(benchmark::kMillisecond);

void summarize(const bench::CollectingReporter& r, bench::Summary& s) {
  using bench::fmt;
  auto rate = [](double seconds) { return fmt(static_cast<double>(kPartitions) / seconds / 1e6) + " M/s"; };
  const auto floor = r.real("BM_Anchor_CopySamples100k");
  const auto poll = r.real("BM_PollOnce100k");
  const auto evaluation = r.counter("BM_PollOnce100k", "evaluation_ms");
  if (evaluation) {
    bench::Result result{"monitor evaluation, 100k partitions (partition-offsets/s)",
                         rate(*evaluation / 1e3)};
    if (floor) {
      result.anchor = rate(*floor) + " (copy samples)";
      result.ratio = "floor/ours " + fmt(*evaluation / 1e3 / *floor) + "x";
    }
    result.target = ">=1 M/s";
    result.met = bench::met(static_cast<double>(kPartitions) / (*evaluation / 1e3) >= 1e6);
    s.add(result);
  } else {
    s.missing("monitor evaluation, 100k partitions (partition-offsets/s)");
  }
  if (poll) {
    bench::Result result{"monitor poll_once(), 100k partitions (partition-offsets/s)", rate(*poll)};
    if (floor) {
      result.anchor = rate(*floor) + " (copy samples)";
      result.ratio = "floor/ours " + fmt(*poll / *floor) + "x";
    }
    s.add(result);
  } else {
    s.missing("monitor poll_once(), 100k partitions (partition-offsets/s)");
  }
  s.note(
      "100k partitions = 100 topics x 1000 partitions of one group with 10 members; in-memory LagSource. "
      "poll_once() includes the source's copies of its answers and the snapshot (10^5 PartitionLag with "
      "their strings); evaluation is lag, window, status and lag in seconds only.");
}

}  // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, "bench_monitor", summarize); }
