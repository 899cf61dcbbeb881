#pragma once
// processor::monitor::add_*_metrics: the application's own figures — an OffsetManager's commits,
// checkpoints and restores, a KafkaConsumer's records and out-of-range resets, a ParallelConsumer's
// workers, buffers and failures, a StreamProcessor's records, transactions and restorations — as
// Prometheus metrics of a MetricsRegistry, read from
// their stats() at scrape time (nothing is added to their hot paths).
//
// Families (every series also carries the labels given when its source was added):
//   processor_commit_latency_seconds         histogram {store}   successful commits to the offset store
//   processor_commits_total                  counter {store,result}   result: success, failure
//   processor_offsets_committed_total        counter              partitions written by successful commits
//   processor_last_commit_timestamp_seconds  gauge                no sample before the first commit
//   processor_checkpoint_duration_seconds    histogram            OffsetManager::checkpoint()
//   processor_restore_duration_seconds       histogram {source}   source: checkpoint
//                                            (restore_from_checkpoint), changelog (a StreamProcessor's
//                                            (store, partition) restorations)
//   processor_records_processed_total        counter              records whose handler returned
//                                                                 (KafkaConsumer, ParallelConsumer,
//                                                                 StreamProcessor)
//   processor_offset_resets_total            counter {cause}      cause: no_offset, below_log_start,
//                                                                 above_log_end, truncated
//                                                                 (OutOfRangePolicy's fields)
//   processor_records_skipped_total          counter              records jumped over by those resets
//   processor_transactions_total             counter {result}     StreamProcessor: committed, aborted
//   processor_record_failures_total          counter              tries of a record that failed (the
//                                                                 failure policy; every consumer)
//   processor_failed_records_total           counter {topic,partition,action}   records the failure
//                                                                 policy passed over: action skipped,
//                                                                 dead_lettered (no sample before one)
// A ParallelConsumer has the KafkaConsumer's families (of its consumer) and these:
//   processor_parallel_in_flight_records     gauge                handlers running now
//   processor_parallel_buffered_records      gauge                fetched and not finished (in flight too)
//   processor_parallel_buffered_bytes        gauge                their keys and values
//   processor_parallel_buffered_bytes_peak   gauge                the most buffered at once
//   processor_parallel_handler_failures_total     counter         handler calls that threw
//   processor_parallel_dead_lettered_total        counter         records on_failure accepted
//   processor_parallel_skipped_after_restart_total counter        records a previous owner acknowledged
//   processor_parallel_abandoned_total            counter         records dropped by a revoke or a loss
//   processor_parallel_late_acks_ignored_total    counter         completions after their partition left
//   processor_parallel_partition_pauses_total     counter         partitions paused for back-pressure
//   processor_parallel_executor_rejections_total  counter         tasks the user's executor refused
//   processor_parallel_metadata_ignored_total     counter         restart metadata ignored (another tool's,
//                                                                 or garbage)
// Histogram buckets are LatencyHistogram::cumulative_buckets(): powers of two microseconds,
// 1 µs to 2^32 µs, in seconds, exact.
//
// All sources added to one registry share one collector, so that several managers (one per
// group, say) write one family each, with a series per source. A family is written only when a
// source that has it is registered.
//
// Thread-safety: every function here is safe to call concurrently with the others and with
// scrapes; a scrape reads each source's stats() once.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "processor/kafka/kafka_consumer.hpp"
#include "processor/kafka/offset_manager.hpp"
#include "processor/kafka/parallel_consumer.hpp"
#include "processor/monitor/metrics.hpp"
#include "processor/streams/stream_processor.hpp"

namespace processor::monitor {

// Labels added to every series of one source, e.g. {{"group", "orders"}}: (name, value) pairs.
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// Identifies one added source, to remove it.
using AppMetricsId = std::uint64_t;

// Adds the source's families to `registry`. The registry keeps the source alive until it is
// removed or the registry is destroyed. Its stats() is called at each scrape, on the scraping
// thread.
// Throws StateError(InvalidArgument) when the source is null, a label name is invalid, repeats,
// or is one the families use themselves (store, result, source, cause, le, topic, partition,
// action).
AppMetricsId add_offset_manager_metrics(MetricsRegistry& registry,
                                        std::shared_ptr<const kafka::OffsetManager> manager,
                                        MetricLabels labels = {});
AppMetricsId add_kafka_consumer_metrics(MetricsRegistry& registry,
                                        std::shared_ptr<const kafka::KafkaConsumer> consumer,
                                        MetricLabels labels = {});
AppMetricsId add_parallel_consumer_metrics(MetricsRegistry& registry,
                                           std::shared_ptr<const kafka::ParallelConsumer> consumer,
                                           MetricLabels labels = {});
AppMetricsId add_stream_processor_metrics(MetricsRegistry& registry,
                                          std::shared_ptr<const streams::StreamProcessor> processor,
                                          MetricLabels labels = {});

// Removes a source added to `registry`; its series are gone from the next scrape. Unknown ids
// are ignored.
void remove_app_metrics(MetricsRegistry& registry, AppMetricsId id);

}  // namespace processor::monitor
