#include "streams/standby_placement.hpp"

#include <algorithm>

namespace processor::streams::internal {

std::set<std::int32_t> standby_partitions(std::vector<MemberPartitions> members, const std::string& self,
                                          int replicas) {
  std::set<std::int32_t> out;
  std::sort(members.begin(), members.end(),
            [](const MemberPartitions& a, const MemberPartitions& b) { return a.member_id < b.member_id; });
  const auto n = static_cast<std::int64_t>(members.size());
  const auto self_at = std::find_if(members.begin(), members.end(),
                                    [&](const MemberPartitions& member) { return member.member_id == self; });
  if (n < 2 || replicas <= 0 || self_at == members.end()) return out;
  const std::int64_t self_index = self_at - members.begin();
  const std::int64_t per_partition = std::min<std::int64_t>(replicas, n - 1);
  for (std::int64_t owner = 0; owner < n; ++owner) {
    if (owner == self_index) continue;
    for (const std::int32_t partition : members[static_cast<std::size_t>(owner)].partitions) {
      for (std::int64_t k = 0; k < per_partition; ++k) {
        const std::int64_t step = 1 + (static_cast<std::int64_t>(partition) + k) % (n - 1);
        if ((owner + step) % n == self_index) out.insert(partition);
      }
    }
  }
  return out;
}

}  // namespace processor::streams::internal
