#pragma once
// processor::monitor::GroupAdminLagSource: the LagSource of a real cluster, over kafka::GroupAdmin.

#include <memory>

#include "processor/kafka/group_admin.hpp"
#include "processor/monitor/lag_source.hpp"

namespace processor::monitor {

// Reads groups with ListGroups/DescribeGroups/OffsetFetch and logs with two ListOffsets
// (earliest, latest) for all partitions at once. Errors are GroupAdmin's StateErrors.
// A log whose partition ListOffsets could not answer is left unknown (nullopt), not failed.
//
// As safe for concurrent use as GroupAdmin (it is).
class GroupAdminLagSource : public LagSource {
 public:
  // REQUIRES: admin is not null.
  explicit GroupAdminLagSource(std::shared_ptr<kafka::GroupAdmin> admin);

  std::vector<std::string> list_groups() override;
  std::vector<kafka::GroupDescription> describe_groups(const std::vector<std::string>& groups) override;
  std::vector<kafka::CommittedOffset> committed_offsets(std::string_view group) override;
  std::vector<LogOffsets> log_offsets(const std::vector<kafka::TopicPartition>& partitions) override;

 private:
  std::shared_ptr<kafka::GroupAdmin> admin_;
};

}  // namespace processor::monitor
