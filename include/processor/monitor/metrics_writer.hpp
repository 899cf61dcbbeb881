#pragma once
// processor::monitor::MetricWriter: writes metric families in the Prometheus text exposition
// format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/), for the
// MetricsRegistry and for collectors, which write straight into a scrape.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

namespace processor::monitor {

enum class MetricType { Counter, Gauge, Histogram };
std::string_view metric_type_name(MetricType type);  // "counter", "gauge", "histogram"

// One label of a sample. The views must outlive the call that takes them.
struct LabelPair {
  std::string_view name;
  std::string_view value;
};
using LabelPairs = std::span<const LabelPair>;

// True for a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) and label name ([a-zA-Z_][a-zA-Z0-9_]*,
// not starting with "__", which Prometheus reserves).
bool is_valid_metric_name(std::string_view name) noexcept;
bool is_valid_label_name(std::string_view name) noexcept;

// Appends `value` as Prometheus parses it: whole numbers below 2^53 as integers ("1700000000"),
// others as the shortest text that reads back as the same double ("0.25", "1e+21"), "+Inf"/"-Inf"
// for the infinities, "NaN" for NaN.
void append_metric_value(std::string& out, double value);

// MetricWriter appends to one string: family() writes the "# HELP" and "# TYPE" lines, the
// sample() calls after it write that family's samples. A family that is never given a sample is
// still announced (a valid, empty family). The label values are escaped (\\, \", \n), as is the
// HELP text (\\, \n).
//
// Unknown values have no sample at all: the std::optional overloads and a NaN write nothing,
// so that Prometheus sees the series as absent rather than as NaN or a sentinel -1.
//
// Not thread-safe: one writer per scrape.
class MetricWriter {
 public:
  explicit MetricWriter(std::string& out) : out_(out) {}

  // Starts the family `name`.
  // Throws StateError(InvalidArgument) when `name` is not a valid metric name, or when a family of
  // that name was already written by this writer (Prometheus rejects the whole scrape then).
  void family(std::string_view name, std::string_view help, MetricType type);

  // A sample of the current family. `suffix` is appended to the family's name ("_bucket", "_sum",
  // "_count" of a histogram, or "" for the family's own name).
  // REQUIRES: family() was called.
  // Throws StateError(InvalidArgument) when a label name is invalid (nothing is written).
  void sample(LabelPairs labels, double value, std::string_view suffix = {});
  void sample(std::initializer_list<LabelPair> labels, double value, std::string_view suffix = {}) {
    sample(LabelPairs(labels.begin(), labels.size()), value, suffix);
  }
  // Exact for every int64 (a double is not above 2^53).
  void sample(LabelPairs labels, std::int64_t value, std::string_view suffix = {});
  void sample(std::initializer_list<LabelPair> labels, std::int64_t value, std::string_view suffix = {}) {
    sample(LabelPairs(labels.begin(), labels.size()), value, suffix);
  }
  // Nothing is written for nullopt: the series is absent.
  template <class T>
  void sample(std::initializer_list<LabelPair> labels, const std::optional<T>& value,
              std::string_view suffix = {}) {
    if (value) sample(labels, *value, suffix);
  }

  std::string& out() noexcept { return out_; }

 private:
  void begin_sample(LabelPairs labels, std::string_view suffix);

  std::string& out_;
  std::string family_;
  std::unordered_set<std::string> written_;
};

}  // namespace processor::monitor
