#include "processor/monitor/lag_metrics.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <tuple>
#include <utility>
#include <vector>

namespace processor::monitor {

namespace {

constexpr const char* kStatusCodes = "0 OK, 1 WARN, 2 STALL, 3 STOP, 4 REWIND, 5 ERR";

std::string_view simple_label(const GroupLag& group) { return group.simple ? "true" : "false"; }

// The group_type label: "classic", "consumer", "share", or "unknown" before the first describe.
std::string_view type_label(const GroupLag& group) {
  if (group.type == "Classic") return "classic";
  if (group.type == "Consumer") return "consumer";
  if (group.type == "Share") return "share";
  return "unknown";
}

// A partition number as text, on the stack.
class PartitionText {
 public:
  explicit PartitionText(std::int32_t partition) {
    size_ =
        static_cast<std::size_t>(std::to_chars(buffer_, buffer_ + sizeof buffer_, partition).ptr - buffer_);
  }
  std::string_view view() const noexcept { return {buffer_, size_}; }

 private:
  char buffer_[12];
  std::size_t size_ = 0;
};

// Writes one per-partition family: `value(p)` for every partition of every group, with
// kafka-lag-exporter's seven labels (plus `source` for lag_seconds).
template <class Value>
void write_partition_family(const LagSnapshot& snapshot, MetricWriter& writer, std::string_view cluster,
                            Value value, bool with_source = false) {
  std::array<LabelPair, 8> labels{};
  labels[0] = {"cluster_name", cluster};
  for (const GroupLag& group : snapshot.groups) {
    labels[1] = {"group", group.group};
    for (const PartitionLag& p : group.partitions) {
      const auto sample = value(p);
      if (!sample) continue;
      const PartitionText partition(p.partition);
      labels[2] = {"topic", p.topic};
      labels[3] = {"partition", partition.view()};
      labels[4] = {"member_host", p.host};
      labels[5] = {"consumer_id", p.member_id};
      labels[6] = {"client_id", p.client_id};
      labels[7] = {"source", time_lag_source_name(p.lag_seconds_source)};
      writer.sample(LabelPairs(labels.data(), with_source ? 8 : 7), *sample);
    }
  }
}

// The partitions of all groups, each once (several groups may read the same one).
std::vector<const PartitionLag*> distinct_partitions(const LagSnapshot& snapshot) {
  std::vector<const PartitionLag*> partitions;
  for (const GroupLag& group : snapshot.groups) {
    for (const PartitionLag& p : group.partitions) partitions.push_back(&p);
  }
  const auto key = [](const PartitionLag* p) { return std::tie(p->topic, p->partition); };
  std::stable_sort(partitions.begin(), partitions.end(), [&](auto* a, auto* b) { return key(a) < key(b); });
  // Of one partition, keep the entry that knows most (the first with both offsets, if any).
  std::vector<const PartitionLag*> distinct;
  for (const PartitionLag* p : partitions) {
    if (!distinct.empty() && key(distinct.back()) == key(p)) {
      const PartitionLag* kept = distinct.back();
      const bool kept_knows = kept->log_start_offset && kept->log_end_offset;
      if (!kept_knows && p->log_start_offset && p->log_end_offset) distinct.back() = p;
      continue;
    }
    distinct.push_back(p);
  }
  return distinct;
}

void write_partition_offsets(const LagSnapshot& snapshot, MetricWriter& writer, std::string_view cluster) {
  const std::vector<const PartitionLag*> partitions = distinct_partitions(snapshot);
  for (const bool latest : {true, false}) {
    if (latest) {
      writer.family("kafka_partition_latest_offset", "The log-end offset (high watermark) of the partition.",
                    MetricType::Gauge);
    } else {
      writer.family("kafka_partition_earliest_offset",
                    "The log-start offset (earliest available) of the partition.", MetricType::Gauge);
    }
    for (const PartitionLag* p : partitions) {
      const PartitionText partition(p->partition);
      writer.sample({{"cluster_name", cluster}, {"topic", p->topic}, {"partition", partition.view()}},
                    latest ? p->log_end_offset : p->log_start_offset);
    }
  }
}

void write_group_families(const LagSnapshot& snapshot, MetricWriter& writer, std::string_view cluster) {
  writer.family("kafka_consumergroup_group_max_lag", "The highest lag in offsets of the group's partitions.",
                MetricType::Gauge);
  for (const GroupLag& g : snapshot.groups) {
    writer.sample({{"cluster_name", cluster},
                   {"group", g.group},
                   {"group_type", type_label(g)},
                   {"is_simple_consumer", simple_label(g)}},
                  g.max_lag());
  }

  writer.family("kafka_consumergroup_group_max_lag_seconds",
                "The highest estimated lag in seconds of the group's partitions.", MetricType::Gauge);
  for (const GroupLag& g : snapshot.groups) {
    writer.sample({{"cluster_name", cluster},
                   {"group", g.group},
                   {"group_type", type_label(g)},
                   {"is_simple_consumer", simple_label(g)}},
                  g.max_lag_seconds());
  }

  writer.family("kafka_consumergroup_group_sum_lag",
                "The sum of the lags in offsets of the group's partitions.", MetricType::Gauge);
  for (const GroupLag& g : snapshot.groups) {
    writer.sample({{"cluster_name", cluster}, {"group", g.group}, {"group_type", type_label(g)}},
                  g.sum_lag());
  }

  writer.family("kafka_consumergroup_group_topic_sum_lag",
                "The sum of the lags in offsets of the group's partitions of one topic.", MetricType::Gauge);
  for (const GroupLag& g : snapshot.groups) {
    // Partitions are ordered by topic: one sum per run of a topic.
    for (std::size_t i = 0; i < g.partitions.size();) {
      const std::string& topic = g.partitions[i].topic;
      std::optional<std::int64_t> sum;
      for (; i < g.partitions.size() && g.partitions[i].topic == topic; ++i) {
        if (g.partitions[i].lag) sum = sum.value_or(0) + *g.partitions[i].lag;
      }
      writer.sample(
          {{"cluster_name", cluster}, {"group", g.group}, {"group_type", type_label(g)}, {"topic", topic}},
          sum);
    }
  }

  writer.family("kafka_consumergroup_group_status",
                std::string("The group's status, its worst partition's (Burrow's evaluation): ") +
                    kStatusCodes + "; the status label names it.",
                MetricType::Gauge);
  for (const GroupLag& g : snapshot.groups) {
    writer.sample({{"cluster_name", cluster},
                   {"group", g.group},
                   {"group_type", type_label(g)},
                   {"status", status_name(g.status)}},
                  static_cast<std::int64_t>(status_code(g.status)));
  }

  writer.family(
      "kafka_consumergroup_members",
      "The group's members, as its coordinator last described it; the state label holds the group's "
      "state (\"Stable\", \"Empty\", ...; \"unknown\" before the first describe).",
      MetricType::Gauge);
  for (const GroupLag& g : snapshot.groups) {
    writer.sample({{"cluster_name", cluster},
                   {"group", g.group},
                   {"group_type", type_label(g)},
                   {"state", g.state.empty() ? std::string_view("unknown") : std::string_view(g.state)}},
                  static_cast<std::int64_t>(g.members));
  }

  writer.family("kafka_consumergroup_partition_status",
                std::string("The partition's status for the group (Burrow's evaluation): ") + kStatusCodes +
                    "; the status label names it.",
                MetricType::Gauge);
  for (const GroupLag& g : snapshot.groups) {
    for (const PartitionLag& p : g.partitions) {
      const PartitionText partition(p.partition);
      writer.sample({{"cluster_name", cluster},
                     {"group", g.group},
                     {"topic", p.topic},
                     {"partition", partition.view()},
                     {"status", status_name(p.status)}},
                    static_cast<std::int64_t>(status_code(p.status)));
    }
  }
}

void write_monitor_families(const LagSnapshot& snapshot, MetricWriter& writer) {
  const MonitorStats& stats = snapshot.stats;
  writer.family("processor_lag_monitor_polls_total", "Polls of the cluster by the lag monitor.",
                MetricType::Counter);
  writer.sample({}, static_cast<double>(stats.polls));
  writer.family("processor_lag_monitor_poll_errors_total",
                "Polls (or a group's part of one) of the lag monitor that failed.", MetricType::Counter);
  writer.sample({}, static_cast<double>(stats.poll_errors));
  writer.family("processor_lag_monitor_partitions_evaluated_total",
                "Partition offsets the lag monitor evaluated since it started.", MetricType::Counter);
  writer.sample({}, static_cast<double>(stats.partitions_evaluated));
  writer.family("processor_lag_monitor_poll_duration_seconds", "How long the last poll of the cluster took.",
                MetricType::Gauge);
  writer.sample({}, stats.last_poll_seconds);
  writer.family("processor_lag_monitor_evaluation_duration_seconds",
                "How long evaluating the last poll's samples took.", MetricType::Gauge);
  writer.sample({}, stats.last_evaluation_seconds);
  std::int64_t partitions = 0;
  for (const GroupLag& g : snapshot.groups) partitions += static_cast<std::int64_t>(g.partitions.size());
  writer.family("processor_lag_monitor_partitions", "Partitions (of all groups) in the last snapshot.",
                MetricType::Gauge);
  writer.sample({}, partitions);
  writer.family("processor_lag_monitor_last_poll_timestamp_seconds",
                "When the last snapshot was taken, in seconds since the Unix epoch.", MetricType::Gauge);
  writer.sample({}, std::chrono::duration<double>(snapshot.taken_at.time_since_epoch()).count());
}

}  // namespace

int status_code(Status status) noexcept { return static_cast<int>(status); }

void write_lag_metrics(const LagSnapshot& snapshot, MetricWriter& writer, const LagMetricsOptions& options) {
  const std::string_view cluster = options.cluster_name;
  writer.family("kafka_consumergroup_group_offset",
                "The last committed offset of the partition for the group.", MetricType::Gauge);
  write_partition_family(snapshot, writer, cluster, [](const PartitionLag& p) { return p.committed_offset; });
  writer.family("kafka_consumergroup_group_lag",
                "The log-end offset minus the committed offset of the partition for the group.",
                MetricType::Gauge);
  write_partition_family(snapshot, writer, cluster, [](const PartitionLag& p) { return p.lag; });
  writer.family(
      "kafka_consumergroup_group_lag_seconds",
      "The estimated lag in seconds of the partition for the group; source says how it was estimated.",
      MetricType::Gauge);
  write_partition_family(
      snapshot, writer, cluster, [](const PartitionLag& p) { return p.lag_seconds; }, true);
  write_group_families(snapshot, writer, cluster);
  write_partition_offsets(snapshot, writer, cluster);
  write_monitor_families(snapshot, writer);
}

Collector lag_metrics_collector(std::function<std::shared_ptr<const LagSnapshot>()> latest,
                                LagMetricsOptions options) {
  return [latest = std::move(latest), options = std::move(options)](MetricWriter& writer) {
    if (const std::shared_ptr<const LagSnapshot> snapshot = latest())
      write_lag_metrics(*snapshot, writer, options);
  };
}

}  // namespace processor::monitor
