#include "state/state_lock_holder.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace processor::offsetctl {

// A line of /proc/locks: "1: POSIX  ADVISORY  WRITE 1234 08:02:1311 0 EOF", where the sixth field
// is major:minor:inode, major and minor in hex. Lines of blocked waiters ("1: -> POSIX ...") have
// one field more and are skipped: they hold nothing.
std::optional<LockHolder> find_lock_holder(const std::filesystem::path& lock_file) noexcept {
  try {
    struct stat file {};
    if (::stat(lock_file.c_str(), &file) != 0) return std::nullopt;
    std::ifstream locks("/proc/locks");
    std::string line;
    while (std::getline(locks, line)) {
      std::istringstream fields(line);
      std::string number, kind, mode, access, pid_text, id;
      fields >> number >> kind;
      if (kind == "->" || kind != "POSIX") continue;
      fields >> mode >> access >> pid_text >> id;
      unsigned major_id = 0, minor_id = 0;
      unsigned long long inode = 0;
      if (std::sscanf(id.c_str(), "%x:%x:%llu", &major_id, &minor_id, &inode) != 3) continue;
      if (inode != file.st_ino || major_id != major(file.st_dev) || minor_id != minor(file.st_dev)) continue;
      LockHolder holder;
      holder.pid = static_cast<pid_t>(std::stol(pid_text));
      std::ifstream comm("/proc/" + pid_text + "/comm");
      std::getline(comm, holder.command);
      return holder;
    }
  } catch (...) {
    // Best effort: the caller reports the lock without its holder.
  }
  return std::nullopt;
}

std::string describe_lock_holder(const std::optional<LockHolder>& holder) {
  if (!holder) return "another process";
  std::string text = "process " + std::to_string(holder->pid);
  if (!holder->command.empty()) text += " (" + holder->command + ")";
  return text;
}

}  // namespace processor::offsetctl
