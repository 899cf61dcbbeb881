// OffsetManager's long acknowledgement metadata: spilled to the state backend at commit, with a
// reference committed in its place, and read back (inline or spilled) by acked_after_restart().
// The reference format is in kafka/acks/ack_reference.hpp.

#include "common/log_internal.hpp"
#include "kafka/acks/ack_metadata.hpp"
#include "kafka/acks/ack_reference.hpp"
#include "kafka/manager/offset_manager_impl.hpp"
#include "kafka/wrap_errors.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

using processor::detail::MutexLock;

void OffsetManager::Impl::spill_long_metadata_locked(std::vector<PartitionOffset>& batch) {
  state::WriteBatch spills;
  for (auto& [tp, info] : batch) {
    if (!info.metadata || info.metadata->size() <= options.acks.metadata_budget_bytes) continue;
    if (!backend || !options.spill_ack_metadata) {
      // Only metadata built without tracking's budget gets here (a restored checkpoint's, say):
      // committing it would fail the whole batch at the broker.
      processor::internal::log(LogLevel::Warning, "acks", "committing ", tp, " at ", info.offset,
                               " without its acknowledgement metadata (", info.metadata->size(),
                               " bytes, more than metadata_budget_bytes ", options.acks.metadata_budget_bytes,
                               ", and no state backend to spill it to, or spill_ack_metadata off): after a "
                               "restart the records above it are "
                               "processed again");
      info.metadata.reset();
      continue;
    }
    std::string reference = internal::format_ack_reference(*info.metadata);
    spills.put(internal::ack_spill_key(options.ack_spill_prefix, group, tp), std::move(*info.metadata));
    info.metadata = std::move(reference);
  }
  if (spills.empty()) return;
  internal::call_backend("spilling the acknowledgement metadata of group '" + group + "'",
                         [&] { backend->write(spills); });
}

void OffsetManager::Impl::forget_unreferenced_spills_locked(const std::vector<PartitionOffset>& batch) {
  for (const auto& [tp, info] : batch) {
    if (info.metadata && internal::is_ack_reference(*info.metadata)) {
      spilled.insert(tp);
      continue;
    }
    const auto found = spilled.find(tp);
    if (found == spilled.end()) continue;
    spilled.erase(found);
    // The store no longer refers to it. A failure leaves a stale record, which no reference
    // matches: harmless, so the commit stays a success.
    const std::string key = internal::ack_spill_key(options.ack_spill_prefix, group, tp);
    try {
      backend->remove(key);
    } catch (const std::exception& error) {
      processor::internal::log(LogLevel::Warning, "acks",
                               "could not delete the spilled acknowledgement metadata at key '", key,
                               "': ", error.what());
    }
  }
}

void OffsetManager::Impl::ignore_ack_metadata(const TopicPartition& tp, std::int64_t committed,
                                              const std::string& why) {
  processor::internal::log(LogLevel::Warning, "acks", "ignoring the acknowledgement metadata of ", tp, ": ",
                           why, "; every record from ", committed, " is processed again");
  MutexLock stats_lock(stats_mutex);
  ++stats.ack_metadata_ignored;
}

std::optional<AckedSet> OffsetManager::Impl::acked_from_metadata(const TopicPartition& tp,
                                                                 std::int64_t committed,
                                                                 const std::string& metadata) {
  std::string spilled_value;
  std::string_view text = metadata;
  if (internal::is_ack_reference(metadata)) {
    const auto reference = internal::parse_ack_reference(metadata);
    if (!reference) {
      ignore_ack_metadata(tp, committed,
                          "it is neither acknowledgement metadata nor a reference to spilled metadata");
      return std::nullopt;
    }
    if (!backend) {
      ignore_ack_metadata(tp, committed,
                          "it refers to spilled metadata, and the manager has no state backend");
      return std::nullopt;
    }
    const std::string key = internal::ack_spill_key(options.ack_spill_prefix, group, tp);
    auto value = internal::call_backend("reading the spilled acknowledgement metadata at key '" + key + "'",
                                        [&] { return backend->get(key); });
    if (!value) {
      ignore_ack_metadata(tp, committed,
                          "the spilled metadata it refers to is not in the state backend (key '" + key +
                              "'; written on another machine, or deleted)");
      return std::nullopt;
    }
    if (!internal::matches_ack_reference(*reference, *value)) {
      ignore_ack_metadata(tp, committed,
                          "the spilled metadata at key '" + key + "' is not the one it refers to (length " +
                              std::to_string(value->size()) + " instead of " +
                              std::to_string(reference->length) +
                              ", or another checksum: a crash between spilling and committing?)");
      return std::nullopt;
    }
    spilled_value = std::move(*value);
    text = spilled_value;
  }
  AckedSet acked;
  try {
    acked = internal::decode_ack_metadata(text);
  } catch (const StateError& error) {
    if (error.kind() != ErrorKind::Corruption) throw;
    ignore_ack_metadata(tp, committed, std::string("it does not decode (") + error.what() + ")");
    return std::nullopt;
  }
  if (acked.committable != committed) {
    // Metadata written for another offset: the offset was moved with the metadata kept, or
    // another tool wrote it. Trusting it would skip records that nobody processed.
    ignore_ack_metadata(tp, committed,
                        "it was written for committed offset " + std::to_string(acked.committable) +
                            ", not for " + std::to_string(committed));
    return std::nullopt;
  }
  return acked;
}

}  // namespace processor::kafka
