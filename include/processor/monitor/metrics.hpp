#pragma once
// processor::monitor::MetricsRegistry: counters, gauges and histograms with labels, plus
// collectors run at scrape time, exposed in the Prometheus text format 0.0.4 (metrics_writer.hpp).
// The MetricsServer (metrics_server.hpp) serves a registry at /metrics.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "processor/detail/mutex.hpp"
#include "processor/detail/thread_annotations.hpp"
#include "processor/monitor/metrics_writer.hpp"

namespace processor::monitor {

// A value that only goes up (events, seconds spent). Safe for concurrent use; inc() is lock-free.
class Counter {
 public:
  // Throws StateError(InvalidArgument) when `amount` is negative or NaN (the counter is unchanged).
  void inc(double amount = 1.0);
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};  // relaxed: a scrape needs no order with other memory
};

// A value that goes up and down. Set it to NaN to say "unknown": a NaN gauge has no sample.
// Safe for concurrent use; lock-free.
class Gauge {
 public:
  void set(double value) noexcept { value_.store(value, std::memory_order_relaxed); }
  void inc(double amount = 1.0) noexcept;
  void dec(double amount = 1.0) noexcept { inc(-amount); }
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// Observations counted into buckets with upper bounds (le), plus their sum and count.
// Safe for concurrent use; observe() takes a short per-histogram lock, so that a scrape sees
// buckets, sum and count of the same set of observations.
class Histogram {
 public:
  // REQUIRES: `upper_bounds` sorted, finite, distinct (MetricsRegistry::histogram checks it).
  explicit Histogram(std::vector<double> upper_bounds);

  // NaN observations are ignored (they would poison the sum).
  void observe(double value);

  struct Snapshot {
    std::vector<double> upper_bounds;       // without +Inf
    std::vector<std::uint64_t> cumulative;  // per bound, then one more for +Inf (== count)
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  const std::vector<double> upper_bounds_;
  mutable detail::Mutex mutex_;
  std::vector<std::uint64_t> counts_ PROCESSOR_GUARDED_BY(mutex_);  // per bucket, +Inf last
  double sum_ PROCESSOR_GUARDED_BY(mutex_) = 0;
};

// All series of one metric name: one child per combination of label values, created on first use
// and living as long as the registry (references stay valid).
// Safe for concurrent use.
template <class Metric>
class MetricFamily {
 public:
  // The child with these label values, in the order of the family's label names.
  // Throws StateError(InvalidArgument) when the count of values differs from the label names'.
  Metric& with(const std::vector<std::string>& label_values);
  Metric& with() { return with(std::vector<std::string>{}); }

  const std::string& name() const noexcept { return name_; }
  const std::vector<std::string>& label_names() const noexcept { return label_names_; }

 private:
  friend class MetricsRegistry;
  MetricFamily(std::string name, std::string help, std::vector<std::string> label_names,
               std::vector<double> upper_bounds = {});
  void write(MetricWriter& writer) const;

  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::vector<double> upper_bounds_;  // histograms only
  mutable detail::Mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> children_ PROCESSOR_GUARDED_BY(mutex_);
};
using CounterFamily = MetricFamily<Counter>;
using GaugeFamily = MetricFamily<Gauge>;
using HistogramFamily = MetricFamily<Histogram>;

// A callback run at each scrape, after the registry's own families: it writes families of its own
// (e.g. "read my statistics now") through the writer. It runs on the scraping thread, while no
// lock of the registry is held; an exception from it fails that scrape (scrape() rethrows).
using Collector = std::function<void(MetricWriter&)>;
using CollectorId = std::uint64_t;

// MetricsRegistry owns metric families and collectors, and renders them all for a scrape.
// Families are written in the order they were registered, then the collectors' in theirs; the
// series of a family in the order of their label values.
//
// Safe for concurrent use by multiple threads: registration, updates and scrapes may overlap.
// Lock order: the registry's mutex, then a family's; never the other way.
class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // Registers a family, or returns the one of that name when it has the same type, label names
  // (and buckets).
  // Throws StateError(InvalidArgument) when `name` or a label name is invalid, when a label name
  // repeats or is "le" for a histogram, when buckets are not sorted, finite and distinct, or when
  // `name` is taken by a family of another type, labels or buckets.
  CounterFamily& counter(const std::string& name, const std::string& help,
                         const std::vector<std::string>& label_names = {});
  GaugeFamily& gauge(const std::string& name, const std::string& help,
                     const std::vector<std::string>& label_names = {});
  HistogramFamily& histogram(const std::string& name, const std::string& help,
                             const std::vector<double>& upper_bounds,
                             const std::vector<std::string>& label_names = {});

  // Adds a collector; returns the id that removes it. Throws StateError(InvalidArgument) when
  // `collector` is empty.
  CollectorId add_collector(Collector collector);
  // Removes a collector; a scrape running it concurrently finishes with it. Unknown ids are ignored.
  void remove_collector(CollectorId id);

  // The text exposition of every family and collector.
  // Throws StateError(InvalidArgument) when two families share a name (a collector writing a
  // registered name), or what a collector throws.
  std::string scrape() const;
  void scrape(std::string& out) const;

 private:
  struct Entry;
  Entry& register_entry(MetricType type, const std::string& name, const std::string& help,
                        const std::vector<std::string>& label_names, const std::vector<double>& upper_bounds);

  mutable detail::Mutex mutex_;
  std::vector<std::shared_ptr<Entry>> families_ PROCESSOR_GUARDED_BY(mutex_);
  std::map<CollectorId, std::shared_ptr<const Collector>> collectors_ PROCESSOR_GUARDED_BY(mutex_);
  CollectorId next_collector_ PROCESSOR_GUARDED_BY(mutex_) = 1;
  // Relaxed: only a size hint for the next scrape's reserve().
  mutable std::atomic<std::size_t> last_scrape_bytes_{0};
};

}  // namespace processor::monitor
