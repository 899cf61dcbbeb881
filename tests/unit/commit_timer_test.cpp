// CommitTimer raises the attention flag of Periodic managers at their deadlines.
#include "kafka/manager/commit_timer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace processor::kafka::internal {
namespace {

using Clock = CommitTimer::Clock;
using std::chrono::milliseconds;

// Waits until `flag` is raised; false if it is not within a generous bound (a liveness check,
// not a timing assertion).
bool eventually_raised(const std::atomic<bool>& flag) {
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (!flag.load()) {
    if (Clock::now() > give_up) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

// Registrations of one test, removed at its end so that the process-wide timer never touches
// a flag after the test's stack is gone.
class Registrations {
 public:
  std::uint64_t add(std::atomic<bool>* flag) { return ids_[count_++] = CommitTimer::instance().add(flag); }
  ~Registrations() {
    for (std::size_t i = 0; i < count_; ++i) CommitTimer::instance().remove(ids_[i]);
  }

 private:
  std::uint64_t ids_[8]{};
  std::size_t count_ = 0;
};

TEST(CommitTimer, RaisesAnArmedFlagOnceItsDeadlinePasses) {
  std::atomic<bool> flag{false};
  Registrations registrations;
  const auto id = registrations.add(&flag);
  CommitTimer::instance().arm(id, Clock::now() + milliseconds(20));
  EXPECT_TRUE(eventually_raised(flag));
}

TEST(CommitTimer, NeverRaisesAFlagThatIsNotArmed) {
  std::atomic<bool> unarmed{false};
  std::atomic<bool> armed{false};
  Registrations registrations;
  registrations.add(&unarmed);
  CommitTimer::instance().arm(registrations.add(&armed), Clock::now());
  // The timer looks at every registration each time it wakes: once it raised `armed`, it has
  // passed over `unarmed`.
  ASSERT_TRUE(eventually_raised(armed));
  EXPECT_FALSE(unarmed.load());
}

TEST(CommitTimer, ArmingAgainReplacesTheEarlierDeadline) {
  std::atomic<bool> flag{false};
  Registrations registrations;
  const auto id = registrations.add(&flag);
  CommitTimer::instance().arm(id, Clock::now() + std::chrono::hours(1));
  CommitTimer::instance().arm(id, Clock::now());
  EXPECT_TRUE(eventually_raised(flag));
}

TEST(CommitTimer, RaisesOncePerArming) {
  std::atomic<bool> flag{false};
  std::atomic<bool> later{false};
  Registrations registrations;
  const auto id = registrations.add(&flag);
  CommitTimer::instance().arm(id, Clock::now());
  ASSERT_TRUE(eventually_raised(flag));
  flag.store(false);  // what a manager does when it commits
  CommitTimer::instance().arm(registrations.add(&later), Clock::now() + milliseconds(20));
  ASSERT_TRUE(eventually_raised(later));
  EXPECT_FALSE(flag.load()) << "raised again without being armed again";
  CommitTimer::instance().arm(id, Clock::now());
  EXPECT_TRUE(eventually_raised(flag));
}

TEST(CommitTimer, NeverTouchesARemovedFlag) {
  std::atomic<bool> removed{false};
  std::atomic<bool> kept{false};
  Registrations registrations;
  const auto id = CommitTimer::instance().add(&removed);
  // Far enough ahead that the removal comes first even on a loaded machine.
  CommitTimer::instance().arm(id, Clock::now() + milliseconds(300));
  CommitTimer::instance().remove(id);
  CommitTimer::instance().arm(registrations.add(&kept), Clock::now() + milliseconds(600));
  ASSERT_TRUE(eventually_raised(kept));
  EXPECT_FALSE(removed.load());
}

TEST(CommitTimer, ArmingAnUnknownRegistrationIsIgnored) {
  std::atomic<bool> flag{false};
  const auto id = CommitTimer::instance().add(&flag);
  CommitTimer::instance().remove(id);
  CommitTimer::instance().arm(id, Clock::now());  // a manager destroyed while a commit armed it
  std::atomic<bool> probe{false};
  Registrations registrations;
  CommitTimer::instance().arm(registrations.add(&probe), Clock::now());
  ASSERT_TRUE(eventually_raised(probe));
  EXPECT_FALSE(flag.load());
}

TEST(CommitTimer, ADeadlinePastTheClocksEndIsNever) {
  const auto now = Clock::now();
  EXPECT_EQ(CommitTimer::deadline_after(now, milliseconds(5)), now + milliseconds(5));
  EXPECT_EQ(CommitTimer::deadline_after(now, std::chrono::nanoseconds::max()), Clock::time_point::max());
  EXPECT_EQ(CommitTimer::deadline_after(Clock::time_point::max() - milliseconds(1), milliseconds(2)),
            Clock::time_point::max());
}

}  // namespace
}  // namespace processor::kafka::internal
