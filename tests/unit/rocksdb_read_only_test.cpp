// RocksDbOptions::read_only: what a tool that inspects a running application's state directory
// relies on.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "processor/error.hpp"
#include "processor/state/rocksdb_state_backend.hpp"
#include "state_error_of.hpp"

namespace processor::state {
namespace {

namespace fs = std::filesystem;
using Rows = std::vector<std::pair<std::string, std::string>>;
using processor::testing::error_of;
using processor::testing::mentions;

class RocksDbReadOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("processor-rocksdb-ro-" + std::to_string(::getpid()) + "-" + test->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path db_path() const { return dir_ / "db"; }
  fs::path dir_;
};

TEST_F(RocksDbReadOnlyTest, ReadsWhatAWriterThatStillHoldsTheDirectoryWrote) {
  RocksDbStateBackend writer(db_path());
  writer.put("a", "1");
  writer.put("b", "2");
  RocksDbStateBackend reader(db_path(), RocksDbOptions{.read_only = true});
  EXPECT_EQ(reader.scan(""), (Rows{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(reader.get("a"), "1");
  writer.put("c", "3");  // the writer keeps its lock and keeps writing
  EXPECT_EQ(writer.get("c"), "3");
}

TEST_F(RocksDbReadOnlyTest, EveryWriteThrowsStorageAndChangesNothing) {
  {
    RocksDbStateBackend writer(db_path());
    writer.put("a", "1");
  }
  {
    RocksDbStateBackend reader(db_path(), RocksDbOptions{.read_only = true});
    EXPECT_EQ(error_of([&] { reader.put("a", "2"); }).kind(), ErrorKind::Storage);
    EXPECT_EQ(error_of([&] { reader.remove("a"); }).kind(), ErrorKind::Storage);
    WriteBatch batch;
    batch.put("b", "2");
    EXPECT_EQ(error_of([&] { reader.write(batch); }).kind(), ErrorKind::Storage);
    EXPECT_EQ(error_of([&] { reader.clear(); }).kind(), ErrorKind::Storage);
    const std::vector<StateBackend::PutView> puts = {{"c", "3"}};
    EXPECT_EQ(error_of([&] { reader.write_puts(puts); }).kind(), ErrorKind::Storage);
    const std::vector<StateBackend::UnloggedWrite> unlogged = {{"d", std::string_view("4")}};
    EXPECT_EQ(error_of([&] { reader.write_unlogged(unlogged); }).kind(), ErrorKind::Storage);
    EXPECT_EQ(error_of([&] { reader.flush(); }).kind(), ErrorKind::Storage);
  }
  RocksDbStateBackend reopened(db_path());
  EXPECT_EQ(reopened.scan(""), (Rows{{"a", "1"}}));
}

TEST_F(RocksDbReadOnlyTest, AMissingDirectoryThrowsStorageNamingItAndIsNotCreated) {
  const auto error =
      error_of([&] { RocksDbStateBackend reader(db_path(), RocksDbOptions{.read_only = true}); });
  EXPECT_EQ(error.kind(), ErrorKind::Storage);
  EXPECT_TRUE(mentions(error, db_path().string()));
  EXPECT_FALSE(fs::exists(db_path()));
}

TEST_F(RocksDbReadOnlyTest, ADirectoryWithoutADatabaseThrowsStorageNamingIt) {
  fs::create_directories(db_path());
  const auto error =
      error_of([&] { RocksDbStateBackend reader(db_path(), RocksDbOptions{.read_only = true}); });
  EXPECT_EQ(error.kind(), ErrorKind::Storage);
  EXPECT_TRUE(mentions(error, db_path().string()));
  EXPECT_TRUE(fs::is_empty(db_path()));
}

}  // namespace
}  // namespace processor::state
