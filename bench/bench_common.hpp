#pragma once
// Shared support of the benchmark binaries: a console reporter that also keeps every result, so
// that each binary can print, after Google Benchmark's table, a summary of medians and ratios
// computed in the same run; and the machine-readable RESULT lines that scripts/bench.sh collects:
//
//   RESULT|<measure>|<ours>|<anchor>|<ratio>|<target>|<met: yes, NO or ->
//
// Medians: with --benchmark_repetitions=N (N > 1) Google Benchmark's median aggregate; with one
// repetition, the median of the runs seen (usually the single run).

#include <benchmark/benchmark.h>
#include <librdkafka/rdkafka.h>
#include <rocksdb/version.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace bench {

inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

inline double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

inline double seconds_per_unit(benchmark::TimeUnit unit) {
  switch (unit) {
    case benchmark::kNanosecond:
      return 1e-9;
    case benchmark::kMicrosecond:
      return 1e-6;
    case benchmark::kMillisecond:
      return 1e-3;
    default:
      return 1.0;
  }
}

// "BM_X/1000/real_time/threads:2" -> "BM_X/1000/threads:2": drops the parts that only say how
// it was timed or repeated, so that lookups do not depend on them.
inline std::string normalized_name(const std::string& name) {
  std::string out;
  std::stringstream parts(name);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part == "real_time" || part == "manual_time" || part.rfind("iterations:", 0) == 0 ||
        part.rfind("repeats:", 0) == 0 || part.rfind("min_time:", 0) == 0) {
      continue;
    }
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

struct Measurements {
  std::vector<double> real_s, cpu_s;                    // per iteration, per run
  std::map<std::string, std::vector<double>> counters;  // per run
  bool has_median = false;
  double median_real_s = 0, median_cpu_s = 0;
  std::map<std::string, double> median_counters;
  std::int64_t threads = 1;
};

// The console table as usual, plus every result kept for the summary.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  explicit CollectingReporter(bool color) : ConsoleReporter(color ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const std::string name = normalized_name(run.run_name.str());
      if (run.error_occurred) {
        errors_.push_back(name + ": " + run.error_message);
        continue;
      }
      Measurements& m = results_[name];
      m.threads = run.threads;
      const double unit = seconds_per_unit(run.time_unit);
      if (run.run_type == Run::RT_Aggregate) {
        if (run.aggregate_name != "median") continue;
        m.has_median = true;
        m.median_real_s = run.GetAdjustedRealTime() * unit;
        m.median_cpu_s = run.GetAdjustedCPUTime() * unit;
        for (const auto& [counter, value] : run.counters) m.median_counters[counter] = value.value;
      } else {
        m.real_s.push_back(run.GetAdjustedRealTime() * unit);
        m.cpu_s.push_back(run.GetAdjustedCPUTime() * unit);
        for (const auto& [counter, value] : run.counters) m.counters[counter].push_back(value.value);
      }
    }
  }

  const Measurements* find(const std::string& name) const {
    const auto it = results_.find(name);
    return it == results_.end() ? nullptr : &it->second;
  }
  // Median real (wall or manual) time per iteration, in seconds.
  std::optional<double> real(const std::string& name) const {
    const Measurements* m = find(name);
    if (m == nullptr) return std::nullopt;
    return m->has_median ? m->median_real_s : median(m->real_s);
  }
  // Median CPU time per iteration, in seconds.
  std::optional<double> cpu(const std::string& name) const {
    const Measurements* m = find(name);
    if (m == nullptr) return std::nullopt;
    return m->has_median ? m->median_cpu_s : median(m->cpu_s);
  }
  std::optional<double> counter(const std::string& name, const std::string& counter_name) const {
    const Measurements* m = find(name);
    if (m == nullptr) return std::nullopt;
    if (m->has_median) {
      const auto it = m->median_counters.find(counter_name);
      if (it != m->median_counters.end()) return it->second;
    }
    const auto it = m->counters.find(counter_name);
    if (it == m->counters.end()) return std::nullopt;
    return median(it->second);
  }
  const std::vector<std::string>& errors() const { return errors_; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, m] : results_) out.push_back(name);
    return out;
  }

 private:
  std::map<std::string, Measurements> results_;
  std::vector<std::string> errors_;
};

inline std::string format(double value, int precision = 2) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", precision, value);
  return text;
}

// Chooses a precision that shows about three significant digits.
inline std::string fmt(double value) {
  const double magnitude = value < 0 ? -value : value;
  if (magnitude >= 100) return format(value, 0);
  if (magnitude >= 10) return format(value, 1);
  if (magnitude >= 1) return format(value, 2);
  return format(value, 3);
}

// One summary line, printed readable and as a RESULT line.
struct Result {
  std::string measure;
  std::string ours;
  std::string anchor = "-";
  std::string ratio = "-";
  std::string target = "-";
  std::string met = "-";  // "yes", "NO" or "-" (no target)
};

class Summary {
 public:
  explicit Summary(std::string binary) : binary_(std::move(binary)) {}
  void add(Result result) { results_.push_back(std::move(result)); }
  void note(std::string text) { notes_.push_back(std::move(text)); }
  // A measure that could not be computed (a benchmark filtered out or failed).
  void missing(const std::string& measure) { add(Result{measure, "n/a", "-", "-", "-", "-"}); }

  void print(std::ostream& out) const {
    std::size_t widths[6] = {7, 13, 15, 5, 6, 4};
    for (const auto& r : results_) {
      widths[0] = std::max(widths[0], r.measure.size());
      widths[1] = std::max(widths[1], r.ours.size());
      widths[2] = std::max(widths[2], r.anchor.size());
      widths[3] = std::max(widths[3], r.ratio.size());
      widths[4] = std::max(widths[4], r.target.size());
    }
    auto cell = [](const std::string& text, std::size_t width) {
      return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
    };
    out << "\n==== " << binary_ << " summary: medians and ratios from this run ====\n";
    out << cell("measure", widths[0]) << " | " << cell("ours (median)", widths[1]) << " | "
        << cell("anchor (median)", widths[2]) << " | " << cell("ratio", widths[3]) << " | "
        << cell("target", widths[4]) << " | met?\n";
    for (const auto& r : results_) {
      out << cell(r.measure, widths[0]) << " | " << cell(r.ours, widths[1]) << " | "
          << cell(r.anchor, widths[2]) << " | " << cell(r.ratio, widths[3]) << " | "
          << cell(r.target, widths[4]) << " | " << r.met << "\n";
    }
    for (const auto& note : notes_) out << "note: " << note << "\n";
    out << "\n";
    for (const auto& r : results_) {
      out << "RESULT|" << r.measure << "|" << r.ours << "|" << r.anchor << "|" << r.ratio << "|" << r.target
          << "|" << r.met << "\n";
    }
    out.flush();
  }

 private:
  std::string binary_;
  std::vector<Result> results_;
  std::vector<std::string> notes_;
};

inline std::string met(bool ok) { return ok ? "yes" : "NO"; }

inline std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

inline std::string machine_line() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  std::ostringstream out;
  out << "machine: " << host << ", " << std::thread::hardware_concurrency() << " hardware threads, "
      << cpu_model() << "; date: " << date << "; librdkafka " << rd_kafka_version_str() << ", RocksDB "
      << ROCKSDB_MAJOR << "." << ROCKSDB_MINOR << "." << ROCKSDB_PATCH << ", Google Benchmark 1.7 (Debian)"
#ifdef NDEBUG
      << ", NDEBUG"
#endif
      ;
  return out.str();
}

// A fresh directory under $TMPDIR (or /tmp), removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                          "/processor-bench-" + name + "-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = buffer.data();
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs the registered benchmarks with the collecting reporter; returns the process exit code:
// non-zero when a benchmark reported an error (never because a target was missed).
template <class SummaryFn>
int run_main(int argc, char** argv, const char* binary, SummaryFn&& summarize) {
  std::cout << binary << ": " << machine_line() << std::endl;
  // Google Benchmark applies --benchmark_color only to its own reporter: decide it here.
  bool color = isatty(STDOUT_FILENO) != 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.rfind("--benchmark_color=", 0) == 0) {
      const std::string_view value = arg.substr(std::string_view("--benchmark_color=").size());
      color = value == "true" || value == "yes" || value == "1" ||
              (value == "auto" && isatty(STDOUT_FILENO) != 0);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  CollectingReporter reporter(color);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  Summary summary(binary);
  int code = 0;
  try {
    summarize(reporter, summary);
  } catch (const std::exception& error) {
    std::cerr << binary << ": summary failed: " << error.what() << "\n";
    code = 1;
  }
  summary.print(std::cout);
  for (const auto& error : reporter.errors()) {
    std::cerr << binary << ": FAILED " << error << "\n";
    code = 1;
  }
  benchmark::Shutdown();
  return code;
}

}  // namespace bench
