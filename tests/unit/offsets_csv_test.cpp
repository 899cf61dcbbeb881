// The offsets CSV of --export / --from-file (tools/offsetctl/offsets_csv.hpp).

#include "offsets_csv.hpp"

#include <gtest/gtest.h>

#include "processor/error.hpp"

namespace processor::offsetctl {
namespace {

std::string message_of(std::string_view text) {
  try {
    parse_offsets_csv(text);
  } catch (const StateError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(OffsetsCsv, ReadsWhatKafkasExportWrites) {
  // kafka-consumer-groups --export: rows, then the empty line of its println.
  const auto rows = parse_offsets_csv("orders,0,5\r\norders,1,7\n\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].topic, "orders");
  EXPECT_EQ(rows[1].partition, 1);
  EXPECT_EQ(rows[1].offset, 7);
  EXPECT_EQ(format_offsets_csv(rows, false), "orders,0,5\norders,1,7\n");
}

TEST(OffsetsCsv, FourColumnsCarryTheGroup) {
  const auto rows = parse_offsets_csv("g1,orders,0,5\ng2,orders,0,6\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].group, "g2");
  EXPECT_EQ(parse_offsets_csv(format_offsets_csv(rows, true)).size(), 2u);
}

TEST(OffsetsCsv, ANegativeOffsetGetsKafkasMessageAndTheLine) {
  EXPECT_EQ(message_of("t,0,1\nt,1,-5\n"), "Invalid negative offset (offsets CSV line 2: offset '-5')");
}

TEST(OffsetsCsv, JunkIsRejectedNamingTheLineAndValue) {
  EXPECT_NE(message_of("junk\n").find("line 1"), std::string::npos);
  EXPECT_NE(message_of("t,x,1\n").find("'x'"), std::string::npos);
  EXPECT_NE(message_of("t,0,1\ng,t,0,1\n").find("line 2"), std::string::npos);
  EXPECT_NE(message_of("bad topic!,0,1\n").find("line 1"), std::string::npos);
  EXPECT_NE(message_of(",t,0,1\n").find("empty group"), std::string::npos);
}

}  // namespace
}  // namespace processor::offsetctl
