// The headers renamed in 0.1 still compile for one release: each old name forwards to the new.
#include <gtest/gtest.h>

#include "processor/kafka/ack_tracker.hpp"  // now partition_acks.hpp
#include "processor/kafka/strategies.hpp"   // now commit_strategy.hpp and reset_strategy.hpp

namespace processor::kafka {
namespace {

TEST(ForwardingHeaders, OldNamesStillDeclareTheirTypes) {
  EXPECT_EQ(to_string(OffsetCommitStrategy::manual()), "manual");
  EXPECT_EQ(to_string(OffsetResetStrategy::earliest()), "earliest");
  PartitionAcks acks(0, PartitionAcksOptions{});
  EXPECT_EQ(acks.committable(), 0);
}

}  // namespace
}  // namespace processor::kafka
