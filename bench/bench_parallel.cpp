// ParallelConsumer side by side with Confluent's Parallel Consumer (parallel-consumer-core 0.5.3.2,
// bench/parallel-consumer-peer) on the same real broker and the same input: one topic of 12
// partitions, keys over 10,000 keys (key k on partition k % 12), 16-byte values, produced once.
// Every run is its own process (this binary with --child: bench_parallel_child.hpp; or the
// peer's JVM), a fresh group reading from the start, timed from the first record the handler sees
// to the M-th it finishes; CPU is the process's (getrusage / getProcessCpuTime) over that window,
// peak memory its VmHWM.
//   a) ordering Key, concurrency 16, 256, 1000, a handler that sleeps 1 ms or 10 ms (simulated
//      I/O): records/s of ours and of the peer, ours/peer, and ours against the ceiling
//      concurrency / latency (or the raw loop's rate, when the broker's fetch is lower);
//   b) no work (0 ms), ours at concurrency 16 against a raw librdkafka loop (subscribe,
//      rd_kafka_consumer_poll, nothing else) and the peer;
//   c) CPU seconds per million records and peak RSS of each run above, ours against the peer;
//   d) one slow record (partition 0, offset 100, --slow-seconds long) among fast ones (1 ms,
//      concurrency 16): the rate while it is outstanding, ours against the peer.
// Each measure runs --repetitions times (ours and the peer alternating who goes first); the
// tables show medians.
//
//   bench_parallel [--smoke] [--repetitions N] [--case-seconds S] [--max-records N]
//                  [--slow-seconds S] [--peer CMD] [--markdown FILE] [--queued-min-messages N]
//   (KAFKA_BOOTSTRAP: the broker, required; PROCESSOR_PARALLEL_PEER: the peer's command, printed
//   by bench/parallel-consumer-peer/build.sh; without it ours runs alone.)
//
// Prints the bench_common summary and RESULT lines for scripts/bench.sh, then a markdown table
// (also written to --markdown FILE). Exit 1 when a run fails, never because a target is missed.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.hpp"
#include "bench_parallel_child.hpp"
#include "kafka_test_support.hpp"

namespace {

using namespace processor;
using ::bench::fmt;
using ::bench::met;
using ::bench::Result;
using ::bench::parallel::kQueuedMinMessages;
using Clock = std::chrono::steady_clock;
using Fields = std::map<std::string, double>;

constexpr int kPartitions = 12;
constexpr int kKeys = 10'000;
constexpr int kSlowPartition = 0;
constexpr int kSlowOffset = 100;
constexpr int kSlowConcurrency = 16;
constexpr int kSlowWorkMs = 1;

// ---- The driver: the input, the runs in child processes, the summary and the markdown table ----

struct Config {
  std::string bootstrap;
  std::string peer;
  std::string self;  // this binary, for the child runs
  std::string markdown;
  std::string queued_min_messages = kQueuedMinMessages;  // ours and the raw loop
  int repetitions = 3;
  double case_seconds = 5;
  std::int64_t max_records = 500'000;
  std::int64_t zero_work_records = 1'000'000;
  int slow_seconds = 60;
  std::vector<std::pair<int, int>> cases = {{16, 1}, {16, 10}, {256, 1}, {256, 10}, {1000, 1}, {1000, 10}};
};

// Runs `command`, returns the numbers of its "<prefix> {json}" line; its stderr goes to `log`.
Fields run_json(const std::string& command, const std::string& prefix, const std::string& log,
                std::chrono::seconds timeout) {
  const std::string line_command =
      "timeout --kill-after=10 " + std::to_string(timeout.count()) + " " + command + " 2>>" + log;
  FILE* pipe = ::popen(line_command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string result;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
    const std::string line = buffer;
    if (line.rfind(prefix + " ", 0) == 0) result = line.substr(prefix.size() + 1);
  }
  const int status = ::pclose(pipe);
  if (status != 0 || result.empty()) {
    throw std::runtime_error("run failed (status " + std::to_string(status) + "; log " + log +
                             "): " + command);
  }
  Fields fields;
  static const std::regex number_field("\"([a-z_]+)\"\\s*:\\s*(-?[0-9.eE+-]+|true|false)");
  for (std::sregex_iterator it(result.begin(), result.end(), number_field), end; it != end; ++it) {
    const std::string value = (*it)[2].str();
    fields[(*it)[1].str()] = value == "true" ? 1 : value == "false" ? 0 : std::stod(value);
  }
  return fields;
}

struct Run {
  std::string who;  // "ours", "raw" or "peer"
  int max_concurrency = 16;
  int work_ms = 0;
  std::int64_t records = 0;
  int slow_seconds = 0;  // > 0: the slow record
};

Fields run_one(const Config& config, const std::string& topic, const Run& run) {
  const std::string group = processor::testing::unique_name("bench-parallel-" + run.who);
  std::string flags = " --bootstrap " + config.bootstrap + " --topic " + topic + " --group " + group +
                      " --records " + std::to_string(run.records) + " --max-concurrency " +
                      std::to_string(run.max_concurrency) + " --work-ms " + std::to_string(run.work_ms);
  if (run.slow_seconds > 0) {
    flags += " --slow-partition " + std::to_string(kSlowPartition) + " --slow-offset " +
             std::to_string(kSlowOffset) + " --slow-seconds " + std::to_string(run.slow_seconds);
  }
  const auto timeout = std::chrono::seconds(180 + run.slow_seconds + run.records / 1'000);
  const std::string log = (std::filesystem::temp_directory_path() / "bench-parallel.log").string();
  if (run.who == "peer") return run_json(config.peer + flags + " --ordering KEY", "PEER", log, timeout);
  return run_json(config.self + " --child " + run.who + flags + " --ordering key --queued-min-messages " +
                      config.queued_min_messages,
                  "RUN", log, timeout);
}

// Medians over repetitions of each field, per runner.
struct Medians {
  std::map<std::string, std::map<std::string, std::vector<double>>> values;  // who -> field -> runs
  void add(const std::string& who, const Fields& fields) {
    for (const auto& [name, value] : fields) values[who][name].push_back(value);
  }
  double operator()(const std::string& who, const std::string& field) const {
    const auto runner = values.find(who);
    if (runner == values.end()) return 0;
    const auto it = runner->second.find(field);
    return it == runner->second.end() ? 0 : bench::median(it->second);
  }
  bool has(const std::string& who) const { return values.count(who) > 0; }
};

// Runs `runners` `repetitions` times, rotating who goes first; prints each run.
Medians repeat(const Config& config, const std::string& topic, const std::string& label,
               std::vector<Run> runners) {
  Medians medians;
  for (int r = 0; r < config.repetitions; ++r) {
    for (std::size_t k = 0; k < runners.size(); ++k) {
      const Run& run = runners[(k + static_cast<std::size_t>(r)) % runners.size()];
      const Fields fields = run_one(config, topic, run);
      std::cout << label << " " << run.who << ": " << fmt(fields.at("records_per_s")) << " records/s over "
                << fmt(fields.at("seconds")) << " s, " << fmt(fields.at("cpu_seconds")) << " s CPU, peak RSS "
                << fmt(fields.at("peak_rss_bytes") / 1e6) << " MB";
      if (run.slow_seconds > 0) {
        std::cout << "; while the slow record was outstanding: " << fmt(fields.at("slow_records_per_s"))
                  << " records/s over " << fmt(fields.at("slow_window_seconds")) << " s";
      }
      std::cout << std::endl;
      medians.add(run.who, fields);
    }
  }
  return medians;
}

std::string machine_markdown() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  double ram_gb = 0;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemTotal:", 0) == 0) ram_gb = std::atof(line.c_str() + 9) / 1024 / 1024;
  }
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::ostringstream out;
  out << date << "; " << std::thread::hardware_concurrency() << " CPUs (`nproc`), " << bench::cpu_model()
      << ", " << fmt(ram_gb) << " GiB RAM; librdkafka " << rd_kafka_version_str()
      << "; parallel-consumer-core 0.5.3.2 (kafka-clients 3.7.0, Java 17)";
  return out.str();
}

// What sleep_for(latency) takes on this machine (timer slack, scheduling): the handlers' real
// latency, so the true ceiling is concurrency / this, a few percent below concurrency / latency.
double measured_sleep_ms(int latency_ms) {
  constexpr int kSleeps = 200;
  const auto start = Clock::now();
  for (int i = 0; i < kSleeps; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(latency_ms));
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / kSleeps;
}

double per_million(const Medians& m, const std::string& who) {
  return m(who, "cpu_seconds") / m(who, "records") * 1e6;
}

int driver_main(const Config& config) {
  bench::Summary summary("bench_parallel");
  std::cout << "bench_parallel: " << bench::machine_line() << std::endl;
  const bool peer = !config.peer.empty();
  if (!peer) summary.note("no Parallel Consumer peer (--peer or PROCESSOR_PARALLEL_PEER): ours only");

  // The input: enough for the longest case, and for the slow case's window.
  std::int64_t needed = config.zero_work_records;
  for (const auto& [concurrency, latency] : config.cases) {
    needed = std::max(needed,
                      std::min<std::int64_t>(
                          config.max_records,
                          static_cast<std::int64_t>(concurrency * 1000.0 / latency * config.case_seconds)));
  }
  const double slow_ceiling = (kSlowConcurrency - 1) * 1000.0 / kSlowWorkMs;
  // The slow case stops after this many records, before the other partitions run dry.
  const std::int64_t slow_records = std::max<std::int64_t>(
      kSlowOffset * kPartitions * 4,
      std::min<std::int64_t>(static_cast<std::int64_t>(slow_ceiling * config.slow_seconds * 0.75),
                             needed * (kPartitions - 1) / kPartitions * 9 / 10));
  const std::string topic = processor::testing::unique_name("bench-parallel-input");
  processor::testing::create_topic(config.bootstrap, topic, kPartitions);
  const auto produce_start = Clock::now();
  {
    processor::testing::Producer producer(config.bootstrap, {{"linger.ms", "20"}, {"batch.size", "1000000"}});
    std::mt19937 random(14);
    std::uniform_int_distribution<int> keys(0, kKeys - 1);
    char key_text[16];
    for (std::int64_t i = 0; i < needed; ++i) {
      const int k = keys(random);
      std::snprintf(key_text, sizeof key_text, "k%05d", k);
      producer.send(topic, k % kPartitions, key_text, "value-0123456789");
    }
    producer.flush(std::chrono::minutes(5));
  }
  std::cout << "bench_parallel: produced " << needed << " records to " << topic << " in "
            << fmt(bench::seconds_since(produce_start)) << " s" << std::endl;

  struct Row {
    std::string label;
    double ours_rate, peer_rate, ceiling, ours_cpu, peer_cpu, ours_rss, peer_rss;
  };
  std::vector<Row> rows;
  auto cpu_and_memory = [&](const std::string& label, const Medians& m) {
    if (!peer) return;
    const double cpu_ratio = per_million(m, "ours") / per_million(m, "peer");
    const double rss_ratio = m("ours", "peak_rss_bytes") / m("peer", "peak_rss_bytes");
    summary.add(Result{label + ": CPU s per 1M records (vs PC)", fmt(per_million(m, "ours")),
                       fmt(per_million(m, "peer")), fmt(cpu_ratio) + "x"});
    summary.add(Result{label + ": peak RSS MB (vs PC)", fmt(m("ours", "peak_rss_bytes") / 1e6),
                       fmt(m("peer", "peak_rss_bytes") / 1e6), fmt(rss_ratio) + "x"});
  };

  // b) first: its raw loop's rate tells where the broker's fetch limits the cases of a).
  const std::int64_t zero = config.zero_work_records;
  std::vector<Run> zero_runs = {{"ours", 16, 0, zero}, {"raw", 16, 0, zero}};
  if (peer) zero_runs.push_back({"peer", 16, 0, zero});
  const Medians z = repeat(config, topic, "0 ms, concurrency 16,", zero_runs);
  const double raw_rate = z("raw", "records_per_s");
  const double zero_ratio = z("ours", "records_per_s") / raw_rate;
  summary.add(Result{"0 ms work, Key, concurrency 16: records/s (vs raw librdkafka loop)",
                     fmt(z("ours", "records_per_s")), fmt(raw_rate), fmt(zero_ratio) + "x", ">= 0.8x",
                     met(zero_ratio >= 0.8)});
  if (peer) {
    const double ratio = z("ours", "records_per_s") / z("peer", "records_per_s");
    summary.add(Result{"0 ms work, Key, concurrency 16: records/s (vs PC)", fmt(z("ours", "records_per_s")),
                       fmt(z("peer", "records_per_s")), fmt(ratio) + "x", ">= 2x", met(ratio >= 2)});
    summary.add(Result{"0 ms work: PC records/s (vs raw librdkafka loop)", fmt(z("peer", "records_per_s")),
                       fmt(raw_rate), fmt(z("peer", "records_per_s") / raw_rate) + "x"});
  }
  cpu_and_memory("0 ms, concurrency 16", z);
  rows.push_back(Row{"0 ms, concurrency 16", z("ours", "records_per_s"), z("peer", "records_per_s"), raw_rate,
                     per_million(z, "ours"), per_million(z, "peer"), z("ours", "peak_rss_bytes"),
                     z("peer", "peak_rss_bytes")});

  // a) and c)
  std::map<int, double> sleep_ms;
  for (const auto& [concurrency, latency] : config.cases) {
    if (sleep_ms.count(latency) == 0) sleep_ms[latency] = measured_sleep_ms(latency);
  }
  std::string sleeps;
  for (const auto& [latency, measured] : sleep_ms) {
    sleeps += (sleeps.empty() ? "" : ", ") + std::string("sleep_for(") + std::to_string(latency) +
              " ms) takes " + bench::format(measured, 3) + " ms";
  }
  summary.note(sleeps + " here: the true ceilings are concurrency / that");
  for (const auto& [concurrency, latency] : config.cases) {
    const double ceiling = concurrency * 1000.0 / latency;
    const auto records = std::max<std::int64_t>(
        concurrency * 4,
        std::min<std::int64_t>(config.max_records, static_cast<std::int64_t>(ceiling * config.case_seconds)));
    const std::string label = std::to_string(latency) + " ms, concurrency " + std::to_string(concurrency);
    std::vector<Run> runs = {{"ours", concurrency, latency, records}};
    if (peer) runs.push_back({"peer", concurrency, latency, records});
    const Medians m = repeat(config, topic, label + ",", runs);
    const double ours_rate = m("ours", "records_per_s");
    if (peer) {
      const double ratio = ours_rate / m("peer", "records_per_s");
      summary.add(Result{label + ", Key: records/s (vs PC)", fmt(ours_rate), fmt(m("peer", "records_per_s")),
                         fmt(ratio) + "x", ">= 2x", met(ratio >= 2)});
    }
    // The ceiling: concurrency / latency, unless the raw loop fetches less than that.
    const bool broker_bound = raw_rate < ceiling;
    const double bound = std::min(ceiling, raw_rate);
    summary.add(Result{label + ", Key: records/s (vs " + (broker_bound ? "raw loop, below " : "") +
                           "concurrency/latency " + fmt(ceiling) + ")",
                       fmt(ours_rate), fmt(bound), fmt(ours_rate / bound) + "x", ">= 0.9x",
                       met(ours_rate >= 0.9 * bound)});
    cpu_and_memory(label, m);
    rows.push_back(Row{label, ours_rate, m("peer", "records_per_s"), ceiling, per_million(m, "ours"),
                       per_million(m, "peer"), m("ours", "peak_rss_bytes"), m("peer", "peak_rss_bytes")});
  }

  // d) the slow record
  std::vector<Run> slow_runs = {{"ours", kSlowConcurrency, kSlowWorkMs, slow_records, config.slow_seconds}};
  if (peer) slow_runs.push_back({"peer", kSlowConcurrency, kSlowWorkMs, slow_records, config.slow_seconds});
  const std::string slow_label =
      "one record slow for " + std::to_string(config.slow_seconds) + " s, 1 ms, concurrency 16";
  const Medians s = repeat(config, topic, slow_label + ",", slow_runs);
  const double ours_slow = s("ours", "slow_records_per_s");
  if (peer) {
    const double ratio = ours_slow / s("peer", "slow_records_per_s");
    summary.add(Result{slow_label + ": records/s while it is outstanding (vs PC)", fmt(ours_slow),
                       fmt(s("peer", "slow_records_per_s")), fmt(ratio) + "x", ">= 2x", met(ratio >= 2)});
  }
  summary.add(Result{slow_label + ": records/s while it is outstanding (vs (16-1)/1 ms)", fmt(ours_slow),
                     fmt(slow_ceiling), fmt(ours_slow / slow_ceiling) + "x"});
  rows.push_back(Row{slow_label + " (rate while outstanding)", ours_slow, s("peer", "slow_records_per_s"),
                     slow_ceiling, per_million(s, "ours"), per_million(s, "peer"),
                     s("ours", "peak_rss_bytes"), s("peer", "peak_rss_bytes")});
  summary.print(std::cout);

  // The markdown table for bench/README.md.
  std::ostringstream md;
  md << "bench_parallel, " << machine_markdown() << "; medians of " << config.repetitions
     << " runs; ordering Key; ceiling = concurrency / latency (0 ms: the raw librdkafka loop; " << sleeps
     << ")\n\n"
     << "| case | ours rec/s | PC rec/s | ours/PC | ceiling | ours/ceiling | CPU s/1M rec ours | PC | peak "
        "RSS MB ours | PC |\n"
     << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& row : rows) {
    md << "| " << row.label << " | " << fmt(row.ours_rate) << " | " << (peer ? fmt(row.peer_rate) : "-")
       << " | " << (peer ? fmt(row.ours_rate / row.peer_rate) : "-") << " | " << fmt(row.ceiling) << " | "
       << fmt(row.ours_rate / row.ceiling) << " | " << fmt(row.ours_cpu) << " | "
       << (peer ? fmt(row.peer_cpu) : "-") << " | " << fmt(row.ours_rss / 1e6) << " | "
       << (peer ? fmt(row.peer_rss / 1e6) : "-") << " |\n";
  }
  std::cout << "\n" << md.str() << std::endl;
  if (!config.markdown.empty()) std::ofstream(config.markdown) << md.str();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::map<std::string, std::string> options;
    bool smoke = false;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--smoke") {
        smoke = true;
      } else if (arg.rfind("--", 0) == 0 && i + 1 < argc) {
        options[arg.substr(2)] = argv[++i];
      } else {
        throw std::invalid_argument("unexpected argument " + arg);
      }
    }
    if (options.count("child")) return ::bench::parallel::child_main(options);
    set_log_level(LogLevel::Warning);
    Config config;
    const char* bootstrap = std::getenv("KAFKA_BOOTSTRAP");
    if (bootstrap == nullptr || *bootstrap == '\0') throw std::invalid_argument("KAFKA_BOOTSTRAP is not set");
    config.bootstrap = bootstrap;
    config.self = std::filesystem::canonical("/proc/self/exe").string();
    if (const char* peer = std::getenv("PROCESSOR_PARALLEL_PEER")) config.peer = peer;
    if (options.count("peer")) config.peer = options["peer"];
    if (smoke) {
      config.repetitions = 1;
      config.case_seconds = 0.5;
      config.max_records = 20'000;
      config.zero_work_records = 20'000;
      config.slow_seconds = 3;
      config.cases = {{16, 1}, {1000, 10}};
    }
    if (options.count("repetitions")) config.repetitions = std::stoi(options["repetitions"]);
    if (options.count("case-seconds")) config.case_seconds = std::stod(options["case-seconds"]);
    if (options.count("max-records")) config.max_records = std::stoll(options["max-records"]);
    if (options.count("zero-work-records"))
      config.zero_work_records = std::stoll(options["zero-work-records"]);
    if (options.count("slow-seconds")) config.slow_seconds = std::stoi(options["slow-seconds"]);
    if (options.count("markdown")) config.markdown = options["markdown"];
    if (options.count("queued-min-messages")) config.queued_min_messages = options["queued-min-messages"];
    return driver_main(config);
  } catch (const std::exception& error) {
    std::cerr << "bench_parallel: FAILED: " << error.what() << std::endl;
    return 1;
  }
}
