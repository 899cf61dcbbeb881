#pragma once
// processor::monitor::write_lag_metrics: a LagSnapshot as Prometheus metrics, with the names and
// labels of kafka-lag-exporter (https://github.com/seglo/kafka-lag-exporter), so that its Grafana
// dashboards and alerts work unchanged, plus Burrow's status and the monitor's own figures.
//
// Families (cluster_name is LagMetricsOptions::cluster_name in every one):
//   kafka_consumergroup_group_offset        {cluster_name,group,topic,partition,member_host,consumer_id,
//                                            client_id}
//   kafka_consumergroup_group_lag           same labels
//   kafka_consumergroup_group_lag_seconds   same labels + source (interpolated, extrapolated, lower_bound)
//   kafka_consumergroup_group_max_lag         {cluster_name,group,is_simple_consumer}
//   kafka_consumergroup_group_max_lag_seconds {cluster_name,group,is_simple_consumer}
//   kafka_consumergroup_group_sum_lag         {cluster_name,group}
//   kafka_consumergroup_group_topic_sum_lag   {cluster_name,group,topic}
//   kafka_partition_latest_offset / kafka_partition_earliest_offset  {cluster_name,topic,partition}
//   kafka_consumergroup_group_status      {cluster_name,group,status}: 0 OK 1 WARN 2 STALL 3 STOP
//                                         4 REWIND 5 ERR
//   kafka_consumergroup_partition_status  {cluster_name,group,topic,partition,status}, same codes
//   processor_lag_monitor_polls_total, _poll_errors_total, _partitions_evaluated_total (counters),
//   _poll_duration_seconds, _evaluation_duration_seconds (the last poll), _partitions (in the
//   snapshot), _last_poll_timestamp_seconds (gauges)
//
// A value the snapshot does not know (no committed offset, a broker that did not answer, no time
// estimate) has no sample at all: never NaN, never -1.

#include <functional>
#include <memory>
#include <string>

#include "processor/monitor/lag_snapshot.hpp"
#include "processor/monitor/metrics.hpp"

namespace processor::monitor {

struct LagMetricsOptions {
  // The cluster_name label of every lag metric, as kafka-lag-exporter names its clusters.
  // Default: "default". Set it when one Prometheus scrapes exporters of several clusters.
  std::string cluster_name = "default";
};

// The numeric code of a status in the *_status metrics (its severity order).
int status_code(Status status) noexcept;

// Writes every family above for `snapshot`.
// Throws StateError(InvalidArgument) when the writer already wrote one of these families.
void write_lag_metrics(const LagSnapshot& snapshot, MetricWriter& writer,
                       const LagMetricsOptions& options = {});

// A collector for MetricsRegistry::add_collector: at each scrape it asks `latest` for the newest
// snapshot and writes it; when `latest` returns nullptr (no poll finished yet) it writes nothing.
// `latest` runs on the scraping thread and must be safe to call from it.
Collector lag_metrics_collector(std::function<std::shared_ptr<const LagSnapshot>()> latest,
                                LagMetricsOptions options = {});

}  // namespace processor::monitor
