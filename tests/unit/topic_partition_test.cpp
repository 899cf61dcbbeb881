#include <gtest/gtest.h>

#include <sstream>
#include <unordered_set>

#include "processor/kafka.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

TEST(TopicPartition, KeyAndPrintedFormAreTopicColonPartition) {
  const TopicPartition tp("orders", 7);
  EXPECT_EQ(tp.to_key(), "orders:7");
  EXPECT_EQ(to_string(tp), "orders:7");
  std::ostringstream out;
  out << tp;
  EXPECT_EQ(out.str(), "orders:7");
}

TEST(TopicPartition, EqualityAndHashDistinguishTopicAndPartition) {
  std::unordered_set<TopicPartition> set{{"a", 0}, {"a", 1}, {"b", 0}, {"a", 0}};
  EXPECT_EQ(set.size(), 3u);
  EXPECT_EQ(TopicPartition("a", 1), TopicPartition("a", 1));
  EXPECT_NE(TopicPartition("a", 1), TopicPartition("a", 2));
  EXPECT_NE(TopicPartition("a", 1), TopicPartition("b", 1));
  EXPECT_EQ(std::hash<TopicPartition>{}({"x", 3}), std::hash<TopicPartition>{}({"x", 3}));
}

TEST(TopicValidation, AcceptsKafkasLegalNames) {
  EXPECT_NO_THROW(validate_topic("my-topic"));
  EXPECT_NO_THROW(validate_topic("A.b_c-9"));
  EXPECT_NO_THROW(validate_topic(std::string(249, 'x')));
  EXPECT_NO_THROW(validate_topic("..."));
}

TEST(TopicValidation, RejectsEmptyDotsLongAndIllegalNamesWithTheName) {
  EXPECT_STATE_ERROR(validate_topic(""), ErrorKind::InvalidArgument, "empty");
  EXPECT_STATE_ERROR(validate_topic("."), ErrorKind::InvalidArgument, "'.'");
  EXPECT_STATE_ERROR(validate_topic(".."), ErrorKind::InvalidArgument, "'..'");
  EXPECT_STATE_ERROR(validate_topic(std::string(250, 'x')), ErrorKind::InvalidArgument, "250 characters");
  EXPECT_STATE_ERROR(validate_topic("bad topic"), ErrorKind::InvalidArgument, "'bad topic'");
  EXPECT_STATE_ERROR(validate_topic("a:b"), ErrorKind::InvalidArgument, "position 1");
  EXPECT_STATE_ERROR(validate_topic("caf\xc3\xa9"), ErrorKind::InvalidArgument, "caf\\xc3\\xa9");
}

TEST(TopicValidation, RejectsNegativePartitionNamingIt) {
  EXPECT_STATE_ERROR(validate_partition("t", -1), ErrorKind::InvalidArgument, "-1");
  EXPECT_NO_THROW(validate_partition("t", 0));
}

}  // namespace
}  // namespace processor::kafka
