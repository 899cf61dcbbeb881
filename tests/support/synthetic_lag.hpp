#pragma once
// Synthetic LagSnapshots and LagHistories for the exporter's tests and benchmark: no broker.

#include <chrono>
#include <cstdint>
#include <string>

#include "processor/monitor/lag_snapshot.hpp"

namespace processor::testing {

// One partition with a known lag: log end `end`, committed `end - lag`, and `seconds` of lag
// estimated by interpolation.
inline monitor::PartitionLag synthetic_partition(std::string topic, std::int32_t partition, std::int64_t end,
                                                 std::int64_t lag, double seconds) {
  monitor::PartitionLag p;
  p.topic = std::move(topic);
  p.partition = partition;
  p.log_start_offset = 0;
  p.log_end_offset = end;
  p.committed_offset = end - lag;
  p.lag = lag;
  p.lag_seconds = seconds;
  p.lag_seconds_source = monitor::TimeLagSource::Interpolated;
  p.status = lag > 0 ? monitor::Status::Warn : monitor::Status::Ok;
  p.member_id = "consumer-1-uuid";
  p.client_id = "consumer-1";
  p.host = "/127.0.0.1";
  return p;
}

// Two groups: "orders" on topic "orders" (3 partitions; partition 2 has no committed offset, so
// no lag), and "billing" on "payments" (2 partitions). `step` moves the lags, so that a history of
// several snapshots draws slopes. Taken at `at`.
inline monitor::LagSnapshot synthetic_snapshot(std::chrono::system_clock::time_point at, int step = 0) {
  monitor::LagSnapshot snapshot;
  snapshot.taken_at = at;
  monitor::GroupLag billing;
  billing.group = "billing";
  billing.state = "Stable";
  billing.type = "Consumer";
  billing.members = 1;
  billing.partitions.push_back(
      synthetic_partition("payments", 0, 5000 + 10 * step, 40 + 5 * step, 2.5 + step));
  billing.partitions.push_back(synthetic_partition("payments", 1, 5200 + 10 * step, 0, 0));
  billing.status = monitor::Status::Warn;
  monitor::GroupLag orders;
  orders.group = "orders";
  orders.state = "Stable";
  orders.type = "Classic";
  orders.members = 2;
  orders.partitions.push_back(
      synthetic_partition("orders", 0, 1000 + 20 * step, 120 + 30 * step, 12.0 + 2 * step));
  orders.partitions.push_back(synthetic_partition("orders", 1, 900 + 20 * step, 80 - step, 8.5));
  monitor::PartitionLag unknown;
  unknown.topic = "orders";
  unknown.partition = 2;
  unknown.log_start_offset = 0;
  unknown.log_end_offset = 700;
  unknown.status = monitor::Status::Error;
  orders.partitions.push_back(unknown);
  orders.status = monitor::Status::Error;
  snapshot.groups.push_back(billing);
  snapshot.groups.push_back(orders);
  snapshot.stats.polls = 12;
  snapshot.stats.poll_errors = 1;
  snapshot.stats.last_poll_seconds = 0.25;
  snapshot.stats.last_evaluation_seconds = 0.003;
  snapshot.stats.partitions_evaluated = 60;
  return snapshot;
}

// `count` snapshots 10 s apart, ending at `end`.
inline monitor::LagHistory synthetic_history(int count, std::chrono::system_clock::time_point end) {
  monitor::LagHistory history;
  for (int i = 0; i < count; ++i) {
    history.add(synthetic_snapshot(end - std::chrono::seconds(10 * (count - 1 - i)), i));
  }
  return history;
}

}  // namespace processor::testing
