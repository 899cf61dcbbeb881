// `offsetctl state`: the offsets and checkpoints the library keeps in a RocksDB state directory,
// seen and changed through the offsetctl binary, as an operator runs it. The directories are
// written by the library itself (OffsetManager, StateBackendOffsetStore, checkpoint()).

#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "offsetctl_process.hpp"
#include "processor/kafka.hpp"
#include "processor/state.hpp"
#include "state_dir_holder_process.hpp"

namespace processor::kafka {
namespace {

namespace fs = std::filesystem;
using processor::testing::OffsetctlResult;

// What a checkpoint's creation time looks like in offsetctl's output.
std::string utc_micros(std::chrono::system_clock::time_point at) {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count();
  const std::time_t seconds = micros / 1'000'000;
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(micros % 1'000'000));
  return text;
}

class OffsetctlState : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("offsetctl-state-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // orders-app: orders:2 = 42, orders:10 = 7, payments:0 = 100 committed; checkpoints 1 and 2.
  // audit: orders:0 = 5, no checkpoint.
  void write_state() {
    auto backend = std::make_shared<state::RocksDbStateBackend>(dir_);
    auto store = std::make_shared<StateBackendOffsetStore>(backend);
    OffsetManager orders("orders-app", backend, store, OffsetCommitStrategy::manual());
    orders.update_offset("orders", 2, 42);
    orders.update_offset("orders", 10, 7);
    orders.update_offset("payments", 0, 100);
    orders.commit();
    first_ = orders.checkpoint(1);
    orders.update_offset("orders", 2, 50);
    second_ = orders.checkpoint(2);
    OffsetManager audit("audit", backend, store, OffsetCommitStrategy::manual());
    audit.update_offset("orders", 0, 5);
    audit.commit();
  }

  // The group's stored offsets, read back through the library: "topic:partition=offset ...".
  std::string stored(const std::string& group) {
    auto backend =
        std::make_shared<state::RocksDbStateBackend>(dir_, state::RocksDbOptions{.read_only = true});
    std::map<std::pair<std::string, std::int32_t>, std::int64_t> sorted;
    for (const auto& [tp, info] : StateBackendOffsetStore(backend).get_all_offsets(group)) {
      sorted[{tp.topic, tp.partition}] = info.offset;
    }
    std::string text;
    for (const auto& [tp, offset] : sorted) {
      text += (text.empty() ? "" : " ") + tp.first + ":" + std::to_string(tp.second) + "=" +
              std::to_string(offset);
    }
    return text;
  }

  OffsetctlResult run(std::vector<std::string> args) {
    args.insert(args.begin(), {"state", "--state-dir", dir_.string()});
    return processor::testing::run_offsetctl(OFFSETCTL_PATH, args);
  }

  fs::path dir_;
  CheckpointInfo first_;
  CheckpointInfo second_;
};

TEST_F(OffsetctlState, GroupsListsEachGroupOnceSortedWithItsCounts) {
  write_state();
  const auto result = run({"groups"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "audit offsets=1 checkpoints=0\norders-app offsets=3 checkpoints=2\n");
}

TEST_F(OffsetctlState, DescribePrintsKafkasTableOrderedByTopicThenPartition) {
  write_state();
  const auto result = run({"describe", "--group", "orders-app"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "GROUP           TOPIC           PARTITION  CURRENT-OFFSET\n"
            "orders-app      orders          2          42\n"
            "orders-app      orders          10         7\n"
            "orders-app      payments        0          100\n");
}

TEST_F(OffsetctlState, DescribeAsJsonHasTheSameRows) {
  write_state();
  const auto result = run({"describe", "--group", "orders-app", "--output", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto expected = nlohmann::json::parse(R"({"group": "orders-app", "offsets": [
      {"topic": "orders", "partition": 2, "current_offset": 42},
      {"topic": "orders", "partition": 10, "current_offset": 7},
      {"topic": "payments", "partition": 0, "current_offset": 100}]})");
  EXPECT_EQ(nlohmann::json::parse(result.out), expected);
}

TEST_F(OffsetctlState, CheckpointsListAndShowPrintWhatCheckpointWrote) {
  write_state();
  const auto list = run({"checkpoints", "list", "--group", "orders-app"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  const std::string first_at = utc_micros(first_.created_at);
  const std::string second_at = utc_micros(second_.created_at);
  EXPECT_EQ(list.out, "ID CREATED-AT" + std::string(first_at.size() - 9, ' ') + "PARTITIONS\n" + "1  " +
                          first_at + " 3\n" + "2  " + second_at + " 3\n");

  const auto latest = run({"checkpoints", "show", "--group", "orders-app"});
  EXPECT_EQ(latest.exit_code, 0) << latest.err;
  EXPECT_EQ(latest.out, "checkpoint 2 of group orders-app, created at " + second_at +
                            ", 3 partitions\n"
                            "TOPIC           PARTITION  OFFSET\n"
                            "orders          2          50\n"
                            "orders          10         7\n"
                            "payments        0          100\n");
  const auto older = run({"checkpoints", "show", "--group", "orders-app", "--id", "1"});
  EXPECT_EQ(older.exit_code, 0) << older.err;
  EXPECT_NE(older.out.find("orders          2          42\n"), std::string::npos) << older.out;

  const auto missing = run({"checkpoints", "show", "--group", "orders-app", "--id", "7"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no checkpoint 7"), std::string::npos) << missing.err;
}

TEST_F(OffsetctlState, ResetIsADryRunWithAWarningUnlessExecuted) {
  write_state();
  const auto dry = run({"reset", "--group", "orders-app", "--topic", "orders", "--to-offset", "3"});
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(dry.out,
            "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\n"
            "orders-app      orders          2          3\n"
            "orders-app      orders          10         3\n");
  EXPECT_NE(dry.err.find("WARN: No action will be performed as the --execute option is missing"),
            std::string::npos);
  EXPECT_EQ(stored("orders-app"), "orders:2=42 orders:10=7 payments:0=100");

  const auto shift =
      run({"reset", "--group", "orders-app", "--all-topics", "--shift-by", "-10", "--execute"});
  EXPECT_EQ(shift.exit_code, 0) << shift.err;
  EXPECT_EQ(shift.err, "");
  EXPECT_EQ(stored("orders-app"), "orders:2=32 orders:10=0 payments:0=90");

  const auto one =
      run({"reset", "--group", "orders-app", "--topic", "payments:0,3", "--to-offset", "8", "--execute"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(stored("orders-app"), "orders:2=32 orders:10=0 payments:0=8 payments:3=8");
  EXPECT_EQ(stored("audit"), "orders:0=5");
}

TEST_F(OffsetctlState, ResetRefusesWhatItCannotDoAndChangesNothing) {
  write_state();
  const auto earliest = run({"reset", "--group", "orders-app", "--all-topics", "--to-earliest", "--execute"});
  EXPECT_EQ(earliest.exit_code, 1);
  EXPECT_NE(earliest.err.find("--to-earliest needs --bootstrap-server"), std::string::npos) << earliest.err;
  const auto negative =
      run({"reset", "--group", "orders-app", "--all-topics", "--to-offset", "-1", "--execute"});
  EXPECT_EQ(negative.exit_code, 1);
  EXPECT_NE(negative.err.find("-1"), std::string::npos) << negative.err;
  const auto unknown =
      run({"reset", "--group", "orders-app", "--topic", "refunds", "--to-offset", "1", "--execute"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("refunds"), std::string::npos) << unknown.err;
  EXPECT_EQ(stored("orders-app"), "orders:2=42 orders:10=7 payments:0=100");
}

TEST_F(OffsetctlState, ExportWritesKafkasCsvAndImportWritesItBack) {
  write_state();
  const auto exported = run({"export", "--group", "orders-app"});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(exported.out, "orders,2,42\norders,10,7\npayments,0,100\n");

  const fs::path csv = dir_.string() + ".csv";
  std::ofstream(csv) << "orders,2,60\npayments,0,101\n";
  const auto imported = run({"import", "--group", "orders-app", "--file", csv.string(), "--execute"});
  fs::remove(csv);
  EXPECT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(stored("orders-app"), "orders:2=60 orders:10=7 payments:0=101");

  // A four-column file: only the group's rows are imported.
  std::ofstream(csv) << "audit,orders,0,9\norders-app,orders,10,8\n";
  const auto four_columns = run({"import", "--group", "orders-app", "--file", csv.string(), "--execute"});
  fs::remove(csv);
  EXPECT_EQ(four_columns.exit_code, 0) << four_columns.err;
  EXPECT_EQ(stored("orders-app"), "orders:2=60 orders:10=8 payments:0=101");
  EXPECT_EQ(stored("audit"), "orders:0=5");

  const fs::path file = dir_.string() + ".export.csv";
  const auto to_file = run({"export", "--group", "orders-app", "--file", file.string()});
  EXPECT_EQ(to_file.exit_code, 0) << to_file.err;
  std::ifstream written(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(written), {}),
            "orders,2,60\norders,10,8\npayments,0,101\n");
  fs::remove(file);
}

TEST_F(OffsetctlState, ImportOfABadCsvFailsNamingTheValueAndChangesNothing) {
  write_state();
  const fs::path csv = dir_.string() + ".csv";
  for (const auto& [text, named] :
       std::vector<std::pair<std::string, std::string>>{{"orders,2,60\npayments,0,-4\n", "'-4'"},
                                                        {"orders,2,60\njunk\n", "junk"},
                                                        {"orders,x,1\n", "'x'"}}) {
    std::ofstream(csv) << text;
    const auto result = run({"import", "--group", "orders-app", "--file", csv.string(), "--execute"});
    EXPECT_EQ(result.exit_code, 1) << text;
    EXPECT_NE(result.err.find(named), std::string::npos) << result.err;
  }
  fs::remove(csv);
  EXPECT_EQ(stored("orders-app"), "orders:2=42 orders:10=7 payments:0=100");
}

TEST_F(OffsetctlState, ALockedDirectoryCanBeReadButNotWritten) {
  write_state();
  processor::testing::HolderProcess holder(STATE_DIR_HOLDER_PATH, dir_);
  ASSERT_EQ(holder.first_line(), "opened");
  const auto read = run({"describe", "--group", "audit"});
  EXPECT_EQ(read.exit_code, 0) << read.err;
  EXPECT_NE(read.out.find("audit           orders          0          5\n"), std::string::npos) << read.out;

  const auto write = run({"reset", "--group", "audit", "--all-topics", "--to-offset", "0", "--execute"});
  EXPECT_EQ(write.exit_code, 1);
  EXPECT_NE(write.err.find("'" + dir_.string() + "'"), std::string::npos) << write.err;
  EXPECT_NE(write.err.find("locked by process"), std::string::npos) << write.err;
  EXPECT_NE(write.err.find((dir_ / "LOCK").string()), std::string::npos) << write.err;
  EXPECT_EQ(write.out, "");
  holder.kill();
  EXPECT_EQ(stored("audit"), "orders:0=5");
}

TEST_F(OffsetctlState, ACorruptOffsetFailsNamingItsKey) {
  write_state();
  {
    state::RocksDbStateBackend backend(dir_);
    backend.put("kafka_offset:orders-app:orders:10", "garbage");
  }
  for (const auto& verb : {"describe", "export"}) {
    const auto result = run({verb, "--group", "orders-app"});
    EXPECT_EQ(result.exit_code, 1) << verb;
    EXPECT_NE(result.err.find("kafka_offset:orders-app:orders:10"), std::string::npos) << result.err;
  }
  const auto reset = run({"reset", "--group", "orders-app", "--all-topics", "--to-offset", "0", "--execute"});
  EXPECT_EQ(reset.exit_code, 1);
  EXPECT_NE(reset.err.find("kafka_offset:orders-app:orders:10"), std::string::npos) << reset.err;
  EXPECT_EQ(reset.out, "");
}

TEST_F(OffsetctlState, ACorruptCheckpointFailsNamingItsKey) {
  write_state();
  const std::string key = "checkpoint:orders-app:00000000000000000001";
  {
    state::RocksDbStateBackend backend(dir_);
    auto record = *backend.get(key);
    record[10] = static_cast<char>(record[10] ^ 0x01);  // a flipped bit: the checksum fails
    backend.put(key, record);
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"checkpoints", "list", "--group", "orders-app"},
        {"checkpoints", "show", "--group", "orders-app", "--id", "1"},
        {"groups"}}) {
    const auto result = run(args);
    EXPECT_EQ(result.exit_code, 1) << args[0];
    EXPECT_NE(result.err.find("corrupt checkpoint at key '" + key + "'"), std::string::npos) << result.err;
  }
}

TEST_F(OffsetctlState, AMissingDirectoryIsAnErrorAndIsNotCreated) {
  const auto result = run({"groups"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("state directory '" + dir_.string() + "' does not exist"), std::string::npos)
      << result.err;
  EXPECT_FALSE(fs::exists(dir_));
}

}  // namespace
}  // namespace processor::kafka
