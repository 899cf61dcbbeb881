#include "processor/monitor/app_metrics.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string_view>

#include "processor/detail/mutex.hpp"
#include "processor/error.hpp"

namespace processor::monitor {

namespace {

using processor::detail::Mutex;
using processor::detail::MutexLock;

// Label names the families use themselves.
constexpr std::array<std::string_view, 8> kReservedLabels{"store", "result", "source",    "cause",
                                                          "le",    "topic",  "partition", "action"};

struct Source {
  AppMetricsId id = 0;
  MetricLabels labels;
  // Exactly one is set.
  std::shared_ptr<const kafka::OffsetManager> manager;
  std::shared_ptr<const kafka::KafkaConsumer> consumer;
  std::shared_ptr<const kafka::ParallelConsumer> parallel;
  std::shared_ptr<const streams::StreamProcessor> processor;
};

// The sources of one registry, written by its one collector.
struct Sources {
  Mutex mutex;
  std::vector<std::shared_ptr<const Source>> list PROCESSOR_GUARDED_BY(mutex);
};

// What one source says at one scrape.
struct Reading {
  const Source* source = nullptr;
  std::optional<kafka::OffsetStats> manager;
  std::optional<kafka::ConsumerStats> consumer;  // a ParallelConsumer's too
  std::optional<kafka::ParallelConsumerStats> parallel;
  std::optional<streams::StreamProcessorStats> processor;
};

// The sources of each registry that has any. Weak: the registry's collector owns them, so a
// destroyed registry's entry expires, and a new registry at the same address starts afresh.
Mutex registries_mutex;
std::map<const MetricsRegistry*, std::weak_ptr<Sources>> registries PROCESSOR_GUARDED_BY(registries_mutex);
AppMetricsId next_id PROCESSOR_GUARDED_BY(registries_mutex) = 1;

// Writes samples with a source's labels followed by the family's own.
class SampleWriter {
 public:
  SampleWriter(MetricWriter& writer, const Source& source) : writer_(writer) {
    for (const auto& [name, value] : source.labels) labels_.push_back({name, value});
    base_ = labels_.size();
  }

  void value(std::initializer_list<LabelPair> own, double value, std::string_view suffix = {}) {
    with(own);
    writer_.sample(LabelPairs(labels_), value, suffix);
  }
  void count(std::initializer_list<LabelPair> own, std::uint64_t value) {
    with(own);
    writer_.sample(LabelPairs(labels_), static_cast<std::int64_t>(value));
  }
  void histogram(std::initializer_list<LabelPair> own, const LatencyHistogram& histogram) {
    with(own);
    std::string bound;
    for (const LatencyHistogram::CumulativeBucket& bucket : histogram.cumulative_buckets()) {
      bound.clear();
      append_metric_value(bound, bucket.upper_bound_seconds);
      labels_.push_back({"le", bound});
      writer_.sample(LabelPairs(labels_), static_cast<std::int64_t>(bucket.cumulative_count), "_bucket");
      labels_.pop_back();
    }
    writer_.sample(LabelPairs(labels_), histogram.sum_seconds(), "_sum");
    writer_.sample(LabelPairs(labels_), static_cast<std::int64_t>(histogram.count()), "_count");
  }

 private:
  void with(std::initializer_list<LabelPair> own) {
    labels_.resize(base_);
    labels_.insert(labels_.end(), own.begin(), own.end());
  }

  MetricWriter& writer_;
  std::vector<LabelPair> labels_;
  std::size_t base_ = 0;
};

// Writes family `name` when some reading has `part`, then `write(SampleWriter&, stats)` for each.
template <class Part, class Write>
void write_family(MetricWriter& writer, const std::vector<Reading>& readings,
                  std::optional<Part> Reading::*part, std::string_view name, std::string_view help,
                  MetricType type, Write&& write) {
  const bool any = std::any_of(readings.begin(), readings.end(),
                               [&](const Reading& reading) { return (reading.*part).has_value(); });
  if (!any) return;
  writer.family(name, help, type);
  for (const Reading& reading : readings) {
    if (!(reading.*part)) continue;
    SampleWriter samples(writer, *reading.source);
    write(samples, *(reading.*part));
  }
}

void write_manager_families(MetricWriter& writer, const std::vector<Reading>& readings) {
  using kafka::OffsetStats;
  write_family(writer, readings, &Reading::manager, "processor_commit_latency_seconds",
               "Duration of successful commits of offsets to the offset store.", MetricType::Histogram,
               [](SampleWriter& out, const OffsetStats& stats) {
                 out.histogram({{"store", stats.commits_by_store.front().store}}, stats.commit_latency);
               });
  write_family(writer, readings, &Reading::manager, "processor_commits_total",
               "Commits of offsets, by where they were written and their result.", MetricType::Counter,
               [](SampleWriter& out, const OffsetStats& stats) {
                 for (const kafka::StoreCommits& commits : stats.commits_by_store) {
                   out.count({{"store", commits.store}, {"result", "success"}}, commits.successful);
                   out.count({{"store", commits.store}, {"result", "failure"}}, commits.failed);
                 }
               });
  write_family(
      writer, readings, &Reading::manager, "processor_offsets_committed_total",
      "Partition offsets written by successful commits.", MetricType::Counter,
      [](SampleWriter& out, const OffsetStats& stats) { out.count({}, stats.total_offsets_committed); });
  write_family(writer, readings, &Reading::manager, "processor_last_commit_timestamp_seconds",
               "When the last successful commit finished, in seconds since the Unix epoch.",
               MetricType::Gauge, [](SampleWriter& out, const OffsetStats& stats) {
                 if (!stats.last_commit_time) return;  // unknown: no sample
                 const auto since_epoch = stats.last_commit_time->time_since_epoch();
                 out.value({}, std::chrono::duration<double>(since_epoch).count());
               });
  write_family(writer, readings, &Reading::manager, "processor_checkpoint_duration_seconds",
               "Duration of checkpoints written (positions and operator state in one atomic write).",
               MetricType::Histogram, [](SampleWriter& out, const OffsetStats& stats) {
                 out.histogram({}, stats.checkpoint_duration);
               });
}

void write_restore_family(MetricWriter& writer, const std::vector<Reading>& readings) {
  const bool any = std::any_of(readings.begin(), readings.end(),
                               [](const Reading& reading) { return reading.manager || reading.processor; });
  if (!any) return;
  writer.family(
      "processor_restore_duration_seconds",
      "Duration of restores: of a checkpoint (OffsetManager), of a store partition from its changelog "
      "(StreamProcessor).",
      MetricType::Histogram);
  for (const Reading& reading : readings) {
    SampleWriter out(writer, *reading.source);
    if (reading.manager) out.histogram({{"source", "checkpoint"}}, reading.manager->restore_duration);
    if (reading.processor) out.histogram({{"source", "changelog"}}, reading.processor->restore_duration);
  }
}

void write_record_families(MetricWriter& writer, const std::vector<Reading>& readings) {
  const bool any = std::any_of(readings.begin(), readings.end(),
                               [](const Reading& reading) { return reading.consumer || reading.processor; });
  if (any) {
    writer.family("processor_records_processed_total", "Records handed to the application's handler.",
                  MetricType::Counter);
    for (const Reading& reading : readings) {
      SampleWriter out(writer, *reading.source);
      // A ParallelConsumer's consumer counts the records fetched; its handlers, those processed.
      if (reading.parallel) {
        out.count({}, reading.parallel->processed);
      } else if (reading.consumer) {
        out.count({}, reading.consumer->records);
      }
      if (reading.processor) out.count({}, reading.processor->records);
    }
  }
  using kafka::ConsumerStats;
  write_family(writer, readings, &Reading::consumer, "processor_offset_resets_total",
               "Positions moved by the out-of-range policy, by cause.", MetricType::Counter,
               [](SampleWriter& out, const ConsumerStats& stats) {
                 out.count({{"cause", "no_offset"}}, stats.no_offset_resets);
                 out.count({{"cause", "below_log_start"}}, stats.below_log_start_resets);
                 out.count({{"cause", "above_log_end"}}, stats.above_log_end_resets);
                 out.count({{"cause", "truncated"}}, stats.truncated_resets);
               });
  write_family(writer, readings, &Reading::consumer, "processor_records_skipped_total",
               "Records jumped over by out-of-range resets.", MetricType::Counter,
               [](SampleWriter& out, const ConsumerStats& stats) { out.count({}, stats.records_skipped); });
  write_family(writer, readings, &Reading::processor, "processor_transactions_total",
               "Transactions (or at-least-once commits) of a StreamProcessor, by result.",
               MetricType::Counter, [](SampleWriter& out, const streams::StreamProcessorStats& stats) {
                 out.count({{"result", "committed"}}, stats.commits);
                 out.count({{"result", "aborted"}}, stats.aborts);
               });
}

// The failure policy's figures, of the three consumers alike.
void write_failure_families(MetricWriter& writer, const std::vector<Reading>& readings) {
  const bool any = std::any_of(readings.begin(), readings.end(),
                               [](const Reading& reading) { return reading.consumer || reading.processor; });
  if (!any) return;
  writer.family("processor_record_failures_total",
                "Tries of a record that failed: its handler or record function threw, or Kafka refused its "
                "output for good.",
                MetricType::Counter);
  for (const Reading& reading : readings) {
    SampleWriter out(writer, *reading.source);
    if (reading.parallel) {
      out.count({}, reading.parallel->failed_attempts);
    } else if (reading.consumer) {
      out.count({}, reading.consumer->failed_attempts);
    }
    if (reading.processor) out.count({}, reading.processor->failed_attempts);
  }
  writer.family("processor_failed_records_total",
                "Records the failure policy passed over after their last try, by input partition and action "
                "(skipped, dead_lettered).",
                MetricType::Counter);
  auto write = [](SampleWriter& out,
                  const std::map<kafka::TopicPartition, kafka::FailedRecordCounts>& counts) {
    for (const auto& [tp, counted] : counts) {
      const std::string partition = std::to_string(tp.partition);
      out.count({{"topic", tp.topic}, {"partition", partition}, {"action", "skipped"}}, counted.skipped);
      out.count({{"topic", tp.topic}, {"partition", partition}, {"action", "dead_lettered"}},
                counted.dead_lettered);
    }
  };
  for (const Reading& reading : readings) {
    SampleWriter out(writer, *reading.source);
    if (reading.consumer) write(out, reading.consumer->failed_records);
    if (reading.processor) write(out, reading.processor->failed_records);
  }
}

void write_parallel_families(MetricWriter& writer, const std::vector<Reading>& readings) {
  using kafka::ParallelConsumerStats;
  using Field = std::size_t ParallelConsumerStats::*;
  struct Gauge {
    std::string_view name;
    std::string_view help;
    Field field;
  };
  static constexpr Gauge kGauges[] = {
      {"processor_parallel_in_flight_records", "Records whose handler runs now.",
       &ParallelConsumerStats::in_flight},
      {"processor_parallel_buffered_records", "Records fetched and not finished, those in flight included.",
       &ParallelConsumerStats::buffered_records},
      {"processor_parallel_buffered_bytes", "Bytes of the keys and values of the buffered records.",
       &ParallelConsumerStats::buffered_bytes},
      {"processor_parallel_buffered_bytes_peak", "The most bytes buffered at once.",
       &ParallelConsumerStats::peak_buffered_bytes},
  };
  for (const Gauge& gauge : kGauges) {
    write_family(writer, readings, &Reading::parallel, gauge.name, gauge.help, MetricType::Gauge,
                 [&](SampleWriter& out, const ParallelConsumerStats& stats) {
                   out.count({}, static_cast<std::uint64_t>(stats.*gauge.field));
                 });
  }
  struct Counter {
    std::string_view name;
    std::string_view help;
    std::uint64_t ParallelConsumerStats::*field;
  };
  static constexpr Counter kCounters[] = {
      {"processor_parallel_handler_failures_total", "Handler calls that threw (each try counts).",
       &ParallelConsumerStats::failed_attempts},
      {"processor_parallel_dead_lettered_total",
       "Records handed to on_failure after their last try, and accepted.",
       &ParallelConsumerStats::dead_lettered},
      {"processor_parallel_skipped_after_restart_total",
       "Records skipped because a previous owner of their partition acknowledged them.",
       &ParallelConsumerStats::skipped_after_restart},
      {"processor_parallel_abandoned_total", "Records dropped by a revoke or a loss, not committed.",
       &ParallelConsumerStats::abandoned_on_revoke},
      {"processor_parallel_late_acks_ignored_total",
       "Completions after their partition was revoked, not committed.",
       &ParallelConsumerStats::late_acks_ignored},
      {"processor_parallel_partition_pauses_total", "Partitions paused for back-pressure.",
       &ParallelConsumerStats::partition_pauses},
      {"processor_parallel_executor_rejections_total", "Tasks the executor refused.",
       &ParallelConsumerStats::executor_rejections},
      {"processor_parallel_metadata_ignored_total",
       "Restart metadata ignored: written by another tool, or garbage (its records are processed again).",
       &ParallelConsumerStats::metadata_warnings},
  };
  for (const Counter& counter : kCounters) {
    write_family(
        writer, readings, &Reading::parallel, counter.name, counter.help, MetricType::Counter,
        [&](SampleWriter& out, const ParallelConsumerStats& stats) { out.count({}, stats.*counter.field); });
  }
}

void collect(Sources& sources, MetricWriter& writer) {
  std::vector<std::shared_ptr<const Source>> list;
  {
    MutexLock lock(sources.mutex);
    list = sources.list;
  }
  std::vector<Reading> readings(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    readings[i].source = list[i].get();
    if (list[i]->manager) readings[i].manager = list[i]->manager->stats();
    if (list[i]->consumer) readings[i].consumer = list[i]->consumer->stats();
    if (list[i]->parallel) {
      readings[i].parallel = list[i]->parallel->stats();
      readings[i].consumer = readings[i].parallel->consumer;
    }
    if (list[i]->processor) readings[i].processor = list[i]->processor->stats();
  }
  write_manager_families(writer, readings);
  write_restore_family(writer, readings);
  write_record_families(writer, readings);
  write_failure_families(writer, readings);
  write_parallel_families(writer, readings);
}

void check_labels(const MetricLabels& labels) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string& name = labels[i].first;
    if (!is_valid_label_name(name))
      throw StateError(ErrorKind::InvalidArgument, "invalid label name \"" + name + "\"");
    if (std::find(kReservedLabels.begin(), kReservedLabels.end(), name) != kReservedLabels.end()) {
      throw StateError(ErrorKind::InvalidArgument,
                       "label name \"" + name + "\" is used by the processor's metrics");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (labels[j].first == name)
        throw StateError(ErrorKind::InvalidArgument, "label name \"" + name + "\" repeats");
    }
  }
}

AppMetricsId add_source(MetricsRegistry& registry, Source source) {
  check_labels(source.labels);
  std::shared_ptr<Sources> sources;
  bool new_collector = false;
  AppMetricsId id = 0;
  {
    MutexLock lock(registries_mutex);
    std::erase_if(registries, [](const auto& entry) { return entry.second.expired(); });
    id = next_id++;
    source.id = id;
    sources = registries[&registry].lock();
    if (!sources) {
      sources = std::make_shared<Sources>();
      registries[&registry] = sources;
      new_collector = true;
    }
    MutexLock sources_lock(sources->mutex);
    sources->list.push_back(std::make_shared<const Source>(std::move(source)));
  }
  // Outside registries_mutex: the registry's lock is never taken under ours.
  if (new_collector) registry.add_collector([sources](MetricWriter& writer) { collect(*sources, writer); });
  return id;
}

// Adds `object` as the source's member `slot`; refuses a null one, naming its type.
template <class T>
AppMetricsId add_object(MetricsRegistry& registry, std::shared_ptr<const T> Source::*slot,
                        std::shared_ptr<const T> object, MetricLabels labels, const char* what) {
  if (!object)
    throw StateError(ErrorKind::InvalidArgument, std::string("cannot add metrics of a null ") + what);
  Source source;
  source.labels = std::move(labels);
  source.*slot = std::move(object);
  return add_source(registry, std::move(source));
}

}  // namespace

AppMetricsId add_offset_manager_metrics(MetricsRegistry& registry,
                                        std::shared_ptr<const kafka::OffsetManager> manager,
                                        MetricLabels labels) {
  return add_object(registry, &Source::manager, std::move(manager), std::move(labels), "OffsetManager");
}

AppMetricsId add_kafka_consumer_metrics(MetricsRegistry& registry,
                                        std::shared_ptr<const kafka::KafkaConsumer> consumer,
                                        MetricLabels labels) {
  return add_object(registry, &Source::consumer, std::move(consumer), std::move(labels), "KafkaConsumer");
}

AppMetricsId add_parallel_consumer_metrics(MetricsRegistry& registry,
                                           std::shared_ptr<const kafka::ParallelConsumer> consumer,
                                           MetricLabels labels) {
  return add_object(registry, &Source::parallel, std::move(consumer), std::move(labels), "ParallelConsumer");
}

AppMetricsId add_stream_processor_metrics(MetricsRegistry& registry,
                                          std::shared_ptr<const streams::StreamProcessor> processor,
                                          MetricLabels labels) {
  return add_object(registry, &Source::processor, std::move(processor), std::move(labels), "StreamProcessor");
}

void remove_app_metrics(MetricsRegistry& registry, AppMetricsId id) {
  std::shared_ptr<Sources> sources;
  {
    MutexLock lock(registries_mutex);
    const auto found = registries.find(&registry);
    if (found == registries.end()) return;
    sources = found->second.lock();
  }
  if (!sources) return;
  MutexLock lock(sources->mutex);
  std::erase_if(sources->list,
                [id](const std::shared_ptr<const Source>& source) { return source->id == id; });
}

}  // namespace processor::monitor
