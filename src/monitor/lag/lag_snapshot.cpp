#include "processor/monitor/lag_snapshot.hpp"

#include <algorithm>
#include <utility>

namespace processor::monitor {

const std::shared_ptr<const std::vector<kafka::GroupMember>>& no_members() {
  static const auto empty = std::make_shared<const std::vector<kafka::GroupMember>>();
  return empty;
}

std::string_view status_name(Status status) {
  switch (status) {
    case Status::Ok:
      return "OK";
    case Status::Warn:
      return "WARN";
    case Status::Stall:
      return "STALL";
    case Status::Stop:
      return "STOP";
    case Status::Rewind:
      return "REWIND";
    case Status::Error:
      return "ERR";
  }
  return "ERR";
}

std::string_view time_lag_source_name(TimeLagSource source) {
  switch (source) {
    case TimeLagSource::None:
      return "none";
    case TimeLagSource::Interpolated:
      return "interpolated";
    case TimeLagSource::Extrapolated:
      return "extrapolated";
    case TimeLagSource::LowerBound:
      return "lower_bound";
    case TimeLagSource::RecordTimestamp:
      return "record_timestamp";
  }
  return "none";
}

namespace {

// Folds `value(p)` over the partitions that have one.
template <class T, class Value, class Fold>
std::optional<T> fold_known(const std::vector<PartitionLag>& partitions, Value value, Fold fold) {
  std::optional<T> result;
  for (const auto& p : partitions) {
    const std::optional<T> v = value(p);
    if (!v) continue;
    result = result ? fold(*result, *v) : *v;
  }
  return result;
}

constexpr auto kMax = [](auto a, auto b) { return std::max(a, b); };
constexpr auto kSum = [](auto a, auto b) { return a + b; };

}  // namespace

std::optional<std::int64_t> GroupLag::max_lag() const {
  return fold_known<std::int64_t>(
      partitions, [](const PartitionLag& p) { return p.lag; }, kMax);
}

std::optional<double> GroupLag::max_lag_seconds() const {
  return fold_known<double>(
      partitions, [](const PartitionLag& p) { return p.lag_seconds; }, kMax);
}

std::optional<std::int64_t> GroupLag::sum_lag() const {
  return fold_known<std::int64_t>(
      partitions, [](const PartitionLag& p) { return p.lag; }, kSum);
}

void LagHistory::add(LagSnapshot snapshot) {
  if (capacity_ == 0) return;
  if (snapshots_.size() == capacity_) snapshots_.pop_front();
  snapshots_.push_back(std::move(snapshot));
}

}  // namespace processor::monitor
