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

#include <algorithm>
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
  std::size_t tries = 0;        // S lines
  std::size_t failures = 0;     // F lines
  std::size_t slow_sleeps = 0;  // W lines: the slow record's long sleep began
  std::size_t replays = 0;      // D lines beyond the first of a record
  // The replays by cause. Of a record's D lines the last one counted; each earlier one was
  // wasted because, after it, its process
  std::size_t replays_victim = 0;    //   was killed (or died) holding the partition, before committing it
  std::size_t replays_revoked = 0;   //   gave the partition up in a rebalance without committing it
  std::size_t replays_lost = 0;      //   lost the partition (session expired, fenced)
  std::size_t replays_late = 0;      //   (the D itself came after the revoke: abandoned by the drain)
  std::size_t replays_survivor = 0;  //   held it to its clean exit, or still holds it: its commit failed
  // Replays that a live member caused (none of the victim's), in total and per partition.
  std::size_t survivor_replays() const {
    return replays_revoked + replays_lost + replays_late + replays_survivor;
  }
  std::map<int, std::size_t> survivor_replays_by_partition;
  std::size_t missing = 0;       // produced records with no D line anywhere
  std::size_t wrong_values = 0;  // D lines whose key or seq is not what was produced there
  std::size_t overlaps = 0;
  std::size_t overtaken = 0;
  std::size_t backwards = 0;
  std::size_t started_unassigned = 0;
  std::size_t started_after_loss = 0;  // not a violation: see above
  std::vector<std::string> examples;   // the first violations, for the failure message

  std::size_t order_violations() const { return overlaps + overtaken + backwards + started_unassigned; }
};

namespace detail {

struct KeyState {
  std::optional<std::int64_t> running;   // the offset of the try under way
  std::optional<std::int64_t> retrying;  // a record whose try failed, not done yet
  std::optional<std::int64_t> last_done;
};

inline void note(JournalFindings& findings, std::size_t& counter, const std::string& what) {
  ++counter;
  if (findings.examples.size() < 8) findings.examples.push_back(what);
}

// What happened, after a D line, to the partition in the process that wrote it.
enum class Fate { Held, Died, Revoked, Lost, Late, Kept };

struct DoneLine {
  long long time_ms = 0;
  Fate fate = Fate::Held;  // Held until the journal says what came next
};

}  // namespace detail

// `died`: the file names of the journals whose process was killed or exited by itself.
inline JournalFindings check_journals(const std::vector<std::filesystem::path>& journals,
                                      const ProducedLog& produced, const std::set<std::string>& died = {}) {
  JournalFindings findings;
  std::map<std::pair<int, std::int64_t>, std::vector<detail::DoneLine>>
      done;  // (partition, offset) -> D lines
  for (const auto& path : journals) {
    ++findings.incarnations;
    const bool dead = died.count(path.filename().string()) != 0;
    std::ifstream in(path);
    std::set<int> assigned;
    std::set<int> lost;  // lost since their last assignment
    // partition -> its D lines since assigned, as (record, index in done[record])
    std::map<int, std::vector<std::pair<std::pair<int, std::int64_t>, std::size_t>>> done_in_assignment;
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
            for (const auto& [record, index] : done_in_assignment[p]) {
              done[record][index].fate = kind == 'L' ? detail::Fate::Lost : detail::Fate::Revoked;
            }
          }
          done_in_assignment.erase(p);
        }
        continue;
      }
      int p = 0;
      std::int64_t o = 0;
      std::string key, seq;
      int attempt = 0;
      long long time_ms = 0;
      if (!(fields >> p >> o >> key >> seq)) continue;  // a line cut by the kill
      fields >> attempt >> time_ms;
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
          detail::note(findings, findings.overlaps,
                       "overlaps " + std::to_string(*state.running) + ": " + where);
        } else if (state.retrying && *state.retrying != o) {
          detail::note(findings, findings.overtaken,
                       "overtakes " + std::to_string(*state.retrying) + ": " + where);
        } else if (!state.retrying && state.last_done && o <= *state.last_done) {
          detail::note(findings, findings.backwards,
                       "after " + std::to_string(*state.last_done) + " done: " + where);
        }
        state.running = o;
      } else if (kind == 'F') {
        ++findings.failures;
        if (state.running == o) {
          state.running.reset();
          state.retrying = o;
        }
      } else if (kind == 'D') {
        auto& lines = done[{p, o}];
        lines.push_back({time_ms, assigned.count(p) != 0 ? detail::Fate::Held : detail::Fate::Late});
        if (lines.back().fate == detail::Fate::Held) {
          done_in_assignment[p].emplace_back(std::make_pair(p, o), lines.size() - 1);
        }
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
    // The process ended (or runs on) holding these partitions.
    for (const auto& [partition, lines] : done_in_assignment) {
      for (const auto& [record, index] : lines)
        done[record][index].fate = dead ? detail::Fate::Died : detail::Fate::Kept;
    }
  }
  for (std::size_t p = 0; p < produced.size(); ++p) {
    for (std::size_t o = 0; o < produced[p].size(); ++o) {
      const auto it = done.find({static_cast<int>(p), static_cast<std::int64_t>(o)});
      if (it == done.end()) {
        if (findings.missing++ < 3)
          findings.examples.push_back("never done: " + std::to_string(p) + "/" + std::to_string(o));
      } else {
        std::vector<detail::DoneLine> lines = it->second;
        std::sort(lines.begin(), lines.end(),
                  [](const detail::DoneLine& a, const detail::DoneLine& b) { return a.time_ms < b.time_ms; });
        lines.pop_back();  // the last one counted
        findings.replays += lines.size();
        for (const detail::DoneLine& wasted : lines) {
          if (wasted.fate != detail::Fate::Died)
            ++findings.survivor_replays_by_partition[static_cast<int>(p)];
          switch (wasted.fate) {
            case detail::Fate::Died:
              ++findings.replays_victim;
              break;
            case detail::Fate::Revoked:
              ++findings.replays_revoked;
              break;
            case detail::Fate::Lost:
              ++findings.replays_lost;
              break;
            case detail::Fate::Late:
              ++findings.replays_late;
              break;
            case detail::Fate::Held:
            case detail::Fate::Kept:
              ++findings.replays_survivor;
              break;
          }
        }
      }
    }
  }
  return findings;
}

}  // namespace processor::testing
