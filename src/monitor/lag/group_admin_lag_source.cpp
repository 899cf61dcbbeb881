#include "processor/monitor/group_admin_lag_source.hpp"

#include <utility>

#include "processor/error.hpp"

namespace processor::monitor {

GroupAdminLagSource::GroupAdminLagSource(std::shared_ptr<kafka::GroupAdmin> admin)
    : admin_(std::move(admin)) {
  if (!admin_) throw StateError(ErrorKind::InvalidArgument, "GroupAdminLagSource: admin is null");
}

std::vector<std::string> GroupAdminLagSource::list_groups() {
  std::vector<std::string> names;
  for (kafka::GroupListing& listing : admin_->list_groups()) names.push_back(std::move(listing.group));
  return names;
}

std::vector<kafka::GroupDescription> GroupAdminLagSource::describe_groups(
    const std::vector<std::string>& groups) {
  return admin_->describe_groups(groups);
}

std::vector<kafka::CommittedOffset> GroupAdminLagSource::committed_offsets(std::string_view group) {
  return admin_->committed_offsets(group);
}

std::vector<LogOffsets> GroupAdminLagSource::log_offsets(
    const std::vector<kafka::TopicPartition>& partitions) {
  const std::vector<kafka::ListedOffset> earliest =
      admin_->list_offsets(partitions, kafka::OffsetSpec::earliest());
  const std::vector<kafka::ListedOffset> latest =
      admin_->list_offsets(partitions, kafka::OffsetSpec::latest());
  std::vector<LogOffsets> logs(partitions.size());
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    if (i < earliest.size()) logs[i].log_start_offset = earliest[i].offset;
    if (i < latest.size()) logs[i].log_end_offset = latest[i].offset;
  }
  return logs;
}

}  // namespace processor::monitor
