#pragma once
// Reads the journals of parallel_worker processes (one file per process incarnation, format in
// parallel_worker.cpp) and checks them against what was produced: every record processed at
// least once, and the order in which each key's records were tried.
//
// The order property (ProcessingOrder::Key with retries, rebalances and kills). Within one
// process, between two assignments of a partition, the tries of one key's records form the
// sequence
//     S(o1) F(o1) S(o1) ... D(o1)  S(o2) ... D(o2)  ...      with o1 < o2 < ...
// that is:
//   - a try starts only after the key's previous try ended (no two of its records at once:
//     `overlaps`);
//   - after a try failed, the next try of that key is the same record again: a later record never
//     overtakes one waiting for its retry (`overtaken`);
//   - a record starts only above the key's last record done: never again, never backwards
//     (`backwards`);
//   - only while the partition is assigned: never after its revoke, which drains the running
//     records first (`started_unassigned`). After a loss nothing is drained: a record a worker
//     took just before it may journal its start just after the loss; such starts are counted
//     (`started_after_loss`), not violations.
// Going back is allowed only across an assignment of the partition (a rebalance: the new
// assignment resumes at the committed offset) or across processes (a kill: the next owner
// resumes there) — the replays. Tries still running when their partition was revoked may end
// after it (abandoned records); such late endings belong to the previous assignment and are
// not checked against the new one.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace processor::testing {

struct ProducedRecord {
  std::string key;
  std::string seq;  // the value: the key's sequence number
};
using ProducedLog = std::vector<std::vector<ProducedRecord>>;  // [partition][offset]

struct JournalFindings {
  std::size_t incarnations = 0;
  std::size_t tries = 0;            // S lines
  std::size_t failures = 0;         // F lines
  std::size_t slow_sleeps = 0;      // W lines: the slow record's long sleep began
  std::size_t replays = 0;          // D lines beyond the first of a record
  std::size_t missing = 0;          // produced records with no D line anywhere
  std::size_t wrong_values = 0;     // D lines whose key or seq is not what was produced there
  std::size_t overlaps = 0;
  std::size_t overtaken = 0;
  std::size_t backwards = 0;
  std::size_t started_unassigned = 0;
  std::size_t started_after_loss = 0;  // not a violation: see above
  std::vector<std::string> examples;  // the first violations, for the failure message

  std::size_t order_violations() const { return overlaps + overtaken + backwards + started_unassigned; }
};

namespace detail {

struct KeyState {
  std::optional<std::int64_t> running;    // the offset of the try under way
  std::optional<std::int64_t> retrying;   // a record whose try failed, not done yet
  std::optional<std::int64_t> last_done;
};

inline void note(JournalFindings& findings, std::size_t& counter, const std::string& what) {
  ++counter;
  if (findings.examples.size() < 8) findings.examples.push_back(what);
}

}  // namespace detail

inline JournalFindings check_journals(const std::vector<std::filesystem::path>& journals, const ProducedLog& produced) {
  JournalFindings findings;
  std::map<std::pair<int, std::int64_t>, std::size_t> done;  // (partition, offset) -> D lines
  for (const auto& path : journals) {
    ++findings.incarnations;
    std::ifstream in(path);
    std::set<int> assigned;
    std::set<int> lost;  // lost since their last assignment
    std::map<std::pair<int, std::string>, detail::KeyState> keys;  // (partition, key)
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      char kind = 0;
      fields >> kind;
      if (kind == 'A' || kind == 'V' || kind == 'L') {
        for (int p; fields >> p;) {
          if (kind == 'A') {
            assigned.insert(p);
            lost.erase(p);
            std::erase_if(keys, [p](const auto& entry) { return entry.first.first == p; });
          } else {
            assigned.erase(p);
            if (kind == 'L') lost.insert(p);
          }
        }
        continue;
      }
      int p = 0;
      std::int64_t o = 0;
      std::string key, seq;
      int attempt = 0;
      if (!(fields >> p >> o >> key >> seq)) continue;  // a line cut by the kill
      fields >> attempt;
      const std::string where = path.filename().string() + ": " + line;
      auto& state = keys[{p, key}];
      if (kind == 'W') ++findings.slow_sleeps;
      if (kind == 'S') {
        ++findings.tries;
        if (lost.count(p) != 0) {
          ++findings.started_after_loss;
        } else if (assigned.count(p) == 0) {
          detail::note(findings, findings.started_unassigned, "started unassigned: " + where);
        }
        if (state.running) {
          detail::note(findings, findings.overlaps, "overlaps " + std::to_string(*state.running) + ": " + where);
        } else if (state.retrying && *state.retrying != o) {
          detail::note(findings, findings.overtaken, "overtakes " + std::to_string(*state.retrying) + ": " + where);
        } else if (!state.retrying && state.last_done && o <= *state.last_done) {
          detail::note(findings, findings.backwards, "after " + std::to_string(*state.last_done) + " done: " + where);
        }
        state.running = o;
      } else if (kind == 'F') {
        ++findings.failures;
        if (state.running == o) {
          state.running.reset();
          state.retrying = o;
        }
      } else if (kind == 'D') {
        ++done[{p, o}];
        const bool known = p >= 0 && static_cast<std::size_t>(p) < produced.size() && o >= 0 &&
                           static_cast<std::size_t>(o) < produced[static_cast<std::size_t>(p)].size();
        if (!known || produced[static_cast<std::size_t>(p)][static_cast<std::size_t>(o)].key != key ||
            produced[static_cast<std::size_t>(p)][static_cast<std::size_t>(o)].seq != seq) {
          detail::note(findings, findings.wrong_values, "not what was produced: " + where);
        }
        if (state.running == o) {
          state.running.reset();
          state.retrying.reset();
          state.last_done = o;
        }
      }
    }
  }
  for (std::size_t p = 0; p < produced.size(); ++p) {
    for (std::size_t o = 0; o < produced[p].size(); ++o) {
      const auto it = done.find({static_cast<int>(p), static_cast<std::int64_t>(o)});
      if (it == done.end()) {
        if (findings.missing++ < 3) findings.examples.push_back("never done: " + std::to_string(p) + "/" + std::to_string(o));
      } else {
        findings.replays += it->second - 1;
      }
    }
  }
  return findings;
}

}  // namespace processor::testing
