#include "dpmu/runtime/ledger.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "temp_dir.hpp"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;
namespace rt = dpmu::runtime;

namespace {

struct TempDir : dpmu::test::TempDir {
  TempDir() : dpmu::test::TempDir("dpmu_ledger_test") {}
};

void write_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

const std::string kFpA(64, 'a');
const std::string kFpB(64, 'b');

rt::LedgerEntry entry(const std::string& fp, double epsilon, double delta = 0.0) {
  rt::LedgerEntry e;
  e.command = "dpmu test";
  e.data_file = fp == kFpA ? "a.csv" : "b.csv";
  e.data_fingerprint = fp;
  e.epsilon = epsilon;
  e.delta = delta;
  e.released = {"log_statistic"};
  return e;
}

/// A valid ledger line with one field replaced (or removed if `value` is empty).
std::string line_with(const std::string& field, const std::string& value) {
  nlohmann::json j = {{"time", "2024-01-01T00:00:00Z"}, {"command", "dpmu bma"}, {"data_file", "a.csv"},
                      {"data_fingerprint", kFpA},       {"epsilon", 1.0},        {"delta", 0.0},
                      {"released", {"coefficients"}}};
  if (value.empty()) {
    j.erase(field);
  } else {
    j[field] = nlohmann::json::parse(value);
  }
  return j.dump() + "\n";
}

}  // namespace

TEST_CASE("ledger: sha256_file gives known digests and names a file it cannot read", "[ledger]") {
  TempDir dir;
  write_file(dir / "abc", "abc");
  CHECK(rt::sha256_file(dir / "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  write_file(dir / "empty", "");
  CHECK(rt::sha256_file(dir / "empty") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // More than one read buffer: one million 'a' (FIPS 180-2 test vector).
  write_file(dir / "million", std::string(1000000, 'a'));
  CHECK(rt::sha256_file(dir / "million") == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  CHECK_THROWS_WITH(rt::sha256_file(dir / "nosuch"), Contains("nosuch"));
  CHECK_THROWS_AS(rt::sha256_file(dir.path.string()), std::runtime_error);  // a directory
}

TEST_CASE("ledger: parse_budget accepts an epsilon and an optional delta and otherwise names --budget", "[ledger]") {
  auto b = rt::parse_budget("2");
  CHECK(b.epsilon == 2.0);
  CHECK(b.delta == 0.0);
  b = rt::parse_budget("2,1e-6");
  CHECK(b.epsilon == 2.0);
  CHECK(b.delta == 1e-6);
  b = rt::parse_budget("0.5,0");
  CHECK(b.epsilon == 0.5);
  CHECK(b.delta == 0.0);
  for (const char* bad :
       {"", "-1", "0", "1,2", "1,1", "1,-0.1", "nan", "inf", "1,nan", "1,", ",1", "a", "1a", "1,2,3", " 1"}) {
    INFO(bad);
    CHECK_THROWS_AS(rt::parse_budget(bad), std::invalid_argument);
    CHECK_THROWS_WITH(rt::parse_budget(bad), Contains("--budget") && Contains("EPS,DELTA"));
  }
  CHECK_THROWS_WITH(rt::parse_budget("1,2"), Contains("delta is 2"));
  CHECK_THROWS_WITH(rt::parse_budget("-1"), Contains("epsilon is -1"));
}

TEST_CASE("ledger: LedgerLock::check refuses exactly when a total would exceed the budget", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  {
    rt::LedgerLock lock(path);
    lock.append(entry(kFpA, 0.5, 1e-7));
    lock.append(entry(kFpA, 0.25));
  }
  rt::LedgerLock lock(path);
  REQUIRE(lock.entries().size() == 2);
  const rt::Budget budget{1.0, 1e-6};
  // epsilon: 0.75 spent; 0.25 fits exactly, a little more does not.
  CHECK_NOTHROW(lock.check(kFpA, "a.csv", 0.25, 0.0, budget));
  CHECK_NOTHROW(lock.check(kFpA, "a.csv", 0.25 * (1 + 1e-14), 0.0, budget));  // rounding tolerance
  CHECK_THROWS_AS(lock.check(kFpA, "a.csv", 0.2501, 0.0, budget), rt::BudgetExceeded);
  // delta: 1e-7 spent; 9e-7 fits, 1e-6 does not (epsilon within budget).
  CHECK_NOTHROW(lock.check(kFpA, "a.csv", 0.1, 9e-7, budget));
  CHECK_THROWS_AS(lock.check(kFpA, "a.csv", 0.1, 1e-6, budget), rt::BudgetExceeded);
  // A pure-epsilon budget refuses any delta > 0.
  CHECK_THROWS_AS(lock.check(kFpB, "b.csv", 0.1, 1e-9, rt::Budget{1.0, 0.0}), rt::BudgetExceeded);
  // Another data set is not charged.
  CHECK_NOTHROW(lock.check(kFpB, "b.csv", 1.0, 1e-6, budget));
  // No budget: nothing is refused.
  CHECK_NOTHROW(lock.check(kFpA, "a.csv", 100.0, 0.5, std::nullopt));
  // The message says the data file, spent, requested and budget.
  CHECK_THROWS_WITH(lock.check(kFpA, "a.csv", 0.5, 0.0, budget), Contains("a.csv") && Contains("spent epsilon=0.75") &&
                                                                     Contains("requests epsilon=0.5") &&
                                                                     Contains("budget is epsilon=1"));
  // Bad arguments are not budget refusals.
  CHECK_THROWS_AS(lock.check(kFpA, "a.csv", -0.1, 0.0, budget), std::invalid_argument);
  CHECK_THROWS_AS(lock.check(kFpA, "a.csv", std::nan(""), 0.0, budget), std::invalid_argument);
  CHECK_THROWS_AS(lock.check(kFpA, "a.csv", 0.1, 0.0, rt::Budget{0.0, 0.0}), std::invalid_argument);
  // An entry appended through the lock is charged by later checks.
  lock.append(entry(kFpA, 0.25));
  CHECK_THROWS_AS(lock.check(kFpA, "a.csv", 0.01, 0.0, budget), rt::BudgetExceeded);
}

TEST_CASE("ledger_totals sums per fingerprint and lists distinct file names in order", "[ledger]") {
  std::vector<rt::LedgerEntry> entries = {entry(kFpA, 0.5, 1e-7), entry(kFpB, 2.0), entry(kFpA, 0.25)};
  entries[2].data_file = "renamed.csv";
  entries.push_back(entry(kFpA, 0.25));
  const auto totals = rt::ledger_totals(entries);
  REQUIRE(totals.size() == 2);
  const auto& a = totals.at(kFpA);
  CHECK(a.epsilon == 1.0);
  CHECK(a.delta == 1e-7);
  CHECK(a.releases == 3);
  CHECK(a.data_files == std::vector<std::string>{"a.csv", "renamed.csv"});
  CHECK(totals.at(kFpB).epsilon == 2.0);
  CHECK(totals.at(kFpB).releases == 1);
  CHECK(rt::ledger_totals({}).empty());
}

TEST_CASE("ledger: append then read round-trips and a missing ledger is empty", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  CHECK(rt::read_ledger(path).empty());
  CHECK_FALSE(fs::exists(path));                     // reading does not create it
  rt::LedgerEntry e = entry(kFpA, 0.1 + 0.2, 1e-9);  // not exactly representable in decimal: must round-trip
  e.data_file = "dir with space/\"quoted\".csv";
  e.released = {{"fields", {"coefficients", "posterior"}}, {"n", 97}};
  {
    rt::LedgerLock lock(path);
    CHECK(lock.entries().empty());
    lock.append(e);
    rt::LedgerEntry timed = entry(kFpB, 1.0);
    timed.time = "2020-02-02T02:02:02Z";
    lock.append(timed);
    REQUIRE(lock.entries().size() == 2);
    CHECK(lock.entries()[0].time.size() == 20);  // filled: YYYY-MM-DDTHH:MM:SSZ
  }
  const auto back = rt::read_ledger(path);
  REQUIRE(back.size() == 2);
  CHECK(back[0].time.size() == 20);
  CHECK(back[0].time.back() == 'Z');
  CHECK(back[0].command == e.command);
  CHECK(back[0].data_file == e.data_file);
  CHECK(back[0].data_fingerprint == kFpA);
  CHECK(back[0].epsilon == e.epsilon);  // bit-exact
  CHECK(back[0].delta == e.delta);
  CHECK(back[0].released == e.released);
  CHECK(back[1].time == "2020-02-02T02:02:02Z");
  CHECK(back[1].data_fingerprint == kFpB);
  // One line per entry, each newline-terminated.
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
  CHECK(text.back() == '\n');
  // An invalid entry is refused and nothing is written.
  {
    rt::LedgerLock lock(path);
    CHECK_THROWS_AS(lock.append(entry("notahash", 1.0)), std::invalid_argument);
    CHECK_THROWS_AS(lock.append(entry(kFpA, -1.0)), std::invalid_argument);
    CHECK(lock.entries().size() == 2);
  }  // (read_ledger while this thread holds the lock would wait forever)
  CHECK(rt::read_ledger(path).size() == 2);
}

TEST_CASE("ledger: a damaged ledger is an error naming the file and the line and is never reset", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  const std::string good = line_with("epsilon", "1.0");
  write_file(path, good + good);
  REQUIRE(rt::read_ledger(path).size() == 2);
  std::string overflow = good;  // a number beyond double (JSON has no inf; dump() would write null)
  overflow.replace(overflow.find("\"epsilon\":1.0"), 13, "\"epsilon\":1e999");

  struct Case {
    std::string contents;
    std::string line;
    std::string reason;
  };
  const std::string truncated = good.substr(0, good.size() / 2);
  const std::vector<Case> cases = {
      {good + truncated + "\n", "line 2", "not valid JSON"},
      {good + truncated, "line 2", "no newline"},                        // an interrupted write
      {good + good.substr(0, good.size() - 1), "line 2", "no newline"},  // complete JSON, newline missing
      {line_with("epsilon", "-0.5"), "line 1", "epsilon is -0.5"},
      {good + line_with("delta", "-1e-9"), "line 2", "delta is -1e-09"},
      {good + good + overflow, "line 3", "number overflow"},
      {line_with("epsilon", ""), "line 1", "missing field 'epsilon'"},
      {good + line_with("data_fingerprint", ""), "line 2", "missing field 'data_fingerprint'"},
      {line_with("released", ""), "line 1", "missing field 'released'"},
      {line_with("epsilon", "\"1\""), "line 1", "'epsilon' is not a number"},
      {line_with("data_fingerprint", "\"abc\""), "line 1", "not 64 lowercase hex"},
      {good + "\n" + good, "line 2", "empty line"},
      {"[1, 2]\n", "line 1", "not a JSON object"},
  };
  for (const auto& c : cases) {
    INFO(c.contents);
    write_file(path, c.contents);
    CHECK_THROWS_AS(rt::read_ledger(path), std::runtime_error);
    CHECK_THROWS_WITH(rt::read_ledger(path), Contains("ledger " + path + " " + c.line + ": ") && Contains(c.reason) &&
                                                 Contains("never reset"));
    CHECK_THROWS_WITH(rt::LedgerLock(path), Contains(c.line) && Contains(c.reason));
    // The file is left exactly as it was.
    std::ifstream in(path, std::ios::binary);
    CHECK(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) == c.contents);
  }
}

TEST_CASE("ledger: two LedgerLocks on one file serialize: the second waits for the first", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  std::atomic<bool> started{false};
  std::atomic<bool> acquired{false};
  std::size_t seen_by_second = 0;
  std::thread second;
  {
    rt::LedgerLock first(path);
    second = std::thread([&] {
      started = true;
      rt::LedgerLock lock(path);  // blocks until `first` is destroyed
      acquired = true;
      seen_by_second = lock.entries().size();
      lock.append(entry(kFpA, 2.0));
    });
    while (!started) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // give a non-blocking lock the chance to show
    CHECK_FALSE(acquired);
    first.append(entry(kFpA, 1.0));
    CHECK_FALSE(acquired);
  }  // releases the lock
  second.join();
  CHECK(acquired);
  // Whatever the timing, the second lock read the ledger only after the first appended.
  CHECK(seen_by_second == 1);
  const auto entries = rt::read_ledger(path);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].epsilon == 1.0);
  CHECK(entries[1].epsilon == 2.0);
}

TEST_CASE("ledger: concurrent processes cannot overspend a budget together", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  const rt::Budget budget{10.0, 0.0};
  constexpr int kProcesses = 4;
  constexpr int kAttempts = 5;  // 20 attempts of epsilon 1 against a budget of 10
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int accepted = 0;
      try {
        for (int i = 0; i < kAttempts; ++i) {
          rt::LedgerLock lock(path);
          try {
            lock.check(kFpA, "a.csv", 1.0, 0.0, budget);
          } catch (const rt::BudgetExceeded&) {
            continue;
          }
          lock.append(entry(kFpA, 1.0));
          ++accepted;
        }
      } catch (...) {
        ::_exit(100);
      }
      ::_exit(accepted);
    }
    children.push_back(pid);
  }
  int accepted = 0;
  for (const pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) <= kAttempts);
    accepted += WEXITSTATUS(status);
  }
  CHECK(accepted == 10);
  const auto entries = rt::read_ledger(path);
  CHECK(entries.size() == 10);
  CHECK(rt::ledger_totals(entries).at(kFpA).epsilon == 10.0);
}
