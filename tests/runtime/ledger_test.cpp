#include "dpmu/runtime/ledger.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "dpmu/core/mechanisms.hpp"
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

const rt::Budget kBudget{10.0, 1e-6};

/// A new ledger at `path` with `budget`.
void make_ledger(const std::string& path, const rt::Budget& budget = kBudget) { rt::init_ledger(path, budget); }

/// The header line of the ledger at `path`.
std::string header_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line + "\n";
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

TEST_CASE("ledger: hmac_sha256_hex gives the RFC 4231 values", "[ledger]") {
  // RFC 4231 test case 2 (key "Jefe") and test case 1 (20 bytes 0x0b, "Hi There").
  CHECK(rt::hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(rt::hmac_sha256_hex(std::string(20, '\x0b'), "Hi There") ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST_CASE("ledger: init writes a header with the budget and a private key file, a ledger is never re-initialised",
          "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  make_ledger(path, rt::Budget{2.0, 1e-6});
  const rt::Ledger l = rt::read_ledger(path);
  CHECK(l.header.version == 2);
  CHECK(l.header.budget.epsilon == 2.0);
  CHECK(l.header.budget.delta == 1e-6);
  CHECK(l.header.key_id.size() == 16);
  CHECK(l.entries.empty());
  CHECK(l.budget().epsilon == 2.0);
  const auto key = rt::ledger_key_path(path);
  REQUIRE(fs::exists(key));
  CHECK((fs::status(key).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
  // The header names the key only by an id, never the key itself.
  std::ifstream k(key);
  std::string key_text;
  std::getline(k, key_text);
  CHECK(key_text.size() == 64);
  CHECK(header_of(path).find(key_text) == std::string::npos);
  CHECK_THROWS_WITH(rt::init_ledger(path, rt::Budget{5.0, 0.0}), Contains("never reset"));
  CHECK(rt::read_ledger(path).header.budget.epsilon == 2.0);
  CHECK_THROWS_AS(rt::init_ledger(dir / "bad.jsonl", rt::Budget{0.0, 0.0}), std::invalid_argument);
}

TEST_CASE("ledger: a missing ledger is created only with a budget, without one the message says how", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  CHECK_THROWS_WITH(rt::LedgerLock(path), Contains("does not exist") && Contains("dpmu ledger init"));
  CHECK_FALSE(fs::exists(path));  // not created
  CHECK_THROWS_WITH(rt::read_ledger(path), Contains("does not exist"));
  {
    rt::LedgerLock lock(path, rt::Budget{1.0, 0.0});
    CHECK(lock.created());
    CHECK(lock.ledger().budget().epsilon == 1.0);
  }
  {
    rt::LedgerLock lock(path, rt::Budget{50.0, 0.0});  // an existing ledger keeps its budget
    CHECK_FALSE(lock.created());
    CHECK(lock.ledger().budget().epsilon == 1.0);
  }
}

TEST_CASE("ledger: check refuses exactly when the ledger's total would exceed its budget", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  make_ledger(path, rt::Budget{1.0, 1e-6});
  {
    rt::LedgerLock lock(path);
    lock.append(entry(kFpA, 0.5, 1e-7));
    lock.append(entry(kFpB, 0.25));  // another data set in the same ledger counts towards its budget
  }
  rt::LedgerLock lock(path);
  REQUIRE(lock.entries().size() == 2);
  // epsilon: 0.75 spent; 0.25 fits exactly, a little more does not.
  CHECK_NOTHROW(lock.check(0.25, 0.0));
  CHECK_NOTHROW(lock.check(0.25 * (1 + 1e-14), 0.0));  // rounding tolerance
  CHECK_THROWS_AS(lock.check(0.2501, 0.0), rt::BudgetExceeded);
  // delta: 1e-7 spent; 9e-7 fits, 1e-6 does not.
  CHECK_NOTHROW(lock.check(0.1, 9e-7));
  CHECK_THROWS_AS(lock.check(0.1, 1e-6), rt::BudgetExceeded);
  // The message says the ledger, spent, requested and budget.
  CHECK_THROWS_WITH(lock.check(0.5, 0.0), Contains(path) && Contains("spent epsilon=0.75") &&
                                              Contains("requests epsilon=0.5") && Contains("budget is epsilon=1"));
  // A per-call budget may be lower (and then binds), never higher.
  CHECK_THROWS_AS(lock.check(0.1, 0.0, rt::Budget{0.8, 1e-6}), rt::BudgetExceeded);
  CHECK_NOTHROW(lock.check(0.05, 0.0, rt::Budget{0.8, 1e-6}));
  CHECK_THROWS_WITH(lock.check(0.01, 0.0, rt::Budget{2.4, 0.0}),
                    Contains("may only be lower") && Contains("set-budget"));
  CHECK_THROWS_AS(lock.check(0.01, 0.0, rt::Budget{1.0, 1e-5}), std::invalid_argument);
  // Bad arguments are not budget refusals.
  CHECK_THROWS_AS(lock.check(-0.1, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(lock.check(std::nan(""), 0.0), std::invalid_argument);
  CHECK_THROWS_AS(lock.check(0.1, 0.0, rt::Budget{0.0, 0.0}), std::invalid_argument);
  // An entry appended through the lock is charged by later checks.
  lock.append(entry(kFpA, 0.25));
  CHECK_THROWS_AS(lock.check(0.01, 0.0), rt::BudgetExceeded);
}

TEST_CASE("ledger: a budget change is recorded with its reason and binds from then on", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  make_ledger(path, rt::Budget{1.0, 0.0});
  {
    rt::LedgerLock lock(path);
    lock.append(entry(kFpA, 1.0));
    CHECK_THROWS_AS(lock.check(0.5, 0.0), rt::BudgetExceeded);
    CHECK_THROWS_AS(lock.change_budget(rt::Budget{2.0, 0.0}, ""), std::invalid_argument);  // a reason is required
    lock.change_budget(rt::Budget{2.0, 0.0}, "approved by the data custodian, ticket 17");
    CHECK_NOTHROW(lock.check(0.5, 0.0));
  }
  const rt::Ledger l = rt::read_ledger(path);
  REQUIRE(l.budget_changes.size() == 1);
  CHECK(l.budget_changes[0].reason == "approved by the data custodian, ticket 17");
  CHECK(l.budget().epsilon == 2.0);
  CHECK(l.header.budget.epsilon == 1.0);  // the original is kept
  CHECK(l.total().epsilon == 1.0);
}

TEST_CASE("ledger: fingerprints are keyed: the same bytes give different fingerprints under different ledgers",
          "[ledger]") {
  TempDir dir;
  make_ledger(dir / "a.jsonl");
  make_ledger(dir / "b.jsonl");
  rt::LedgerLock a(dir / "a.jsonl");
  rt::LedgerLock b(dir / "b.jsonl");
  const std::string data = "x,y\n1,2\n3,4\n";
  CHECK(a.fingerprint(data) == a.fingerprint(data));
  CHECK(a.fingerprint(data).size() == 64);
  CHECK(a.fingerprint(data) != b.fingerprint(data));
  CHECK(a.fingerprint(data) != a.fingerprint("x,y\n1,2\n3,5\n"));
  // Not the unkeyed SHA-256 (which anyone could recompute from a guessed data set).
  std::ofstream(dir / "d.csv", std::ios::binary) << data;
  CHECK(a.fingerprint(data) != rt::sha256_file(dir / "d.csv"));
}

TEST_CASE("ledger: a missing or foreign key file makes the ledger unusable, never reset", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  make_ledger(path);
  make_ledger(dir / "other.jsonl");
  const std::string key = rt::ledger_key_path(path);
  fs::rename(key, dir / "saved.key");
  CHECK_THROWS_WITH(rt::LedgerLock(path), Contains("key file") && Contains("restore"));
  fs::copy_file(rt::ledger_key_path(dir / "other.jsonl"), key);
  CHECK_THROWS_WITH(rt::LedgerLock(path), Contains("does not belong to this ledger"));
  fs::remove(key);
  fs::rename(dir / "saved.key", key);
  CHECK_NOTHROW(rt::LedgerLock(path));
}

TEST_CASE("ledger: a ledger without a header (dpmu < 0.2, or another file) is refused, never reset", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  write_file(path, line_with("epsilon", "1.0"));
  CHECK_THROWS_WITH(rt::read_ledger(path),
                    Contains("line 1") && Contains("not a dpmu ledger header") && Contains("dpmu ledger init"));
  CHECK_THROWS_WITH(rt::LedgerLock(path, kBudget), Contains("not a dpmu ledger header"));
  write_file(path,
             "{\"dpmu_ledger\": 3, \"created\": \"x\", \"budget\": {\"epsilon\": 1, \"delta\": 0}, "
             "\"key_id\": \"0\"}\n");
  CHECK_THROWS_WITH(rt::read_ledger(path), Contains("version 2"));
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
  rt::Ledger l;
  l.entries = entries;
  CHECK(l.total().epsilon == 3.0);
  CHECK(l.total().releases == 4);
}

TEST_CASE("ledger: append then read round-trips", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  make_ledger(path);
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
  const auto back = rt::read_ledger(path).entries;
  REQUIRE(back.size() == 2);
  CHECK(back[0].time.back() == 'Z');
  CHECK(back[0].command == e.command);
  CHECK(back[0].data_file == e.data_file);
  CHECK(back[0].data_fingerprint == kFpA);
  CHECK(back[0].epsilon == e.epsilon);  // bit-exact
  CHECK(back[0].delta == e.delta);
  CHECK(back[0].released == e.released);
  CHECK(back[1].time == "2020-02-02T02:02:02Z");
  // One line per entry after the header, each newline-terminated.
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);
  CHECK(text.back() == '\n');
  // An invalid entry is refused and nothing is written.
  {
    rt::LedgerLock lock(path);
    CHECK_THROWS_AS(lock.append(entry("notahash", 1.0)), std::invalid_argument);
    CHECK_THROWS_AS(lock.append(entry(kFpA, -1.0)), std::invalid_argument);
    CHECK(lock.entries().size() == 2);
  }  // (read_ledger while this thread holds the lock would wait forever)
  CHECK(rt::read_ledger(path).entries.size() == 2);
}

TEST_CASE("ledger: a damaged ledger is an error naming the file and the line and is never reset", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";
  make_ledger(path);
  const std::string header = header_of(path);
  const std::string good = line_with("epsilon", "1.0");
  write_file(path, header + good + good);
  REQUIRE(rt::read_ledger(path).entries.size() == 2);
  std::string overflow = good;  // a number beyond double (JSON has no inf; dump() would write null)
  overflow.replace(overflow.find("\"epsilon\":1.0"), 13, "\"epsilon\":1e999");

  struct Case {
    std::string contents;
    std::string line;
    std::string reason;
  };
  const std::string truncated = good.substr(0, good.size() / 2);
  const std::vector<Case> cases = {
      {header + good + truncated + "\n", "line 3", "not valid JSON"},
      {header + good + truncated, "line 3", "no newline"},                        // an interrupted write
      {header + good + good.substr(0, good.size() - 1), "line 3", "no newline"},  // complete JSON, newline missing
      {header + line_with("epsilon", "-0.5"), "line 2", "epsilon is -0.5"},
      {header + good + line_with("delta", "-1e-9"), "line 3", "delta is -1e-09"},
      {header + good + good + overflow, "line 4", "number overflow"},
      // each entry finite, the total not (before: read, and `dpmu ledger` printed the total as null)
      {header + line_with("epsilon", "1e308") + line_with("epsilon", "1e308"), "line 3", "overflows a double"},
      {header + line_with("epsilon", ""), "line 2", "missing field 'epsilon'"},
      {header + good + line_with("data_fingerprint", ""), "line 3", "missing field 'data_fingerprint'"},
      {header + line_with("released", ""), "line 2", "missing field 'released'"},
      {header + line_with("epsilon", "\"1\""), "line 2", "'epsilon' is not a number"},
      {header + line_with("data_fingerprint", "\"abc\""), "line 2", "not 64 lowercase hex"},
      {header + good + "\n" + good, "line 3", "empty line"},
      {header + "[1, 2]\n", "line 2", "not a JSON object"},
      {header + "{\"time\": \"t\", \"budget_change\": {\"epsilon\": -1, \"delta\": 0}, \"reason\": \"r\"}\n", "line 2",
       "a budget needs"},
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
  make_ledger(path);
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
  const auto entries = rt::read_ledger(path).entries;
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].epsilon == 1.0);
  CHECK(entries[1].epsilon == 2.0);
}

TEST_CASE("ledger: concurrent processes cannot overspend a budget together, nor create a ledger twice", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "ledger.jsonl";  // created by the first process to lock it
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
          rt::LedgerLock lock(path, budget);
          try {
            lock.check(1.0, 0.0);
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
  const rt::Ledger l = rt::read_ledger(path);
  CHECK(l.entries.size() == 10);
  CHECK(l.total().epsilon == 10.0);
}

// --- accountants (docs/privacy.md "Accountants") -------------------------------------------------

namespace {

/// A release of an analytic-Gaussian mechanism at (epsilon, delta) with its record (as
/// api::mechanism_record makes it from core::PrivacyGuarantee).
rt::LedgerEntry gaussian_entry(double epsilon, double delta) {
  rt::LedgerEntry e = entry(kFpA, epsilon, delta);
  rt::MechanismRecord m;
  m.kind = "gaussian";
  m.sensitivity_name = "l2_sensitivity";
  m.sensitivity = 0.25;
  m.noise_scale = dpmu::core::analytic_gaussian_sigma(epsilon, delta, 0.25);
  m.neighbouring = "replace one row";
  m.description = "analytic Gaussian noise";
  e.mechanism = m;
  return e;
}

rt::LedgerEntry laplace_entry(double epsilon) {
  rt::LedgerEntry e = entry(kFpA, epsilon, 0.0);
  e.mechanism = rt::MechanismRecord{"laplace", "l1_sensitivity", 0.5, 0.5 / epsilon, "replace one row", "Laplace"};
  return e;
}

/// Charge `e` to the ledger at `path` as a release does (check, then append, under one lock).
void charge(const std::string& path, const rt::LedgerEntry& e) {
  rt::LedgerLock lock(path);
  lock.check(e.epsilon, e.delta, std::nullopt, e.mechanism);
  lock.append(e);
}

}  // namespace

TEST_CASE(
    "ledger accountants: a budget of 2 lets 10 Gaussian releases at (0.5, 1e-6) through under tight, "
    "and refuses the 5th under basic",
    "[ledger]") {
  TempDir dir;
  const rt::Budget budget{2.0, 1e-5};
  const std::string tight = dir / "tight.ledger";
  rt::init_ledger(tight, budget, rt::Accountant::tight);
  for (int i = 0; i < 10; ++i) charge(tight, gaussian_entry(0.5, 1e-6));
  const rt::Ledger l = rt::read_ledger(tight);
  CHECK(l.accountant() == rt::Accountant::tight);
  CHECK(l.total().epsilon == Approx(5.0));
  const auto t = rt::tight_total(l.entries, 1e-5);
  CHECK(t.epsilon == Approx(1.5225256).epsilon(1e-6));
  const auto json = rt::accountant_total_json(rt::Accountant::tight, l.entries, 1e-5);
  CHECK(json["epsilon"].get<double>() == Approx(1.5225256).epsilon(1e-6));
  CHECK(json["delta"].get<double>() == 1e-5);
  CHECK(json["gaussian"]["releases"] == 10);
  // ... and an 11th still fits, the (k+1)-th that takes it past 2 does not.
  int more = 0;
  for (; more < 100; ++more) {
    try {
      charge(tight, gaussian_entry(0.5, 1e-6));
    } catch (const rt::BudgetExceeded& e) {
      CHECK_THAT(e.what(), Contains("accountant tight") && Contains("nothing was released"));
      break;
    }
  }
  CHECK(more > 0);
  CHECK(rt::tight_total(rt::read_ledger(tight).entries, 1e-5).epsilon <= 2.0);

  const std::string basic = dir / "basic.ledger";
  rt::init_ledger(basic, budget);  // basic by default
  CHECK(rt::read_ledger(basic).accountant() == rt::Accountant::basic);
  for (int i = 0; i < 4; ++i) charge(basic, gaussian_entry(0.5, 1e-6));
  CHECK_THROWS_AS(charge(basic, gaussian_entry(0.5, 1e-6)), rt::BudgetExceeded);
  CHECK(rt::read_ledger(basic).entries.size() == 4);
}

TEST_CASE("ledger accountants: the header records the accountant, old ledgers and entries keep working", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "l";
  rt::init_ledger(path, rt::Budget{3.0, 1e-5}, rt::Accountant::tight);
  CHECK_THAT(header_of(path), Contains("\"accountant\":\"tight\""));
  // An entry of an earlier dpmu (no "mechanism") is read and accounted by basic composition inside
  // the tight total, and charging goes on.
  std::ofstream(path, std::ios::app) << line_with("epsilon", "0.7");
  charge(path, gaussian_entry(0.5, 1e-6));
  charge(path, laplace_entry(0.3));
  const rt::Ledger l = rt::read_ledger(path);
  REQUIRE(l.entries.size() == 3);
  CHECK_FALSE(l.entries[0].mechanism.has_value());
  CHECK(rt::entry_family(l.entries[0]) == rt::EntryFamily::approximate);
  CHECK(rt::entry_family(l.entries[1]) == rt::EntryFamily::gaussian);
  CHECK(rt::entry_family(l.entries[2]) == rt::EntryFamily::pure);
  REQUIRE(l.entries[1].mechanism.has_value());
  CHECK(l.entries[1].mechanism->kind == "gaussian");
  CHECK(l.entries[1].mechanism->noise_scale == Approx(dpmu::core::analytic_gaussian_sigma(0.5, 1e-6, 0.25)));
  const auto t = rt::tight_total(l.entries, 1e-5);
  CHECK(t.approximate_epsilon == 0.7);
  CHECK(t.epsilon <= 0.7 + 0.5 + 0.3);
  CHECK(t.epsilon >= 0.7 + 0.5 * 0.9);

  // A version-2 header without "accountant" (dpmu before the accountants) is a basic ledger.
  const std::string old = dir / "old";
  rt::init_ledger(old, rt::Budget{1.0, 0.0});
  std::string text = header_of(old);
  const auto at = text.find(",\"accountant\":\"basic\"");
  REQUIRE(at != std::string::npos);
  text.erase(at, std::string(",\"accountant\":\"basic\"").size());
  write_file(old, text);
  CHECK(rt::read_ledger(old).accountant() == rt::Accountant::basic);
  charge(old, laplace_entry(0.6));
  CHECK_THROWS_AS(charge(old, laplace_entry(0.6)), rt::BudgetExceeded);
}

TEST_CASE("ledger accountants: a rho budget is checked by zCDP, releases without a zCDP bound are refused",
          "[ledger]") {
  CHECK(rt::parse_budget("rho=0.5").rho == 0.5);
  CHECK(rt::parse_budget("rho=0.5").is_zcdp());
  CHECK_FALSE(rt::parse_budget("2,1e-6").is_zcdp());
  CHECK(rt::budget_text(rt::parse_budget("rho=0.5")) == "rho=0.5");
  CHECK_THROWS_WITH(rt::parse_budget("rho=-1"), Contains("rho") && Contains("> 0"));
  CHECK_THROWS_WITH(rt::parse_budget("rho=x"), Contains("rho=RHO"));
  CHECK(rt::parse_accountant("tight") == rt::Accountant::tight);
  CHECK_THROWS_WITH(rt::parse_accountant("pld"), Contains("--accountant 'pld'"));

  TempDir dir;
  const std::string path = dir / "z";
  CHECK_THROWS_WITH(rt::init_ledger(path, rt::parse_budget("rho=0.1"), rt::Accountant::tight),
                    Contains("goes with the zcdp accountant"));
  CHECK_THROWS_WITH(rt::init_ledger(path, rt::Budget{1.0, 0.0}, rt::Accountant::zcdp), Contains("rho=RHO"));
  rt::init_ledger(path, rt::parse_budget("rho=0.1"));
  CHECK(rt::read_ledger(path).accountant() == rt::Accountant::zcdp);
  CHECK_THAT(header_of(path), Contains("\"budget\":{\"rho\":0.1}"));
  // One Gaussian release at (0.5, 1e-6): ρ = μ²/2 with μ = 0.1241 -> 0.0077; thirteen fit in 0.1.
  const double mu = dpmu::core::analytic_gaussian_mu(0.5, 1e-6);
  const int fit = static_cast<int>(std::floor(0.1 / (mu * mu / 2)));
  for (int i = 0; i < fit; ++i) charge(path, gaussian_entry(0.5, 1e-6));
  CHECK_THROWS_AS(charge(path, gaussian_entry(0.5, 1e-6)), rt::BudgetExceeded);
  CHECK(*rt::zcdp_total(rt::read_ledger(path).entries) == Approx(fit * mu * mu / 2));
  // A Wishart release is (ε, δ)-DP only: no zCDP bound, refused before anything is charged.
  rt::LedgerEntry w = entry(kFpA, 0.01, 1e-9);
  w.mechanism = rt::MechanismRecord{"wishart", "wishart_row_norm_squared", 2.0, 0.0, "replace one row", "Wishart"};
  CHECK_THROWS_WITH(charge(path, w), Contains("cannot be accounted in zCDP") && Contains("wishart"));
  // A per-call budget keeps the ledger's form; set-budget too.
  {
    rt::LedgerLock lock(path);
    CHECK_THROWS_WITH(lock.check(0.01, 0.0, rt::Budget{1.0, 0.0}), Contains("not of the form"));
    CHECK_THROWS_WITH(lock.change_budget(rt::Budget{1.0, 0.0}, "r"), Contains("keeps its form"));
    lock.change_budget(rt::parse_budget("rho=0.2"), "more");
  }
  charge(path, gaussian_entry(0.5, 1e-6));
  CHECK(rt::read_ledger(path).budget().rho == 0.2);
}

TEST_CASE("ledger accountants: a Gaussian record that claims less than its (epsilon, delta) is refused", "[ledger]") {
  TempDir dir;
  const std::string path = dir / "l";
  rt::init_ledger(path, rt::Budget{10.0, 1e-3}, rt::Accountant::tight);
  rt::LedgerEntry e = gaussian_entry(0.5, 1e-6);
  e.mechanism->noise_scale *= 0.9;  // less noise than (0.5, 1e-6) needs
  {
    rt::LedgerLock lock(path);
    CHECK_THROWS_WITH(lock.check(e.epsilon, e.delta, std::nullopt, e.mechanism), Contains("is not (0.5, 1e-06)-DP"));
    CHECK_THROWS_AS(lock.append(e), std::invalid_argument);
  }
  // ... and such a line in the file is damage.
  nlohmann::json j = nlohmann::json::parse(line_with("delta", "1e-6"));
  j["epsilon"] = 0.5;
  j["mechanism"] = {{"kind", "gaussian"},  {"sensitivity_name", "l2_sensitivity"},
                    {"sensitivity", 1.0},  {"noise_scale", 1.0},
                    {"neighbouring", "x"}, {"description", "y"}};
  std::ofstream(path, std::ios::app) << j.dump() << "\n";
  CHECK_THROWS_WITH(rt::read_ledger(path), Contains("line 2") && Contains("gaussian mechanism record"));
}
