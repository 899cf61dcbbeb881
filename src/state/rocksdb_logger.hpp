#pragma once
// RocksDB's own log, sent to the library's log sink (processor/log.hpp) instead of a LOG file in
// the state directory.
//
// Why not the LOG file: it lives on the same filesystem as the data. Once a write to it fails
// (the filesystem is full), RocksDB 7.8 built with assertions, as Debian ships it, aborts the
// process at the next line it logs (WritableFileWriter::Append asserts on a writer that has
// seen an error), and the next line is the report of the failed write itself. Through the sink,
// a full disk is a StateError, not a SIGABRT.

#include <rocksdb/env.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/log_internal.hpp"

namespace processor::state::internal {

// Forwards RocksDB's warnings and errors (its info lines, e.g. the options dump at every open,
// are not even formatted) to the "rocksdb" component, prefixed with the database's directory.
// RocksDB calls it from any of its threads: it is as thread-safe as the sink, and never throws.
class RocksDbLogger final : public rocksdb::Logger {
 public:
  explicit RocksDbLogger(std::string directory)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), prefix_("'" + std::move(directory) + "': ") {}

  // Lines without a level are info lines.
  void Logv(const char* format, va_list ap) override { Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap); }

  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel() || level == rocksdb::InfoLogLevel::HEADER_LEVEL) return;
    const LogLevel ours = level >= rocksdb::InfoLogLevel::ERROR_LEVEL ? LogLevel::Error : LogLevel::Warning;
    if (!processor::internal::log_enabled(ours)) return;
    char line[1024];
    const int length = std::vsnprintf(line, sizeof line, format, ap);
    if (length < 0 || benign(line)) return;
    processor::internal::log(ours, "rocksdb", prefix_, line);
  }

 private:
  // Warnings that say nothing is wrong. RocksDB checks each table file it opens against the
  // unique id its manifest recorded, and warns when there is none to check:
  // always the case for the files of StateBackend::load_sorted(), since SstFileWriter cannot
  // give a file the id that RocksDB derives from its database session and file number.
  static bool benign(const char* line) noexcept {
    return std::strstr(line, "SST file opened without unique ID to verify") != nullptr;
  }

  const std::string prefix_;
};

}  // namespace processor::state::internal
