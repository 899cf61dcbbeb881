#include <chrono>
#include <iostream>
#include <memory>
#include <processor/kafka.hpp>
#include <processor/state.hpp>

int main() {
  using namespace processor;
  auto backend = std::make_shared<state::MemoryStateBackend>();
  auto store = std::make_shared<kafka::InMemoryOffsetStore>();

  kafka::OffsetManager manager("my-consumer-group", backend, store,
                               kafka::OffsetCommitStrategy::periodic(std::chrono::seconds(5)));

  manager.update_offset("my-topic", 0, 100);  // after processing an event
  manager.commit();
  auto lag = manager.lag("my-topic", 0, 200);
  std::cout << "Current lag: " << lag << "\n";
}
