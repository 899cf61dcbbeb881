#include "processor/kafka/partition_acks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "processor/error.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

// What committable() and the metadata must be, computed the obvious way.
class ReferenceAcks {
 public:
  explicit ReferenceAcks(std::int64_t base) : base_(base) {}

  void track(std::int64_t offset) {
    tracked_.push_back(offset);
    unacked_.insert(offset);
  }
  void ack(std::int64_t offset) {
    unacked_.erase(offset);
    acked_.insert(offset);
  }
  std::int64_t committable() const {
    if (!unacked_.empty()) return *unacked_.begin();
    return tracked_.empty() ? base_ : tracked_.back() + 1;
  }
  std::vector<std::int64_t> acked_above_committable() const {
    return {acked_.upper_bound(committable()), acked_.end()};
  }
  const std::set<std::int64_t>& unacked() const { return unacked_; }
  bool is_acked(std::int64_t offset) const { return acked_.count(offset) != 0; }

 private:
  std::int64_t base_;
  std::vector<std::int64_t> tracked_;
  std::set<std::int64_t> unacked_;
  std::set<std::int64_t> acked_;
};

std::vector<std::int64_t> offsets_of(const AckedSet& set) {
  std::vector<std::int64_t> offsets;
  for (const auto& range : set.acked) {
    for (std::int64_t offset = range.first; offset <= range.last; ++offset) offsets.push_back(offset);
  }
  return offsets;
}

// The binary behind the base64 metadata, to look at the encoding the tracker chose.
std::string unbase64(const std::string& text) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=') break;
    bits = bits << 6 | static_cast<std::uint32_t>(kAlphabet.find(c));
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

// 'R' (run lengths) or 'B' (bitset): the byte after the version and the committable varint.
char encoding_of(const std::string& metadata) {
  const std::string binary = unbase64(metadata);
  std::size_t pos = 1;
  while (static_cast<unsigned char>(binary.at(pos)) & 0x80) ++pos;
  return binary.at(pos + 1);
}

bool is_base64_text(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '=';
  });
}

PartitionAcksOptions unbounded_outstanding() {
  PartitionAcksOptions options;
  options.max_outstanding = std::numeric_limits<std::size_t>::max();
  return options;
}

// Room for a hundred thousand unacknowledged records: limits out of the way.
PartitionAcksOptions roomy() {
  PartitionAcksOptions options = unbounded_outstanding();
  options.metadata_budget_bytes = 1 << 16;
  return options;
}

// ---------------------------------------------------------------------------------------------
// Tracking and acknowledging

TEST(PartitionAcks, NothingTrackedCommitsTheBase) {
  PartitionAcks acks(42);
  EXPECT_EQ(acks.committable(), 42);
  EXPECT_EQ(acks.outstanding(), 0u);
  EXPECT_EQ(PartitionAcks::decode_metadata(acks.encode_metadata()), (AckedSet{42, {}}));
}

TEST(PartitionAcks, InOrderAcksAdvanceCommittableOneByOne) {
  PartitionAcks acks(10);
  for (std::int64_t offset = 10; offset < 300; ++offset) ASSERT_TRUE(acks.try_track(offset));
  EXPECT_EQ(acks.committable(), 10);
  for (std::int64_t offset = 10; offset < 300; ++offset) {
    EXPECT_TRUE(acks.ack(offset));
    ASSERT_EQ(acks.committable(), offset + 1);
    ASSERT_EQ(acks.outstanding(), static_cast<std::size_t>(299 - offset));
  }
}

TEST(PartitionAcks, RandomAckOrdersMatchANaiveReference) {
  std::mt19937_64 rng(20240611);
  for (std::int64_t size : {1, 2, 3, 63, 64, 65, 127, 128, 129, 500, 4000}) {
    for (std::int64_t base : {std::int64_t{0}, std::int64_t{61}, std::int64_t{1'000'003}}) {
      for (bool with_gaps : {false, true}) {
        PartitionAcks acks(base, roomy());
        ReferenceAcks reference(base);
        std::vector<std::int64_t> tracked;
        std::int64_t offset = base + (with_gaps ? static_cast<std::int64_t>(rng() % 3) : 0);
        for (std::int64_t i = 0; i < size; ++i) {
          ASSERT_TRUE(acks.try_track(offset));
          reference.track(offset);
          tracked.push_back(offset);
          offset += 1 + (with_gaps && rng() % 4 == 0 ? static_cast<std::int64_t>(rng() % 70) : 0);
        }
        std::shuffle(tracked.begin(), tracked.end(), rng);
        for (std::int64_t acked : tracked) {
          acks.ack(acked);
          reference.ack(acked);
          ASSERT_EQ(acks.committable(), reference.committable())
              << "size " << size << " base " << base << " gaps " << with_gaps << " after acking " << acked;
          ASSERT_EQ(acks.outstanding(), reference.unacked().size());
        }
        EXPECT_EQ(acks.committable(), *std::max_element(tracked.begin(), tracked.end()) + 1);
      }
    }
  }
}

TEST(PartitionAcks, CommittableStepsOverUntrackedGaps) {
  PartitionAcks acks(0);
  for (std::int64_t offset : {0, 1, 5, 6, 9}) ASSERT_TRUE(acks.try_track(offset));
  acks.ack(0);
  EXPECT_EQ(acks.committable(), 1);
  acks.ack(1);
  EXPECT_EQ(acks.committable(), 5);  // 2, 3 and 4 are not records
  acks.ack(6);
  EXPECT_EQ(acks.committable(), 5);
  acks.ack(5);
  EXPECT_EQ(acks.committable(), 9);  // past the acked 6 and the gaps 7 and 8
  acks.ack(9);
  EXPECT_EQ(acks.committable(), 10);
  EXPECT_EQ(acks.outstanding(), 0u);
}

TEST(PartitionAcks, TrackingAfterEverythingIsAckedSkipsTheGapInBetween) {
  PartitionAcks acks(0);
  ASSERT_TRUE(acks.try_track(0));
  acks.ack(0);
  EXPECT_EQ(acks.committable(), 1);
  ASSERT_TRUE(acks.try_track(1'000'000));  // a compacted stretch: far beyond the window, no memory
  EXPECT_EQ(acks.committable(), 1'000'000);
  acks.ack(1'000'000);
  EXPECT_EQ(acks.committable(), 1'000'001);
}

TEST(PartitionAcks, AcknowledgingTwiceThrowsAndChangesNothing) {
  PartitionAcks acks(0);
  for (std::int64_t offset = 0; offset < 5; ++offset) ASSERT_TRUE(acks.try_track(offset));
  acks.ack(2);
  const std::string metadata = acks.encode_metadata();
  EXPECT_STATE_ERROR(acks.ack(2), ErrorKind::InvalidArgument, "offset 2");
  acks.ack(0);
  EXPECT_STATE_ERROR(acks.ack(0), ErrorKind::InvalidArgument, "offset 0");  // now below committable
  EXPECT_EQ(acks.committable(), 1);
  EXPECT_EQ(acks.outstanding(), 3u);
  acks.ack(1);
  EXPECT_EQ(acks.committable(), 3);
  EXPECT_NE(acks.encode_metadata(), metadata);
}

TEST(PartitionAcks, AcknowledgingAnUntrackedOffsetThrowsAndChangesNothing) {
  PartitionAcks acks(10);
  for (std::int64_t offset : {10, 11, 15}) ASSERT_TRUE(acks.try_track(offset));
  const std::string metadata = acks.encode_metadata();
  EXPECT_STATE_ERROR(acks.ack(13), ErrorKind::InvalidArgument, "offset 13");  // a gap
  EXPECT_STATE_ERROR(acks.ack(16), ErrorKind::InvalidArgument, "offset 16");  // beyond the last
  EXPECT_STATE_ERROR(acks.ack(9), ErrorKind::InvalidArgument, "offset 9");    // below the base
  EXPECT_STATE_ERROR(acks.ack(-1), ErrorKind::InvalidArgument, "offset -1");
  EXPECT_EQ(acks.committable(), 10);
  EXPECT_EQ(acks.outstanding(), 3u);
  EXPECT_EQ(acks.encode_metadata(), metadata);
  acks.ack(10);
  acks.ack(11);
  EXPECT_EQ(acks.committable(), 15);
}

TEST(PartitionAcks, TrackingBelowTheBaseThrows) {
  PartitionAcks acks(100);
  EXPECT_STATE_ERROR(acks.try_track(99), ErrorKind::InvalidArgument, "offset 99");
  EXPECT_STATE_ERROR(acks.try_track(-5), ErrorKind::InvalidArgument, "offset -5");
  EXPECT_EQ(acks.outstanding(), 0u);
  EXPECT_EQ(acks.committable(), 100);
  EXPECT_TRUE(acks.try_track(100));
}

TEST(PartitionAcks, TrackingAnOffsetNotAboveTheLastThrows) {
  PartitionAcks acks(0);
  ASSERT_TRUE(acks.try_track(5));
  EXPECT_STATE_ERROR(acks.try_track(5), ErrorKind::InvalidArgument, "offset 5");
  EXPECT_STATE_ERROR(acks.try_track(3), ErrorKind::InvalidArgument, "offset 3");
  EXPECT_EQ(acks.outstanding(), 1u);
  EXPECT_EQ(acks.committable(), 5);
  EXPECT_TRUE(acks.try_track(6));
}

TEST(PartitionAcks, InvalidBaseOrOptionsThrow) {
  EXPECT_STATE_ERROR(PartitionAcks(-1), ErrorKind::InvalidArgument, "-1");
  PartitionAcksOptions no_outstanding;
  no_outstanding.max_outstanding = 0;
  EXPECT_STATE_ERROR(PartitionAcks(0, no_outstanding), ErrorKind::InvalidArgument, "max_outstanding");
  PartitionAcksOptions tiny_budget;
  tiny_budget.metadata_budget_bytes = PartitionAcksOptions::kMinMetadataBudgetBytes - 1;
  EXPECT_STATE_ERROR(PartitionAcks(0, tiny_budget), ErrorKind::InvalidArgument, "metadata_budget_bytes");
  PartitionAcksOptions no_window;
  no_window.max_window_offsets = 0;
  EXPECT_STATE_ERROR(PartitionAcks(0, no_window), ErrorKind::InvalidArgument, "max_window_offsets");
}

TEST(PartitionAcks, RefusesPastMaxOutstandingAndResumesAfterAcks) {
  PartitionAcksOptions options;
  options.max_outstanding = 100;
  PartitionAcks acks(0, options);
  for (std::int64_t offset = 0; offset < 100; ++offset) ASSERT_TRUE(acks.try_track(offset));
  EXPECT_FALSE(acks.try_track(100));
  EXPECT_FALSE(acks.try_track(100));  // refusing changes nothing: the same offset is retried
  EXPECT_EQ(acks.outstanding(), 100u);
  acks.ack(57);  // out of order still frees a slot
  EXPECT_TRUE(acks.try_track(100));
  EXPECT_FALSE(acks.try_track(101));
  for (std::int64_t offset = 0; offset < 10; ++offset) acks.ack(offset);
  for (std::int64_t offset = 101; offset < 111; ++offset) EXPECT_TRUE(acks.try_track(offset));
  EXPECT_FALSE(acks.try_track(111));
  EXPECT_EQ(acks.committable(), 10);
}

// One slow record holds committable() while a hundred thousand later records are acknowledged:
// their run-length metadata stays tiny, so only the window limit pauses the consumer.
TEST(PartitionAcks, OneSlowRecordPausesTrackingOnlyAtTheWindowLimit) {
  PartitionAcksOptions options;
  options.max_window_offsets = 100'000;
  PartitionAcks acks(0, options);
  ASSERT_TRUE(acks.try_track(0));
  std::int64_t offset = 1;
  for (; acks.try_track(offset); ++offset) acks.ack(offset);
  EXPECT_EQ(offset, 100'000);
  EXPECT_EQ(acks.committable(), 0);
  EXPECT_LT(acks.encoded_size(), 16u);
  EXPECT_EQ(encoding_of(acks.encode_metadata()), 'R');
  acks.ack(0);
  EXPECT_EQ(acks.committable(), 100'000);
  EXPECT_TRUE(acks.try_track(offset));
}

TEST(PartitionAcks, AfterRevokeAcksChangeNothingAndTrackingThrows) {
  PartitionAcks acks(0);
  for (std::int64_t offset = 0; offset < 10; ++offset) ASSERT_TRUE(acks.try_track(offset));
  acks.ack(0);
  acks.ack(5);
  const PartitionAcks::Snapshot at_revoke = acks.snapshot();
  acks.revoke();
  EXPECT_TRUE(acks.revoked());
  EXPECT_FALSE(acks.ack(1));  // a worker finishing late: the new owner processes it again
  EXPECT_FALSE(acks.ack(2));
  EXPECT_EQ(acks.committable(), 1);
  EXPECT_EQ(acks.outstanding(), 8u);
  EXPECT_EQ(acks.encode_metadata(), at_revoke.metadata);
  EXPECT_STATE_ERROR(acks.ack(5), ErrorKind::InvalidArgument, "offset 5");  // still a bug
  EXPECT_STATE_ERROR(acks.try_track(10), ErrorKind::InvalidArgument, "revoked");
}

TEST(PartitionAcks, SnapshotPairsCommittableWithItsMetadata) {
  PartitionAcks acks(7);
  for (std::int64_t offset = 7; offset < 20; ++offset) ASSERT_TRUE(acks.try_track(offset));
  acks.ack(7);
  acks.ack(12);
  const PartitionAcks::Snapshot snapshot = acks.snapshot();
  EXPECT_EQ(snapshot.committable, 8);
  EXPECT_EQ(snapshot.metadata, acks.encode_metadata());
  EXPECT_EQ(PartitionAcks::decode_metadata(snapshot.metadata), (AckedSet{8, {{12, 12}}}));
}

TEST(PartitionAcks, AMovedTrackerKeepsItsState) {
  PartitionAcks acks(0);
  ASSERT_TRUE(acks.try_track(0));
  ASSERT_TRUE(acks.try_track(1));
  acks.ack(1);
  PartitionAcks moved(std::move(acks));
  EXPECT_EQ(moved.committable(), 0);
  moved.ack(0);
  EXPECT_EQ(moved.committable(), 2);
}

// ---------------------------------------------------------------------------------------------
// Metadata

TEST(AckMetadata, EncodesTheDocumentedFormat) {
  PartitionAcks dense(3);
  for (std::int64_t offset = 3; offset <= 9; ++offset) ASSERT_TRUE(dense.try_track(offset));
  for (std::int64_t offset : {5, 6, 9}) dense.ack(offset);
  // 01 | varint 3 | 'B' | varint 7 bits | 0b01001100 (offsets 5, 6 and 9 of 3..9)
  EXPECT_EQ(dense.encode_metadata(), "AQNCB0w=");

  PartitionAcks sparse(3);
  for (std::int64_t offset = 3; offset <= 300; ++offset) ASSERT_TRUE(sparse.try_track(offset));
  sparse.ack(200);
  // 01 | varint 3 | 'R' | varint 197 unacked | varint 1 acked
  EXPECT_EQ(sparse.encode_metadata(), "AQNSxQEB");

  // Nothing acknowledged above committable: no runs at all.
  EXPECT_EQ(PartitionAcks(3).encode_metadata(), "AQNS");
}

TEST(AckMetadata, RoundTripsRandomStatesInBothEncodings) {
  std::mt19937_64 rng(7);
  int bitsets = 0;
  int run_lengths = 0;
  for (int round = 0; round < 400; ++round) {
    const std::int64_t base = static_cast<std::int64_t>(rng() % 3'000'000'000ULL);
    const int size = 1 + static_cast<int>(rng() % 2000);
    const double ack_share = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    const bool clustered = rng() % 2 == 0;  // long runs: run lengths win
    PartitionAcks acks(base, unbounded_outstanding());
    ReferenceAcks reference(base);
    std::int64_t offset = base;
    for (int i = 0; i < size; ++i) {
      offset += rng() % 10 == 0 ? static_cast<std::int64_t>(rng() % 5) : 0;
      ASSERT_TRUE(acks.try_track(offset));
      reference.track(offset);
      ++offset;
    }
    bool acking = false;
    for (std::int64_t tracked :
         std::vector<std::int64_t>(reference.unacked().begin(), reference.unacked().end())) {
      if (clustered) {
        if (rng() % 100 < 3) acking = !acking;
      } else {
        acking = std::uniform_real_distribution<double>(0.0, 1.0)(rng) < ack_share;
      }
      if (acking) {
        acks.ack(tracked);
        reference.ack(tracked);
      }
    }
    const std::string metadata = acks.encode_metadata();
    ASSERT_EQ(acks.encoded_size(), metadata.size());
    ASSERT_LE(metadata.size(), acks.options().metadata_budget_bytes);
    ASSERT_TRUE(is_base64_text(metadata)) << metadata;
    const AckedSet decoded = PartitionAcks::decode_metadata(metadata);
    ASSERT_EQ(decoded.committable, reference.committable());
    ASSERT_EQ(offsets_of(decoded), reference.acked_above_committable()) << "round " << round;
    (encoding_of(metadata) == 'B' ? bitsets : run_lengths) += 1;
  }
  EXPECT_GT(bitsets, 20);
  EXPECT_GT(run_lengths, 20);
}

TEST(AckMetadata, DenseAcksChooseTheBitset) {
  PartitionAcks acks(0);
  for (std::int64_t offset = 0; offset < 1000; ++offset) ASSERT_TRUE(acks.try_track(offset));
  for (std::int64_t offset = 1; offset < 1000; offset += 2) acks.ack(offset);  // every other one
  const std::string metadata = acks.encode_metadata();
  EXPECT_EQ(encoding_of(metadata), 'B');
  EXPECT_EQ(metadata.size(), 176u);  // 1 + varint 0 + 1 + varint 1000 + 125 bytes = 130, in base64
  EXPECT_EQ(PartitionAcks::decode_metadata(metadata).size(), 500u);
}

TEST(AckMetadata, SparseLongRunsChooseRunLengths) {
  PartitionAcks acks(0, unbounded_outstanding());
  for (std::int64_t offset = 0; offset < 20'000; ++offset) ASSERT_TRUE(acks.try_track(offset));
  for (std::int64_t offset = 1000; offset < 20'000; ++offset) {
    if ((offset / 1000) % 2 == 1) acks.ack(offset);  // ten runs of a thousand
  }
  const std::string metadata = acks.encode_metadata();
  EXPECT_EQ(encoding_of(metadata), 'R');
  EXPECT_EQ(metadata.size(), 60u);  // 3 + 20 two-byte varints = 43 bytes, in base64
  EXPECT_EQ(PartitionAcks::decode_metadata(metadata).size(), 10'000u);
}

// Alternating acknowledged and unacknowledged offsets are the worst case for both encodings:
// the tracker must refuse the record that could make the metadata exceed the budget, not after.
TEST(AckMetadata, AlternatingAcksAreRefusedBeforeTheBudgetOverflows) {
  for (std::size_t budget : {16u, 64u, 256u, 4096u}) {
    PartitionAcksOptions options = unbounded_outstanding();
    options.metadata_budget_bytes = budget;
    PartitionAcks acks(0, options);
    std::int64_t offset = 0;
    for (; acks.try_track(offset); ++offset) {
      if (offset % 2 == 1) acks.ack(offset);
      if (budget <= 256 || offset % 64 == 0) {  // the size only grows here; the last is checked below
        ASSERT_LE(acks.encoded_size(), budget) << "budget " << budget << " offset " << offset;
      }
    }
    // Conservative, not wasteful: the refusal comes when the metadata is nearly full.
    const std::size_t size = acks.encode_metadata().size();
    EXPECT_EQ(acks.encoded_size(), size);
    EXPECT_LE(size, budget);
    EXPECT_GE(size + 8, budget * 9 / 10) << "budget " << budget << " refused at offset " << offset;
    // Acknowledging the slow record at the bottom lets tracking resume.
    acks.ack(0);
    EXPECT_TRUE(acks.try_track(offset)) << "budget " << budget;
  }
}

// A long window of few runs is cheap, so the run-length bound lets it grow past what a bitset
// could hold; records still outstanding in it can each split a run later, and the tracker must
// count them when it recounts the runs.
TEST(AckMetadata, OutstandingRecordsInALongWindowAreCountedBeforeTheirAcksSplitRuns) {
  PartitionAcksOptions options = unbounded_outstanding();
  options.metadata_budget_bytes = 64;
  PartitionAcks acks(0, options);
  ASSERT_TRUE(acks.try_track(0));  // the slow record
  for (std::int64_t offset = 1; offset <= 5000; ++offset) {
    ASSERT_TRUE(acks.try_track(offset)) << offset;
    acks.ack(offset);
  }
  std::vector<std::int64_t> held;
  for (std::int64_t offset = 5001; acks.try_track(offset); ++offset) held.push_back(offset);
  EXPECT_GE(held.size(), 4u);
  for (std::size_t i = 0; i < held.size(); i += 2) {
    acks.ack(held[i]);
    ASSERT_LE(acks.encoded_size(), 64u) << "after acking " << held[i];
  }
  EXPECT_EQ(acks.committable(), 0);
}

// Random acknowledgement patterns against small budgets: after every step the metadata fits,
// encoded_size() is exact, and the tracker refuses only while something is outstanding. Half
// of the rounds are adversarial: they hold the lowest record back and acknowledge isolated
// records, so that every acknowledgement adds a run.
TEST(AckMetadata, RandomWorkloadsNeverExceedTheBudget) {
  std::mt19937_64 rng(99);
  for (std::size_t budget : {16u, 20u, 40u, 100u, 300u}) {
    for (int round = 0; round < 40; ++round) {
      const bool adversarial = round % 4 >= 2;
      PartitionAcksOptions options = unbounded_outstanding();
      options.metadata_budget_bytes = budget;
      const std::int64_t base = round % 2 == 0 ? 0 : 1'000'000'000'000;
      PartitionAcks acks(base, options);
      ReferenceAcks reference(base);
      std::vector<std::int64_t> outstanding;
      std::int64_t next = base;
      const unsigned track_percent = 30 + static_cast<unsigned>(rng() % 60);
      for (int step = 0; step < 3000; ++step) {
        if (outstanding.empty() || rng() % 100 < track_percent) {
          if (acks.try_track(next)) {
            reference.track(next);
            outstanding.push_back(next);
            next += 1 + (rng() % 8 == 0 ? static_cast<std::int64_t>(rng() % 4) : 0);
          } else {
            ASSERT_FALSE(outstanding.empty()) << "refused with nothing outstanding";
          }
        } else {
          std::size_t pick = rng() % outstanding.size();
          if (adversarial && outstanding.size() > 1) {
            pick = 1 + rng() % (outstanding.size() - 1);
            for (int attempt = 0; attempt < 8 && (reference.is_acked(outstanding[pick] - 1) ||
                                                  reference.is_acked(outstanding[pick] + 1));
                 ++attempt) {
              pick = 1 + rng() % (outstanding.size() - 1);
            }
          }
          acks.ack(outstanding[pick]);
          reference.ack(outstanding[pick]);
          outstanding.erase(outstanding.begin() + static_cast<std::ptrdiff_t>(pick));
        }
        const std::string metadata = acks.encode_metadata();
        ASSERT_LE(metadata.size(), budget) << "budget " << budget << " round " << round << " step " << step;
        ASSERT_EQ(acks.encoded_size(), metadata.size());
        ASSERT_EQ(acks.committable(), reference.committable());
        if (step % 100 == 0) {
          ASSERT_EQ(offsets_of(PartitionAcks::decode_metadata(metadata)),
                    reference.acked_above_committable());
        }
      }
    }
  }
}

// The contract (ack_metadata.hpp): the payload encoding is the writer's size choice; a reader
// accepts either as long as it is canonical in itself.
TEST(AckMetadata, EitherPayloadEncodingOfOneSetDecodesToThatSet) {
  // {5, 6, 9} above committable 3: the encoder writes the bitset "AQNCB0w="; as run lengths
  // (2 unacked, 2 acked, 2 unacked, 1 acked) it is one byte longer.
  const AckedSet from_bitset = PartitionAcks::decode_metadata("AQNCB0w=");
  const AckedSet from_runs = PartitionAcks::decode_metadata("AQNSAgICAQ==");
  EXPECT_EQ(from_runs, from_bitset);
  EXPECT_EQ(PartitionAcks(from_runs).encode_metadata(), "AQNCB0w=");
  // {200} above 3: the encoder writes runs "AQNSxQEB"; a 198-bit bitset says the same.
  const AckedSet sparse_as_bitset =
      PartitionAcks::decode_metadata("AQNCxgEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAg");
  EXPECT_EQ(sparse_as_bitset, PartitionAcks::decode_metadata("AQNSxQEB"));
  EXPECT_EQ(PartitionAcks(sparse_as_bitset).encode_metadata(), "AQNSxQEB");
}

TEST(AckMetadata, CorruptMetadataThrowsCorruption) {
  const struct {
    const char* metadata;
    const char* why;
  } cases[] = {
      {"", "empty"},
      {"AQN", "not a multiple of 4"},
      {"AQN*", "not base64"},
      {"A=NS", "padding in the middle"},
      {"AR==", "non-canonical padding bits"},
      {"AgNS", "version 2"},
      {"AQ==", "no committable offset"},
      {"AQM=", "no encoding byte"},
      {"AQNY", "unknown encoding 'X'"},
      {"AQNSAAE=", "a zero-length run"},
      {"AQNSAg==", "an unacknowledged run without its acknowledged run"},
      {"AQNSgA==", "a truncated varint"},
      {"AYAAUg==", "an over-long varint"},
      {"Af///////////wFS", "a committable offset past INT64_MAX"},
      {"Af7/////////f1IBAQ==", "runs past INT64_MAX - 1"},
      {"AQNS//////////9/AQ==", "a run overflowing the offsets"},
      {"AQNCBw==", "a truncated bitset"},
      {"AQNCB0wA", "bytes after the bitset"},
      {"AQNCB00=", "the committable offset marked acknowledged"},
      {"AQNCB8w=", "a bit past the bit count"},
      {"AQNCBww=", "a bitset ending unacknowledged"},
  };
  for (const auto& corrupt : cases) {
    SCOPED_TRACE(corrupt.why);
    EXPECT_STATE_ERROR(PartitionAcks::decode_metadata(corrupt.metadata), ErrorKind::Corruption,
                       "acknowledgement metadata");
  }
}

// ---------------------------------------------------------------------------------------------
// Restart

TEST(AckRestart, SkipsExactlyTheAcknowledgedRecordsAfterARestart) {
  std::mt19937_64 rng(1234);
  for (int round = 0; round < 20; ++round) {
    PartitionAcks before(0);
    for (std::int64_t offset = 0; offset < 1000; ++offset) ASSERT_TRUE(before.try_track(offset));
    std::set<std::int64_t> processed;
    const unsigned percent = static_cast<unsigned>(rng() % 101);
    for (std::int64_t offset = 0; offset < 1000; ++offset) {
      if (rng() % 100 < percent) {
        before.ack(offset);
        processed.insert(offset);
      }
    }
    const std::string metadata = before.encode_metadata();

    const AckedSet restored = PartitionAcks::decode_metadata(metadata);
    PartitionAcks after(restored);
    EXPECT_EQ(after.committable(), before.committable());
    EXPECT_EQ(after.encode_metadata(), metadata);
    std::vector<std::int64_t> reprocessed;
    for (std::int64_t offset = restored.committable; offset < 1000; ++offset) {
      if (restored.contains(offset)) continue;
      ASSERT_TRUE(after.try_track(offset));
      reprocessed.push_back(offset);
    }
    for (std::int64_t offset : reprocessed) {
      EXPECT_EQ(processed.count(offset), 0u) << "offset " << offset << " was processed twice";
      processed.insert(offset);
      after.ack(offset);
    }
    EXPECT_EQ(processed.size(), 1000u) << "a record was never processed";
    EXPECT_EQ(after.committable(), 1000);
    EXPECT_EQ(after.outstanding(), 0u);
  }
}

TEST(AckRestart, RecordsNotYetReconsumedHoldCommittable) {
  const AckedSet restored{10, {{12, 13}, {20, 20}}};
  PartitionAcks acks(restored);
  EXPECT_EQ(acks.committable(), 10);
  EXPECT_EQ(PartitionAcks::decode_metadata(acks.encode_metadata()), restored);
  ASSERT_TRUE(acks.try_track(10));
  acks.ack(10);
  EXPECT_EQ(acks.committable(), 11);  // 11 is a record not yet re-consumed
  ASSERT_TRUE(acks.try_track(11));
  acks.ack(11);
  EXPECT_EQ(acks.committable(), 14);  // past the restored 12 and 13
  // The consumer finds 14..17 compacted away: tracking 18 makes them gaps.
  ASSERT_TRUE(acks.try_track(18));
  EXPECT_EQ(acks.committable(), 18);
  acks.ack(18);
  EXPECT_EQ(acks.committable(), 19);
  ASSERT_TRUE(acks.try_track(21));  // 19 compacted, 20 restored
  EXPECT_EQ(acks.committable(), 21);
  EXPECT_EQ(PartitionAcks::decode_metadata(acks.encode_metadata()), (AckedSet{21, {}}));
}

TEST(AckRestart, TrackingOrAcknowledgingARestoredAcknowledgementThrows) {
  PartitionAcks acks(AckedSet{0, {{1, 2}, {200, 200}}});
  EXPECT_STATE_ERROR(acks.ack(1), ErrorKind::InvalidArgument, "before the restart");
  EXPECT_STATE_ERROR(acks.try_track(1), ErrorKind::InvalidArgument, "before the restart");
  ASSERT_TRUE(acks.try_track(0));
  acks.ack(0);
  EXPECT_EQ(acks.committable(), 3);
  EXPECT_STATE_ERROR(acks.try_track(2), ErrorKind::InvalidArgument,
                     "before the restart");  // below committable
  EXPECT_STATE_ERROR(acks.try_track(200), ErrorKind::InvalidArgument, "before the restart");
  EXPECT_TRUE(acks.try_track(3));
}

TEST(AckRestart, MalformedOrOversizedRestoredSetsThrow) {
  EXPECT_STATE_ERROR(PartitionAcks(AckedSet{5, {{5, 6}}}), ErrorKind::InvalidArgument, "above 5");
  EXPECT_STATE_ERROR(PartitionAcks(AckedSet{5, {{9, 12}, {7, 8}}}), ErrorKind::InvalidArgument, "ascending");
  EXPECT_STATE_ERROR(PartitionAcks(AckedSet{5, {{9, 12}, {12, 14}}}), ErrorKind::InvalidArgument, "disjoint");
  EXPECT_STATE_ERROR(PartitionAcks(AckedSet{5, {{9, 8}}}), ErrorKind::InvalidArgument, "[9, 8]");
  PartitionAcksOptions small_window;
  small_window.max_window_offsets = 100;
  EXPECT_STATE_ERROR(PartitionAcks(AckedSet{0, {{200, 200}}}, small_window), ErrorKind::InvalidArgument,
                     "max_window_offsets");
  AckedSet alternating{0, {}};
  for (std::int64_t offset = 1; offset < 2000; offset += 2) alternating.acked.push_back({offset, offset});
  PartitionAcksOptions small_budget;
  small_budget.metadata_budget_bytes = 64;
  EXPECT_STATE_ERROR(PartitionAcks(alternating, small_budget), ErrorKind::InvalidArgument,
                     "metadata_budget_bytes");
}

// ---------------------------------------------------------------------------------------------
// AckedSet

TEST(AckedSet, ContainsExactlyItsRanges) {
  const AckedSet set{10, {{12, 13}, {20, 20}, {64, 130}}};
  std::vector<std::int64_t> contained;
  for (std::int64_t offset = 0; offset < 200; ++offset) {
    if (set.contains(offset)) contained.push_back(offset);
  }
  EXPECT_EQ(contained, offsets_of(set));
  EXPECT_EQ(set.size(), 70u);
  EXPECT_FALSE(AckedSet{}.contains(0));
}

// ---------------------------------------------------------------------------------------------
// Concurrency

TEST(PartitionAcksConcurrency, EightThreadsAckingDisjointSubsetsCommitEverything) {
  constexpr std::int64_t kRecords = 100'000;
  constexpr int kThreads = 8;
  PartitionAcks acks(0, roomy());
  for (std::int64_t offset = 0; offset < kRecords; ++offset) ASSERT_TRUE(acks.try_track(offset));

  std::vector<std::vector<std::int64_t>> subsets(kThreads);
  std::mt19937_64 rng(8);
  for (std::int64_t offset = 0; offset < kRecords; ++offset) subsets[rng() % kThreads].push_back(offset);
  for (auto& subset : subsets) std::shuffle(subset.begin(), subset.end(), rng);

  std::atomic<bool> start{false};
  std::atomic<int> failed_acks{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      while (!start.load()) std::this_thread::yield();
      for (std::int64_t offset : subsets[t]) {
        if (!acks.ack(offset)) ++failed_acks;
      }
    });
  }
  std::int64_t highest_seen = 0;
  int backwards = 0;
  start = true;
  while (acks.outstanding() > 0) {
    const std::int64_t committable = acks.committable();
    if (committable < highest_seen) ++backwards;
    highest_seen = committable;
  }
  for (auto& worker : workers) worker.join();
  EXPECT_EQ(failed_acks.load(), 0);
  EXPECT_EQ(backwards, 0);
  EXPECT_EQ(acks.committable(), kRecords);
  EXPECT_EQ(acks.outstanding(), 0u);
}

// The poll thread tracks under back-pressure while workers acknowledge and a committer reads
// snapshots: committable() never moves backwards and never passes a record not yet acknowledged.
TEST(PartitionAcksConcurrency, TrackingWhileWorkersAcknowledgeCommitsInOrder) {
  constexpr std::int64_t kRecords = 50'000;
  PartitionAcksOptions options;
  options.max_outstanding = 512;
  options.metadata_budget_bytes = 256;
  PartitionAcks acks(0, options);

  std::mutex queue_mutex;
  std::deque<std::int64_t> queue;
  std::atomic<bool> tracked_all{false};
  std::atomic<std::int64_t> acked_count{0};
  std::vector<std::atomic<bool>> acked(kRecords);  // gaps count as acknowledged: not records
  for (std::int64_t offset = 10; offset < kRecords; offset += 10)
    acked[static_cast<std::size_t>(offset)] = true;

  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<std::uint64_t>(t));
      std::vector<std::int64_t> held;  // acknowledged later, out of order
      for (;;) {
        std::int64_t offset = -1;
        {
          std::lock_guard lock(queue_mutex);
          if (!queue.empty()) {
            offset = queue.front();
            queue.pop_front();
          }
        }
        if (offset >= 0) held.push_back(offset);
        if (!held.empty() && (offset < 0 || rng() % 4 == 0 || held.size() > 16)) {
          const std::size_t pick = rng() % held.size();
          acked[static_cast<std::size_t>(held[pick])] = true;
          acks.ack(held[pick]);
          ++acked_count;
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(pick));
        } else if (offset < 0) {
          if (tracked_all.load()) return;
          std::this_thread::yield();
        }
      }
    });
  }
  std::atomic<int> violations{0};
  std::atomic<bool> done{false};
  std::thread committer([&] {
    std::int64_t highest_seen = 0;
    while (!done.load()) {
      const PartitionAcks::Snapshot snapshot = acks.snapshot();
      if (snapshot.committable < highest_seen) ++violations;
      highest_seen = snapshot.committable;
      // Every record below committable was acknowledged (acked[] is set before ack()).
      for (std::int64_t offset = std::max<std::int64_t>(0, snapshot.committable - 64);
           offset < snapshot.committable; ++offset) {
        if (!acked[static_cast<std::size_t>(offset)]) ++violations;
      }
      if (snapshot.metadata.size() > 256 ||
          PartitionAcks::decode_metadata(snapshot.metadata).committable != snapshot.committable) {
        ++violations;
      }
    }
  });

  for (std::int64_t offset = 0; offset < kRecords; offset += (offset % 10 == 9 ? 2 : 1)) {
    while (!acks.try_track(offset)) std::this_thread::yield();  // paused: wait for acknowledgements
    std::lock_guard lock(queue_mutex);
    queue.push_back(offset);
  }
  tracked_all = true;
  for (auto& worker : workers) worker.join();
  done = true;
  committer.join();

  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(acks.outstanding(), 0u);
  EXPECT_EQ(acks.committable(), kRecords);
}

}  // namespace
}  // namespace processor::kafka
