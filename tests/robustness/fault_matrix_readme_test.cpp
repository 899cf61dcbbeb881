// The fault matrix's README: tests/robustness/README.md carries the table of
// fault_matrix_cases.hpp, row for row, with what a user sees and should do.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "fault_matrix_cases.hpp"

namespace processor::kafka {
namespace {

using testing::Fault;
using testing::Outcome;

std::string outcome_text(const Fault& fault) {
  const std::string code = rd_kafka_err2name(testing::reported_code(fault));
  switch (fault.outcome) {
    case Outcome::Retried:
      return "retried to success";
    case Outcome::Surfaced:
      return "surfaced as StateError(Kafka, " + code + ")";
    case Outcome::Fatal:
      return "fatal: StateError(Kafka, " + code + ")";
    case Outcome::SurfacedOrRetried:
      return "surfaced as StateError(Kafka, " + code + "), or retried to success";
  }
  return "";
}

std::string user_sees(const Fault& fault) {
  const bool retried = fault.outcome == Outcome::Retried;
  switch (fault.api_key) {
    case testing::kOffsetCommitApiKey:
      return retried ? "commit() returns; the broker holds the new offsets"
                     : "commit() throws; the offsets stay pending, the broker keeps the last commit";
    case testing::kOffsetFetchApiKey:
      return retried ? "get_offset() returns the committed offset" : "get_offset() throws";
    case testing::kListOffsetsApiKey:
      if (fault.outcome == Outcome::SurfacedOrRetried)
        return "reset_offset() throws and commits nothing, or commits the log end";
      return retried ? "reset_offset() commits the log end" : "reset_offset() throws; nothing is committed";
    case testing::kFindCoordinatorApiKey:
      return "the first commit() returns, up to seconds later";
    case testing::kJoinGroupApiKey:
    case testing::kSyncGroupApiKey:
    case testing::kHeartbeatApiKey:
      if (retried) return "poll() goes on; the consumer (re)joins and gets its partitions";
      if (fault.outcome == Outcome::Surfaced) return "poll() throws; the consumer keeps trying to join";
      return "poll() throws a fatal error; the consumer is dead";
    default:
      if (retried) return "commit() returns";
      if (fault.outcome == Outcome::Surfaced)
        return "commit() throws \"... must be aborted\"; the offsets are not committed";
      return "commit() throws \"(fatal ...)\"; abort() throws too";
  }
}

std::string user_does(const Fault& fault) {
  const bool transactional = fault.api_key == testing::kAddOffsetsToTxnApiKey ||
                             fault.api_key == testing::kTxnOffsetCommitApiKey ||
                             fault.api_key == testing::kEndTxnApiKey;
  const bool group = fault.api_key == testing::kJoinGroupApiKey ||
                     fault.api_key == testing::kSyncGroupApiKey || fault.api_key == testing::kHeartbeatApiKey;
  switch (fault.outcome) {
    case Outcome::Retried:
      return "nothing";
    case Outcome::Surfaced:
      if (transactional) return "abort(), rewind_to_committed(), redo the transaction";
      if (group) return "fix the cause (ACLs, group config); keep polling";
      if (fault.kafka_retriable) return "call again (retriable() is true)";
      return "fix the cause (ACLs, metadata size, membership), then commit again";
    case Outcome::Fatal:
      if (transactional) return "new TransactionalProducer (same transactional.id), rewind, redo";
      return "new KafkaClient and KafkaConsumer";
    case Outcome::SurfacedOrRetried:
      return fault.kafka_retriable ? "when it throws: call again (retriable() is true)"
                                   : "when it throws: fix the cause (ACLs, broker version)";
  }
  return "";
}

std::string readme_row(const Fault& fault) {
  return std::string("| ") + testing::api_name(fault.api_key) + " (" + std::to_string(fault.api_key) +
         ") | " + rd_kafka_err2name(fault.code) + " (" + std::to_string(static_cast<int>(fault.code)) +
         ") | " + (fault.kafka_retriable ? "retriable" : "not retriable") + " | " + outcome_text(fault) +
         " | " + user_sees(fault) + " | " + user_does(fault) + " | " + fault.note + " |";
}

// The StreamProcessor's table (stream_processor_faults()): the same columns, what a user of
// StreamProcessor sees and does.
std::string streams_outcome_text(const Fault& fault) {
  const std::string code = rd_kafka_err2name(testing::reported_code(fault));
  switch (fault.outcome) {
    case Outcome::Retried:
      return "retried and committed";
    case Outcome::Surfaced:
      return "aborted and reprocessed";
    case Outcome::Fatal:
      return "fatal: StateError(Kafka, " + code + ")";
    case Outcome::SurfacedOrRetried:
      return "aborted and reprocessed, or retried and committed";
  }
  return "";
}

std::string streams_user_sees(const Fault& fault) {
  if (fault.api_key == testing::kInitProducerIdApiKey) {
    return fault.outcome == Outcome::Retried ? "the constructor returns; processing starts"
                                             : "the constructor throws; nothing is processed";
  }
  switch (fault.outcome) {
    case Outcome::Retried:
      return "poll() goes on; the transaction commits, nothing is aborted";
    case Outcome::Surfaced:
      return "poll() goes on; the transaction is aborted (stats().aborts, a warning logged), its records "
             "processed "
             "again; counts exact";
    default:
      return "poll() throws; so do every later poll() and commit()";
  }
}

std::string streams_user_does(const Fault& fault) {
  switch (fault.outcome) {
    case Outcome::Retried:
      return "nothing";
    case Outcome::Surfaced:
      return "nothing; fix the cause if it lasts (ACLs, group membership)";
    default:
      return fault.api_key == testing::kInitProducerIdApiKey
                 ? "fix the cause (ACLs, transaction.max.timeout.ms), then construct it again"
                 : "close() it; a new StreamProcessor (same state_dir and instance_id) fences the old "
                   "producer and "
                   "resumes from the last commit";
  }
}

std::string streams_readme_row(const Fault& fault) {
  return std::string("| ") + testing::api_name(fault.api_key) + " (" + std::to_string(fault.api_key) +
         ") | " + rd_kafka_err2name(fault.code) + " (" + std::to_string(static_cast<int>(fault.code)) +
         ") | " + (fault.kafka_retriable ? "retriable" : "not retriable") + " | " +
         streams_outcome_text(fault) + " | " + streams_user_sees(fault) + " | " + streams_user_does(fault) +
         " | " + fault.note + " |";
}

std::vector<Fault> every_fault() {
  std::vector<Fault> all;
  for (auto list : {testing::offset_commit_faults(), testing::offset_fetch_faults(),
                    testing::list_offsets_faults(), testing::find_coordinator_faults(),
                    testing::group_membership_faults(), testing::transaction_faults()}) {
    all.insert(all.end(), list.begin(), list.end());
  }
  return all;
}

// The README's table is this one: a row changed here and not there fails. Run with
// FAULT_MATRIX_PRINT_ROWS=1 to print the rows.
TEST(fault_matrix_readme, ListsEveryInjectedErrorWithItsOutcome) {
  std::ifstream file(FAULT_MATRIX_README);
  ASSERT_TRUE(file) << FAULT_MATRIX_README;
  const std::string readme((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const bool print = std::getenv("FAULT_MATRIX_PRINT_ROWS") != nullptr;
  for (const auto& fault : every_fault()) {
    const std::string row = readme_row(fault);
    if (print) std::cout << row << "\n";
    EXPECT_NE(readme.find(row + "\n"), std::string::npos) << "README.md lacks the row\n" << row;
  }
}

TEST(fault_matrix_readme, ListsEveryStreamProcessorFaultWithItsOutcome) {
  std::ifstream file(FAULT_MATRIX_README);
  ASSERT_TRUE(file) << FAULT_MATRIX_README;
  const std::string readme((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const bool print = std::getenv("FAULT_MATRIX_PRINT_ROWS") != nullptr;
  for (const auto& fault : testing::stream_processor_faults()) {
    const std::string row = streams_readme_row(fault);
    if (print) std::cout << row << "\n";
    EXPECT_NE(readme.find(row + "\n"), std::string::npos) << "README.md lacks the row\n" << row;
  }
}

}  // namespace
}  // namespace processor::kafka
