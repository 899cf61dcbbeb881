#include "processor/kafka/offset_info.hpp"

namespace processor::kafka {

OffsetInfo::OffsetInfo(std::int64_t committed_offset)
    : offset(committed_offset), last_updated(std::chrono::system_clock::now()) {}

OffsetInfo OffsetInfo::with_high_watermark(std::int64_t committed_offset,
                                           std::int64_t high_watermark_offset) {
  OffsetInfo info(committed_offset);
  info.high_watermark = high_watermark_offset;
  return info;
}

std::optional<std::int64_t> OffsetInfo::lag() const {
  if (!high_watermark) return std::nullopt;
  return *high_watermark - offset;
}

}  // namespace processor::kafka
