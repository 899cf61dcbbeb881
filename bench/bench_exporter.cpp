// The exporter's scrape at 10^5 partitions, with its floor in this binary and run:
//   - write_lag_metrics() of a LagSnapshot of one group of 100k partitions (100 topics x 1,000) to
//     the Prometheus text: offset, lag, lag_seconds, status, latest and earliest offset of each
//     partition (6 samples each: 600k samples) and the group's;
//   - the same scrape through MetricsRegistry::scrape(), as the server runs it (collector + copy);
//   - the floor: writing the very same text from precomputed label strings, one append per line
//     and std::to_chars of each value: what any exporter must at least do to produce those bytes.
// Every measure reports the bytes and samples it wrote as counters.

#include <charconv>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "processor/monitor/lag_metrics.hpp"
#include "processor/monitor/metrics.hpp"
#include "synthetic_lag.hpp"

namespace {

using namespace processor::monitor;

constexpr int kTopics = 100;
constexpr int kPartitionsPerTopic = 1'000;

const LagSnapshot& snapshot_100k() {
  static const LagSnapshot snapshot = [] {
    LagSnapshot s;
    s.taken_at = std::chrono::system_clock::now();
    GroupLag group;
    group.group = "bench-group";
    group.state = "Stable";
    group.members = 10;
    group.status = Status::Warn;
    group.partitions.reserve(std::size_t{kTopics} * kPartitionsPerTopic);
    for (int t = 0; t < kTopics; ++t) {
      char topic[32];
      std::snprintf(topic, sizeof topic, "bench-topic-%03d", t);
      for (int p = 0; p < kPartitionsPerTopic; ++p) {
        const std::int64_t end = 1'000'000 + 7919LL * (t * kPartitionsPerTopic + p) % 100'000;
        PartitionLag lag =
            processor::testing::synthetic_partition(topic, p, end, (p * 37) % 5000, (p % 600) * 0.25);
        lag.member_id = "consumer-" + std::to_string(p % 10) + "-8c1e4f0a-6a55-4d2b-9b8e-0f3b6f2d9c11";
        lag.client_id = "consumer-" + std::to_string(p % 10);
        lag.host = "/10.0.0." + std::to_string(p % 10 + 1);
        group.partitions.push_back(std::move(lag));
      }
    }
    s.groups.push_back(std::move(group));
    return s;
  }();
  return snapshot;
}

std::size_t count_samples(const std::string& text) {
  std::size_t samples = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    if (text[at] != '#') ++samples;
    at = end + 1;
  }
  return samples;
}

void report(benchmark::State& state, std::size_t bytes, std::size_t samples) {
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["samples"] = static_cast<double>(samples);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void BM_WriteLagMetrics100k(benchmark::State& state) {
  const LagSnapshot& snapshot = snapshot_100k();
  std::string text;
  for (auto _ : state) {
    text.clear();
    MetricWriter writer(text);
    write_lag_metrics(snapshot, writer);
    benchmark::DoNotOptimize(text.data());
  }
  report(state, text.size(), count_samples(text));
}
BENCHMARK(BM_WriteLagMetrics100k)->Unit(benchmark::kMillisecond);

void BM_RegistryScrape100k(benchmark::State& state) {
  const auto snapshot = std::shared_ptr<const LagSnapshot>(&snapshot_100k(), [](const LagSnapshot*) {});
  MetricsRegistry registry;
  registry.add_collector(lag_metrics_collector([snapshot] { return snapshot; }));
  std::string text;
  for (auto _ : state) {
    text = registry.scrape();  // a fresh string each time, as the server's response body
    benchmark::DoNotOptimize(text.data());
  }
  report(state, text.size(), count_samples(text));
}
BENCHMARK(BM_RegistryScrape100k)->Unit(benchmark::kMillisecond);

// The floor: the same bytes from precomputed lines, one append and one to_chars per sample.
void BM_Floor_AppendAndToChars100k(benchmark::State& state) {
  std::string reference;
  MetricWriter writer(reference);
  write_lag_metrics(snapshot_100k(), writer);
  struct Line {
    std::string prefix;  // a comment line whole; a sample's name, labels and the space
    bool sample = false;
    double value = 0;
  };
  std::vector<Line> lines;
  for (std::size_t at = 0; at < reference.size();) {
    const std::size_t end = reference.find('\n', at);
    const std::string line = reference.substr(at, end - at);
    at = end + 1;
    if (line[0] == '#') {
      lines.push_back({line + "\n"});
      continue;
    }
    const std::size_t space = line.rfind(' ');
    lines.push_back({line.substr(0, space + 1), true, std::stod(line.substr(space + 1))});
  }
  std::string text;
  for (auto _ : state) {
    text.clear();
    char buffer[32];
    for (const Line& line : lines) {
      text += line.prefix;
      if (!line.sample) continue;
      // Whole values as integers, as the writer does (to_chars of the double would be shorter work).
      const auto value = static_cast<std::int64_t>(line.value);
      const auto result = static_cast<double>(value) == line.value
                              ? std::to_chars(buffer, buffer + sizeof buffer, value)
                              : std::to_chars(buffer, buffer + sizeof buffer, line.value);
      text.append(buffer, result.ptr);
      text += '\n';
    }
    benchmark::DoNotOptimize(text.data());
  }
  if (text != reference) state.SkipWithError("the floor wrote other bytes than the exporter");
  report(state, text.size(), count_samples(text));
}
BENCHMARK(BM_Floor_AppendAndToChars100k)->Unit(benchmark::kMillisecond);

void summarize(const bench::CollectingReporter& r, bench::Summary& s) {
  using bench::fmt;
  const auto floor = r.real("BM_Floor_AppendAndToChars100k");
  const auto bytes = r.counter("BM_WriteLagMetrics100k", "bytes");
  const auto samples = r.counter("BM_WriteLagMetrics100k", "samples");
  for (const auto& [name, measure] :
       {std::pair<std::string, std::string>{"BM_WriteLagMetrics100k",
                                            "lag metrics text, 100k partitions (write_lag_metrics)"},
        {"BM_RegistryScrape100k", "lag metrics text, 100k partitions (MetricsRegistry::scrape)"}}) {
    const auto ours = r.real(name);
    if (!ours) {
      s.missing(measure);
      continue;
    }
    bench::Result result{measure, fmt(*ours * 1e3) + " ms"};
    const auto ours_cpu = r.cpu(name);
    const auto floor_cpu = r.cpu("BM_Floor_AppendAndToChars100k");
    if (floor && ours_cpu && floor_cpu) {
      result.ours += " (CPU " + fmt(*ours_cpu * 1e3) + " ms)";
      result.anchor =
          fmt(*floor * 1e3) + " ms (CPU " + fmt(*floor_cpu * 1e3) + " ms), append + to_chars floor";
      result.ratio = "ours/floor " + fmt(*ours / *floor) + "x wall, " + fmt(*ours_cpu / *floor_cpu) + "x CPU";
    }
    s.add(result);
  }
  if (bytes && samples) {
    s.note("one scrape = " + fmt(*bytes / 1e6) + " MB, " + fmt(*samples) +
           " samples (6 per partition: offset, lag, lag_seconds, status, latest and earliest offset)");
    s.note(
        "on a shared machine the wall times carry the waits for a core; the CPU ratio is the steadier one");
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, "bench_exporter", summarize); }
