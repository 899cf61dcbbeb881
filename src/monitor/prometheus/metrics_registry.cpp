#include <algorithm>
#include <cmath>
#include <set>
#include <type_traits>
#include <utility>

#include "processor/error.hpp"
#include "processor/monitor/metrics.hpp"

namespace processor::monitor {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ",") + name;
  return "[" + out + "]";
}

void check_names(MetricType type, const std::string& name, const std::vector<std::string>& label_names) {
  if (!is_valid_metric_name(name)) {
    throw StateError(ErrorKind::InvalidArgument, "invalid metric name \"" + name + "\"");
  }
  std::set<std::string> seen;
  for (const auto& label : label_names) {
    if (!is_valid_label_name(label)) {
      throw StateError(ErrorKind::InvalidArgument,
                       "invalid label name \"" + label + "\" of metric \"" + name + "\"");
    }
    if (type == MetricType::Histogram && label == "le") {
      throw StateError(ErrorKind::InvalidArgument,
                       "histogram \"" + name + "\" cannot have a label named \"le\"");
    }
    if (!seen.insert(label).second) {
      throw StateError(ErrorKind::InvalidArgument,
                       "label \"" + label + "\" repeats in metric \"" + name + "\"");
    }
  }
}

void check_buckets(const std::string& name, const std::vector<double>& upper_bounds) {
  for (std::size_t i = 0; i < upper_bounds.size(); ++i) {
    const bool bad = !std::isfinite(upper_bounds[i]) || (i > 0 && upper_bounds[i] <= upper_bounds[i - 1]);
    if (bad) {
      std::string text;
      append_metric_value(text, upper_bounds[i]);
      throw StateError(ErrorKind::InvalidArgument, "bucket " + text + " of histogram \"" + name +
                                                       "\": buckets must be finite and strictly increasing");
    }
  }
}

// Atomically adds to a double (compare-exchange: portable where fetch_add on double is not).
void atomic_add(std::atomic<double>& target, double amount) noexcept {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + amount, std::memory_order_relaxed)) {
  }
}

std::vector<LabelPair> label_pairs(const std::vector<std::string>& names,
                                   const std::vector<std::string>& values) {
  std::vector<LabelPair> pairs;
  pairs.reserve(names.size() + 1);
  for (std::size_t i = 0; i < names.size(); ++i) pairs.push_back({names[i], values[i]});
  return pairs;
}

void write_child(MetricWriter& writer, const std::vector<LabelPair>& labels, const Counter& counter) {
  writer.sample(labels, counter.value());
}

void write_child(MetricWriter& writer, const std::vector<LabelPair>& labels, const Gauge& gauge) {
  writer.sample(labels, gauge.value());
}

void write_child(MetricWriter& writer, std::vector<LabelPair> labels, const Histogram& histogram) {
  const Histogram::Snapshot snapshot = histogram.snapshot();
  std::string le;
  labels.push_back({"le", {}});
  for (std::size_t i = 0; i <= snapshot.upper_bounds.size(); ++i) {
    le.clear();
    if (i < snapshot.upper_bounds.size()) {
      append_metric_value(le, snapshot.upper_bounds[i]);
    } else {
      le = "+Inf";
    }
    labels.back().value = le;
    writer.sample(labels, static_cast<std::int64_t>(snapshot.cumulative[i]), "_bucket");
  }
  labels.pop_back();
  writer.sample(labels, snapshot.sum, "_sum");
  writer.sample(labels, static_cast<std::int64_t>(snapshot.count), "_count");
}

}  // namespace

void Counter::inc(double amount) {
  if (!(amount >= 0)) {
    std::string text;
    append_metric_value(text, amount);
    throw StateError(ErrorKind::InvalidArgument, "counter increment " + text + ": must be zero or more");
  }
  atomic_add(value_, amount);
}

void Gauge::inc(double amount) noexcept { atomic_add(value_, amount); }

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)), counts_(upper_bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  if (std::isnan(value)) return;
  // The first bucket whose bound is >= value; +Inf (the last) when none is.
  const auto bucket = static_cast<std::size_t>(
      std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) - upper_bounds_.begin());
  detail::MutexLock lock(mutex_);
  ++counts_[bucket];
  sum_ += value;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot snapshot;
  snapshot.upper_bounds = upper_bounds_;
  {
    detail::MutexLock lock(mutex_);
    snapshot.cumulative = counts_;
    snapshot.sum = sum_;
  }
  std::uint64_t running = 0;
  for (auto& count : snapshot.cumulative) {
    running += count;
    count = running;
  }
  snapshot.count = running;
  return snapshot;
}

template <class Metric>
MetricFamily<Metric>::MetricFamily(std::string name, std::string help, std::vector<std::string> label_names,
                                   std::vector<double> upper_bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      upper_bounds_(std::move(upper_bounds)) {}

template <class Metric>
Metric& MetricFamily<Metric>::with(const std::vector<std::string>& label_values) {
  if (label_values.size() != label_names_.size()) {
    throw StateError(ErrorKind::InvalidArgument,
                     "metric \"" + name_ + "\" takes " + std::to_string(label_names_.size()) +
                         " label values " + joined(label_names_) + ", given " + joined(label_values));
  }
  detail::MutexLock lock(mutex_);
  auto& child = children_[label_values];
  if (!child) {
    if constexpr (std::is_same_v<Metric, Histogram>) {
      child = std::make_unique<Histogram>(upper_bounds_);
    } else {
      child = std::make_unique<Metric>();
    }
  }
  return *child;
}

template <class Metric>
void MetricFamily<Metric>::write(MetricWriter& writer) const {
  detail::MutexLock lock(mutex_);
  for (const auto& [values, child] : children_)
    write_child(writer, label_pairs(label_names_, values), *child);
}

template class MetricFamily<Counter>;
template class MetricFamily<Gauge>;
template class MetricFamily<Histogram>;

struct MetricsRegistry::Entry {
  MetricType type;
  std::string name;
  std::string help;
  std::vector<std::string> label_names;
  std::vector<double> upper_bounds;
  std::unique_ptr<CounterFamily> counter;
  std::unique_ptr<GaugeFamily> gauge;
  std::unique_ptr<HistogramFamily> histogram;

  void write(MetricWriter& writer) const {
    writer.family(name, help, type);
    if (counter) counter->write(writer);
    if (gauge) gauge->write(writer);
    if (histogram) histogram->write(writer);
  }
};

MetricsRegistry::Entry& MetricsRegistry::register_entry(MetricType type, const std::string& name,
                                                        const std::string& help,
                                                        const std::vector<std::string>& label_names,
                                                        const std::vector<double>& upper_bounds) {
  check_names(type, name, label_names);
  if (type == MetricType::Histogram) check_buckets(name, upper_bounds);
  detail::MutexLock lock(mutex_);
  for (const auto& entry : families_) {
    if (entry->name != name) continue;
    if (entry->type != type || entry->label_names != label_names || entry->upper_bounds != upper_bounds) {
      throw StateError(ErrorKind::InvalidArgument, "metric \"" + name + "\" is already registered as a " +
                                                       std::string(metric_type_name(entry->type)) +
                                                       " with labels " + joined(entry->label_names));
    }
    return *entry;
  }
  auto entry = std::make_shared<Entry>();
  entry->type = type;
  entry->name = name;
  entry->help = help;
  entry->label_names = label_names;
  entry->upper_bounds = upper_bounds;
  switch (type) {
    case MetricType::Counter:
      entry->counter.reset(new CounterFamily(name, help, label_names));
      break;
    case MetricType::Gauge:
      entry->gauge.reset(new GaugeFamily(name, help, label_names));
      break;
    case MetricType::Histogram:
      entry->histogram.reset(new HistogramFamily(name, help, label_names, upper_bounds));
      break;
  }
  families_.push_back(entry);
  return *entry;
}

CounterFamily& MetricsRegistry::counter(const std::string& name, const std::string& help,
                                        const std::vector<std::string>& label_names) {
  return *register_entry(MetricType::Counter, name, help, label_names, {}).counter;
}

GaugeFamily& MetricsRegistry::gauge(const std::string& name, const std::string& help,
                                    const std::vector<std::string>& label_names) {
  return *register_entry(MetricType::Gauge, name, help, label_names, {}).gauge;
}

HistogramFamily& MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                            const std::vector<double>& upper_bounds,
                                            const std::vector<std::string>& label_names) {
  return *register_entry(MetricType::Histogram, name, help, label_names, upper_bounds).histogram;
}

CollectorId MetricsRegistry::add_collector(Collector collector) {
  if (!collector) throw StateError(ErrorKind::InvalidArgument, "empty metrics collector");
  detail::MutexLock lock(mutex_);
  const CollectorId id = next_collector_++;
  collectors_.emplace(id, std::make_shared<const Collector>(std::move(collector)));
  return id;
}

void MetricsRegistry::remove_collector(CollectorId id) {
  detail::MutexLock lock(mutex_);
  collectors_.erase(id);
}

std::string MetricsRegistry::scrape() const {
  std::string out;
  scrape(out);
  return out;
}

void MetricsRegistry::scrape(std::string& out) const {
  // Copies of the lists, so that no registry lock is held while families and collectors write
  // (a collector may register metrics or take its own locks).
  std::vector<std::shared_ptr<Entry>> families;
  std::vector<std::shared_ptr<const Collector>> collectors;
  {
    detail::MutexLock lock(mutex_);
    families = families_;
    for (const auto& [id, collector] : collectors_) collectors.push_back(collector);
  }
  // The last scrape's size, so that a large one (10^5 series: ~100 MB) is not grown by doubling.
  out.reserve(out.size() + last_scrape_bytes_.load(std::memory_order_relaxed));
  const std::size_t start = out.size();
  MetricWriter writer(out);
  for (const auto& entry : families) entry->write(writer);
  for (const auto& collector : collectors) (*collector)(writer);
  last_scrape_bytes_.store(out.size() - start, std::memory_order_relaxed);
}

}  // namespace processor::monitor
