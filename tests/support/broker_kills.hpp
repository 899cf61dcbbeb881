#pragma once
// Broker failures on a schedule, for the kill tests on a cluster (OwnedBroker with nodes > 1): one
// node at a time SIGKILLed, node 1, 2, 3, 1, ..., and restarted on its data a while later.

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "owned_broker.hpp"

namespace processor::testing {

struct BrokerKillSchedule {
  int kills = 5;
  int nodes = 3;
  std::chrono::milliseconds first{5'000};   // the first kill, from the call
  std::chrono::milliseconds every{11'000};  // from one kill to the next
  std::chrono::milliseconds down_for{6'000};
};

// Runs the schedule (blocking: call it from a thread of its own); returns how many kills were
// followed by their node's restart. A node that does not come back fails the test.
inline int kill_brokers(OwnedBroker& cluster, const BrokerKillSchedule& schedule) {
  const auto started = std::chrono::steady_clock::now();
  int done = 0;
  for (int kill = 0; kill < schedule.kills; ++kill) {
    std::this_thread::sleep_until(started + schedule.first + kill * schedule.every);
    const int node = kill % schedule.nodes + 1;
    try {
      cluster.kill_node(node);
      std::cerr << "SIGKILL broker node " << node << " (" << kill + 1 << ")\n";
      std::this_thread::sleep_for(schedule.down_for);
      const double took = cluster.restart_node(node);
      std::cerr << "broker node " << node << " back in " << took << " s\n";
      ++done;
    } catch (const std::exception& error) {
      ADD_FAILURE() << "broker node " << node << ": " << error.what();
      return done;
    }
  }
  return done;
}

}  // namespace processor::testing
