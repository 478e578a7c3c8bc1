// Reliability of the engine (docs/reliability.md): data-file identity and resolution, up-front
// data checks, the output lock, write failures, damaged results files, config limits.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/ledger.hpp"
#include "dpmu/runtime/results.hpp"
#include "dpmu/runtime/runner.hpp"
#include "engine_test_experiments.hpp"
#include "temp_dir.hpp"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;
namespace rt = dpmu::runtime;

namespace {

struct TempDir : dpmu::test::TempDir {
  TempDir() : dpmu::test::TempDir("dpmu_reliability_test") {}
};

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream o(p, std::ios::binary | std::ios::trunc);
  o << text;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The ConfigError message of a config that must fail (empty if it parses).
std::string config_error(const std::string& text, const std::string& source = "study.yaml") {
  dpmu_test::register_test_experiments();
  try {
    rt::parse_study(text, source);
  } catch (const rt::ConfigError& e) {
    return e.what();
  }
  return "";
}

const std::string kHead = "experiment: test_engine\nmaster_seed: 1\nreplicates: 10\n";

rt::RunOptions options(const fs::path& out) {
  rt::RunOptions o;
  o.out = out;
  o.threads = 1;
  o.quiet = true;
  return o;
}

/// A study of test_data reading `csv` (a path as written in the config) from a config in `dir`.
rt::StudySpec data_study(const fs::path& dir, const std::string& csv, const std::string& extra = "",
                         std::int64_t replicates = 20) {
  dpmu_test::register_test_experiments();
  return rt::parse_study("experiment: test_data\nmaster_seed: 3\nreplicates: " + std::to_string(replicates) +
                             "\nblock_size: 5\nparameters:\n  data_file: " + csv + "\n" + extra +
                             "grid:\n  scale: [1, 2]\n",
                         (dir / "study.yaml").string());
}

/// A process id that is certainly not running: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

}  // namespace

TEST_CASE("config: repeated values of an axis are an error naming the parameter (0 and -0.0, 1 and 1.0)",
          "[engine][config][reliability]") {
  CHECK_THAT(
      config_error(kHead + "grid:\n  lower: [0, -0.0]\n  n: [10]\n"),
      Contains("study.yaml:5: grid.lower[1]: '-0.0' repeats grid.lower[0] ('0'): both are the value 0 of lower"));
  CHECK_THAT(config_error(kHead + "grid:\n  n: [10, 10.0]\n"),
             Contains("grid.n[1]: '10.0' repeats grid.n[0] ('10'): both are the value 10 of n"));
  CHECK_THAT(config_error(kHead + "grid:\n  epsilon: [1, 2, 1.0]\n"),
             Contains("grid.epsilon[2]: '1.0' repeats grid.epsilon[0] ('1')"));
  CHECK_THAT(config_error(kHead + "grid:\n  mechanism: [laplace, laplace]\n"), Contains("grid.mechanism[1]"));
  CHECK_THAT(config_error(kHead + "grid:\n  epsilon: {from: 1, to: 1, count: 3}\n"), Contains("twice"));
  // zipped lists may repeat a value, not a whole row
  CHECK(config_error(kHead + "grid:\n  zip: {n: [10, 10], p: [1, 2]}\n").empty());
  CHECK_THAT(config_error(kHead + "grid:\n  zip: {n: [10, 10], p: [1, 1.0]}\n"),
             Contains("position 1 repeats position 0"));
  // -0.0 alone is the value 0 (one cell key)
  dpmu_test::register_test_experiments();
  const auto s = rt::parse_study(kHead + "parameters:\n  lower: -0.0\n", "study.yaml");
  CHECK(s.cells[0].get_double("lower") == 0.0);
  CHECK(!std::signbit(s.cells[0].get_double("lower")));
}

TEST_CASE("config: 1e3-style integers, one YAML document, a size limit checked before any cell is built",
          "[engine][config][reliability]") {
  dpmu_test::register_test_experiments();
  const auto s = rt::parse_study(
      "experiment: test_engine\nmaster_seed: 1e3\nreplicates: 1e3\nblock_size: 2.5e1\n"
      "grid:\n  n: {from: 10, to: 20, count: 2e0}\n",
      "study.yaml");
  CHECK(s.replicates == 1000);
  CHECK(s.block_size == 25);
  CHECK(s.master_seed == 1000);
  CHECK(s.cells.size() == 2);
  CHECK_THAT(config_error(kHead + "block_size: 2.5\n"), Contains("block_size: '2.5' is not an integer >= 1"));
  CHECK_THAT(config_error("experiment: test_engine\nmaster_seed: 1\nreplicates: 1.5e0\n"),
             Contains("'1.5e0' is not an integer >= 1"));
  CHECK_THAT(config_error(kHead + "---\nexperiment: normal_mean\n"),
             Contains("study.yaml:5: the file holds 2 YAML documents"));
  // 10^10 cells: refused at once with the computed size, before anything is expanded
  const auto start = std::chrono::steady_clock::now();
  const std::string huge = config_error(kHead +
                                        "grid:\n  n: {from: 10, to: 1000000, count: 100000}\n"
                                        "  epsilon: {from: 0.1, to: 10, count: 100000}\n");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK_THAT(huge, Contains("this block has 10000000000 cells (100000 (n) x 100000 (epsilon)); a study has at most "
                            "100000 cells"));
  CHECK_THAT(config_error(kHead + "grid:\n  n: {from: 10, to: 200010, count: 100001}\n"),
             Contains("this block has 100001 cells (100001 (n)); a study has at most 100000 cells"));
  CHECK_THAT(config_error(kHead + "grid:\n  n: {from: 10, to: 20, count: 1e9}\n"),
             Contains("a range has at most 1000000"));
  // nesting deeper than the YAML reader allows: a clear message, not "bad file"
  std::string deep = kHead + "description: ";
  for (int i = 0; i < 3000; ++i) deep += "[";
  for (int i = 0; i < 3000; ++i) deep += "]";
  const std::string nested = config_error(deep + "\n");
  CHECK_THAT(nested, Contains("nested more than"));
  CHECK_THAT(nested, !Contains("bad file"));
}

TEST_CASE("data files: paths resolve against the config's folder and are normalised in the cell key",
          "[engine][data][reliability]") {
  TempDir dir;
  fs::create_directories(dir / "sub");
  write_file(dir / "sim.csv", "x\n1\n2\n3\n4\n");
  write_file(dir / "sub" / "other.csv", "x\n5\n6\n7\n8\n");
  // The working directory is elsewhere: the config's folder decides.
  const auto cwd = fs::current_path();
  fs::current_path(fs::temp_directory_path());
  const auto a = data_study(dir.path, "sim.csv");
  const auto b = data_study(dir.path, "./sim.csv");
  const auto c = data_study(dir.path, "sub/../sim.csv");
  const auto d = data_study(dir.path, "sub//other.csv");
  fs::current_path(cwd);
  CHECK(a.cells[0].get_string("data_file") == "sim.csv");
  CHECK(a.cells[0].key() == b.cells[0].key());
  CHECK(a.cells[0].key() == c.cells[0].key());
  CHECK(a.fingerprint() == b.fingerprint());
  CHECK(d.cells[0].get_string("data_file") == "sub/other.csv");
  REQUIRE(a.data_files.size() == 1);
  CHECK(a.data_files[0].path == "sim.csv");
  CHECK(a.data_files[0].sha256 == rt::sha256_file((dir / "sim.csv").string()));
  CHECK(fs::equivalent(a.data_files[0].resolved, dir / "sim.csv"));
  CHECK_THAT(config_error("experiment: test_data\nmaster_seed: 3\nreplicates: 2\nparameters:\n  data_file: none.csv\n",
                          (dir / "study.yaml").string()),
             Contains("study.yaml:5: data_file: 'none.csv' does not exist"));
}

TEST_CASE("data files: their contents are in the study identity, resume and merge refuse other contents",
          "[engine][data][reliability]") {
  TempDir dir;
  write_file(dir / "sim.csv", "x\n1\n2\n3\n4\n");
  const auto before = data_study(dir.path, "sim.csv");
  // stopped after a few blocks
  dpmu_test::g_stop = false;
  auto stopped = options(dir / "r.h5");
  stopped.max_time_seconds = 1e-9;
  CHECK(!rt::run_study(before, stopped).complete);
  auto shard0 = options(dir / "s0.h5");
  shard0.shard = rt::parse_shard("0/2");
  rt::run_study(before, shard0);
  rt::run_study(before, options(dir / "done.h5"));

  write_file(dir / "sim.csv", "x\n1\n2\n3\n5\n");  // same path, one value changed
  const auto after = data_study(dir.path, "sim.csv");
  CHECK(after.fingerprint() != before.fingerprint());
  CHECK(after.cells[0].key() == before.cells[0].key());  // streams do not change, the identity does
  auto resume = options(dir / "r.h5");
  resume.resume = true;
  CHECK_THROWS_WITH(rt::run_study(after, resume),
                    Contains("the checkpoint was computed from other data: data file sim.csv differs"));
  auto done = options(dir / "done.h5");
  done.resume = true;
  CHECK_THROWS_WITH(rt::run_study(after, done), Contains("computed from other data: data file sim.csv differs"));
  auto shard1 = options(dir / "s1.h5");
  shard1.shard = rt::parse_shard("1/2");
  rt::run_study(after, shard1);
  CHECK_THROWS_WITH(rt::merge_results(dir / "m.h5", {dir / "s0.h5", dir / "s1.h5"}),
                    Contains("were computed from different data: data file sim.csv differs"));
  CHECK(!fs::exists(dir / "m.h5"));
  const auto r = rt::read_results(dir / "s1.h5");
  REQUIRE(r.info.data_files.size() == 1);
  CHECK(r.info.data_files[0].path == "sim.csv");
  CHECK(r.info.data_files[0].sha256 == after.data_files[0].sha256);
  // with the old contents back, the stopped run resumes
  write_file(dir / "sim.csv", "x\n1\n2\n3\n4\n");
  CHECK(rt::run_study(data_study(dir.path, "sim.csv"), resume).complete);
}

TEST_CASE("data files: a file changed while the study runs is not written as results", "[engine][data][reliability]") {
  TempDir dir;
  write_file(dir / "sim.csv", "x\n1\n2\n3\n4\n");
  const auto s = data_study(dir.path, "sim.csv");
  write_file(dir / "sim.csv", "x\n1\n2\n3\n9\n");  // after loading, before the run ends
  CHECK_THROWS_WITH(rt::run_study(s, options(dir / "a.h5")), Contains("changed while the study ran"));
  CHECK(!fs::exists(dir / "a.h5"));
  CHECK(fs::exists(rt::journal_path(dir / "a.h5")));
}

TEST_CASE("data checks run for every cell before any work, as config errors at the key's line",
          "[engine][data][reliability]") {
  TempDir dir;
  write_file(dir / "sim.csv", "x,k\n1,7\n2,7\n3,7\n4,7\n");
  const std::string head = "experiment: test_data\nmaster_seed: 3\nreplicates: 2\nparameters:\n  data_file: sim.csv\n";
  const auto src = (dir / "study.yaml").string();
  CHECK(config_error(head, src).empty());
  CHECK_THAT(config_error(head + "  column: k\n", src),
             Contains("study.yaml:6: column: column 'k' of " + (dir / "sim.csv").string() + " is constant"));
  CHECK_THAT(config_error(head + "  column: y\n", src), Contains("no column 'y'"));
  CHECK_THAT(config_error(head + "grid:\n  num_subsets: [1, 3]\n", src),
             Contains("study.yaml:7: num_subsets: too many subsets for 4 rows (cell "));
  write_file(dir / "nan.csv", "x\n1\nnan\n");
  CHECK_THAT(
      config_error("experiment: test_data\nmaster_seed: 3\nreplicates: 2\nparameters:\n  data_file: nan.csv\n", src),
      Contains("study.yaml:5: data_file: "));
}

TEST_CASE("output lock: a second run or merge on the same output is refused, naming the holder's PID",
          "[engine][lock][reliability]") {
  TempDir dir;
  const fs::path out = dir / "a.h5";
  {
    rt::OutputLock held(out);
    CHECK(read_file(rt::OutputLock::lock_path(out)) == std::to_string(::getpid()) + "\n");
    CHECK_THROWS_WITH(rt::OutputLock(out), Contains("another dpmu process (PID " + std::to_string(::getpid()) + ")"));
    dpmu_test::register_test_experiments();
    const auto s = rt::parse_study(kHead, "study.yaml");
    CHECK_THROWS_WITH(rt::run_study(s, options(out)), Contains("is writing this results file"));
    CHECK(!fs::exists(out));
    CHECK_THROWS_WITH(rt::merge_results(out, {dir / "x.h5"}), Contains("is writing this results file"));
  }
  CHECK(!fs::exists(rt::OutputLock::lock_path(out)));     // removed with the lock
  write_file(rt::OutputLock::lock_path(out), "12345\n");  // left by a killed process: no lock held
  rt::OutputLock again(out);
  CHECK(read_file(rt::OutputLock::lock_path(out)) == std::to_string(::getpid()) + "\n");
}

TEST_CASE("write failures: a file-size limit gives a clear error, no temporary file, the journal kept",
          "[engine][hdf5][reliability]") {
  TempDir dir;
  dpmu_test::register_test_experiments();
  // The results file is compressed, the journal is not: a long comment of incompressible text
  // (kept in the results file's config_yaml, not in the journal) makes the file the larger.
  std::string comment = "# ";
  std::uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 120000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    comment += static_cast<char>('a' + x % 26);
    if (i % 100 == 99) comment += "\n# ";
  }
  const auto s = rt::parse_study(
      "experiment: test_engine\nmaster_seed: 1\nreplicates: 2000\nblock_size: 1000\n" + comment + "\n", "study.yaml");
  const fs::path out = dir / "a.h5";
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  auto* const previous = ::signal(SIGXFSZ, SIG_IGN);  // as main() does: EFBIG instead of a kill
  rlimit small = old;
  small.rlim_cur = 80 * 1024;  // the journal (~72 kB) fits, the results file does not
  ::setrlimit(RLIMIT_FSIZE, &small);
  std::string message;
  try {
    rt::run_study(s, options(out));
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, previous);
  CHECK_THAT(message, Contains(out.string() + ": cannot write the results file"));
  CHECK_THAT(message, Contains("File too large"));
  CHECK_THAT(message, Contains("The checkpoint " + rt::journal_path(out).string() + " is intact"));
  CHECK(!fs::exists(out));
  for (const auto& e : fs::directory_iterator(dir.path))
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
  auto resume = options(out);
  resume.resume = true;
  CHECK(rt::run_study(s, resume).complete);
  CHECK(rt::read_results(out).n_done(0) == 2000);
}

TEST_CASE("stale temporary files of dead processes are removed by the next run on the output",
          "[engine][hdf5][reliability]") {
  TempDir dir;
  const fs::path out = dir / "a.h5";
  const std::string dead = out.string() + ".tmp-" + std::to_string(dead_pid());
  const std::string alive = out.string() + ".tmp-" + std::to_string(::getppid());
  const std::string journal_tmp = rt::journal_path(out).string() + ".tmp";
  for (const auto& f : {dead, alive, journal_tmp}) write_file(f, "partial");
  dpmu_test::register_test_experiments();
  const auto report = rt::run_study(rt::parse_study(kHead, "study.yaml"), options(out));
  CHECK(!fs::exists(dead));
  CHECK(!fs::exists(journal_tmp));
  CHECK(fs::exists(alive));  // its writer may still run
  CHECK(report.removed_temporary_files.size() == 2);
}

TEST_CASE("damaged results files are refused: checksums over datasets and every string",
          "[engine][hdf5][reliability]") {
  TempDir dir;
  dpmu_test::register_test_experiments();
  const auto s = rt::parse_study(kHead + "grid:\n  n: [10, 20]\n", "study.yaml");
  rt::run_study(s, options(dir / "a.h5"));
  const std::string bytes = read_file(dir / "a.h5");
  // a changed character in a cell key (a variable-length string: HDF5 has no checksum for it)
  const auto at = bytes.find("mechanism=laplace;n=20");
  REQUIRE(at != std::string::npos);
  std::string changed = bytes;
  changed[at + std::strlen("mechanism=laplace;n=")] = '3';
  write_file(dir / "b.h5", changed);
  CHECK_THROWS_WITH(rt::read_results(dir / "b.h5"), Contains("b.h5: the results file is damaged"));
  // every single-byte change in the file is detected or harmless: never different numbers
  const auto good = rt::read_results(dir / "a.h5");
  std::size_t detected = 0, harmless = 0;
  for (std::size_t i = 0; i < bytes.size(); i += 97) {
    std::string flipped = bytes;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x10);
    write_file(dir / "c.h5", flipped);
    try {
      const auto r = rt::read_results(dir / "c.h5");
      CHECK(rt::compare_results(good, r, 4.0).empty());
      CHECK(r.cell_results[1].values == good.cell_results[1].values);
      ++harmless;
    } catch (const std::runtime_error&) {
      ++detected;
    }
  }
  CHECK(detected > 0);
  CHECK(harmless + detected > 10);
}

TEST_CASE("compare says why two files cannot be compared", "[engine][compare][reliability]") {
  TempDir dir;
  dpmu_test::register_test_experiments();
  const auto s = rt::parse_study(kHead + "grid:\n  n: [10, 20]\n", "study.yaml");
  rt::run_study(s, options(dir / "a.h5"));
  auto shard = options(dir / "s.h5");
  shard.shard = rt::parse_shard("1/2");
  rt::run_study(s, shard);
  auto stopped = options(dir / "i.h5");
  stopped.max_time_seconds = 1e-9;
  rt::run_study(s, stopped);
  write_file(dir / "d.csv", "x\n1\n2\n");
  rt::run_study(data_study(dir.path, "d.csv"), options(dir / "d.h5"));
  const auto a = rt::read_results(dir / "a.h5");
  const auto sh = rt::read_results(dir / "s.h5");
  const auto inc = rt::read_results(dir / "i.h5");
  const auto other = rt::read_results(dir / "d.h5");
  CHECK(rt::comparison_obstacle(a, "a.h5", a, "a.h5", false).empty());
  CHECK_THAT(rt::comparison_obstacle(a, "a.h5", sh, "s.h5", false), Contains("s.h5 is shard 1/2 of a study"));
  CHECK_THAT(rt::comparison_obstacle(inc, "i.h5", a, "a.h5", false), Contains("i.h5 is incomplete"));
  CHECK(rt::comparison_obstacle(inc, "i.h5", a, "a.h5", true).empty());
  CHECK_THAT(rt::comparison_obstacle(a, "a.h5", other, "d.h5", true),
             Contains("a.h5 holds experiment 'test_engine' but d.h5 holds experiment 'test_data'"));
}
