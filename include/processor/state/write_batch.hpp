#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace processor::state {

// WriteBatch collects puts and removes to apply atomically with StateBackend::write(): after a
// crash either every operation of the batch is visible or none is. Operations apply in the
// order they were added, so a later put of a key overrides an earlier one.
//
// Not safe for concurrent mutation; a filled batch may be read from several threads.
class WriteBatch {
 public:
  enum class OpType { Put, Remove };
  struct Operation {
    OpType type;
    std::string key;
    std::string value;  // empty for Remove
  };

  void put(std::string_view key, std::string_view value) {
    operations_.push_back({OpType::Put, std::string(key), std::string(value)});
  }
  void remove(std::string_view key) { operations_.push_back({OpType::Remove, std::string(key), {}}); }
  void clear() noexcept { operations_.clear(); }

  bool empty() const noexcept { return operations_.empty(); }
  std::size_t size() const noexcept { return operations_.size(); }
  const std::vector<Operation>& operations() const noexcept { return operations_; }

 private:
  std::vector<Operation> operations_;
};

}  // namespace processor::state
