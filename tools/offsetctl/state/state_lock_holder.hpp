#pragma once
// Who holds a RocksDB directory's LOCK file: RocksDB takes a POSIX (fcntl) write lock on
// <dir>/LOCK for as long as a read-write instance has the directory open, and reports a refused
// open only as "Resource temporarily unavailable". Linux lists held locks in /proc/locks by the
// file's device and inode, with the holder's pid.

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace processor::offsetctl {

struct LockHolder {
  pid_t pid = 0;
  std::string command;  // /proc/<pid>/comm, "" when unreadable
};

// The process holding a POSIX lock on `lock_file`, or nullopt when none is found (no lock, the
// file is missing, or /proc/locks is unreadable). Never throws.
std::optional<LockHolder> find_lock_holder(const std::filesystem::path& lock_file) noexcept;

// "process 1234 (java)", or "another process" when `holder` is empty.
std::string describe_lock_holder(const std::optional<LockHolder>& holder);

}  // namespace processor::offsetctl
