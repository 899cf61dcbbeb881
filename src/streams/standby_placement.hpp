#pragma once
// Where standby replicas go: which partitions a member keeps warm copies of. Internal.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace processor::streams::internal {

// A member of the group and the input partitions it owns, as the group coordinator describes it.
struct MemberPartitions {
  std::string member_id;
  std::vector<std::int32_t> partitions;
};

// The partitions whose standby replicas `self` keeps, with `replicas` standbys per partition.
// Every member computes the same placement from the same description: members ordered by id,
// the standbys of a partition owned by the i-th member are the members at positions
// i + 1 + ((partition + k) mod (n - 1)), k = 0 .. replicas - 1 (mod n), so that one member's
// partitions spread over the others and no member holds a standby of its own partition.
// At most n - 1 standbys per partition; none when `self` is not among `members`.
std::set<std::int32_t> standby_partitions(std::vector<MemberPartitions> members, const std::string& self,
                                          int replicas);

}  // namespace processor::streams::internal
