#include "dpmu/runtime/runner.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "dpmu/runtime/config.hpp"
#include "dpmu/runtime/results.hpp"
#include "dpmu/runtime/streams.hpp"
#include "engine_test_experiments.hpp"
#include "temp_dir.hpp"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;
namespace rt = dpmu::runtime;

namespace {

struct TempDir : dpmu::test::TempDir {
  TempDir() : dpmu::test::TempDir("dpmu_runner_test") {}
};

rt::StudySpec study(const std::string& extra = "", std::int64_t replicates = 60) {
  dpmu_test::register_test_experiments();
  return rt::parse_study("experiment: test_engine\nmaster_seed: 7\nreplicates: " + std::to_string(replicates) +
                             "\nblock_size: 7\n" + extra +
                             "grid:\n  - n: [10, 20]\n    p: [1, 3]\n    mechanism: [laplace, gaussian]\n",
                         "test.yaml");
}

rt::RunOptions options(const fs::path& out, int threads = 1) {
  rt::RunOptions o;
  o.out = out;
  o.threads = threads;
  o.quiet = true;
  return o;
}

/// True if every replicate value (bitwise, NaN included) and done flag agree.
bool same_numbers(const rt::StudyResults& a, const rt::StudyResults& b) {
  if (a.cells.size() != b.cells.size()) return false;
  for (std::size_t c = 0; c < a.cells.size(); ++c) {
    const auto& x = a.cell_results[c];
    const auto& y = b.cell_results[c];
    if (a.cells[c].key() != b.cells[c].key() || x.values.size() != y.values.size() || x.done != y.done) return false;
    if (std::memcmp(x.values.data(), y.values.data(), x.values.size() * sizeof(double)) != 0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("summaries: mean, sd, mcse, type-7 quantiles, NaN failures and undone replicates left out",
          "[engine][summary]") {
  const double nan = std::nan("");
  const std::vector<double> v = {4, 1, nan, 3, 2, 100};
  const std::vector<std::uint8_t> done = {1, 1, 1, 1, 1, 0};
  const auto s = rt::summarize_values(v.data(), 1, done.data(), v.size());
  CHECK(s.n == 5);
  CHECK(s.n_ok == 4);
  CHECK(s.mean == 2.5);
  CHECK(s.sd == Approx(std::sqrt(5.0 / 3.0)).epsilon(1e-15));
  CHECK(s.mcse == Approx(std::sqrt(5.0 / 3.0) / 2.0).epsilon(1e-15));
  CHECK(s.q250 == 1.75);  // numpy.quantile([1,2,3,4], 0.25) == 1.75
  CHECK(s.q500 == 2.5);
  CHECK(s.q750 == 3.25);
  CHECK(s.q025 == Approx(1.075).epsilon(1e-14));
  const auto none = rt::summarize_values(v.data(), 1, std::vector<std::uint8_t>(6, 0).data(), v.size());
  CHECK(none.n == 0);
  CHECK(std::isnan(none.mean));
}

TEST_CASE("engine: 1 thread, 2 threads and 2 shards merged give bit-identical replicate arrays",
          "[engine][determinism]") {
  TempDir dir;
  const auto s = study();
  REQUIRE(s.cells.size() == 8);
  rt::run_study(s, options(dir / "one.h5", 1));
  rt::run_study(s, options(dir / "two.h5", 2));
  auto o0 = options(dir / "s0.h5", 2);
  o0.shard = rt::parse_shard("0/2");
  auto o1 = options(dir / "s1.h5", 1);
  o1.shard = rt::parse_shard("1/2");
  const auto r0 = rt::run_study(s, o0);
  rt::run_study(s, o1);
  CHECK(r0.complete);
  // 4 data groups (n, p) of 2 cells (mechanism), 9 blocks of 7 per group (60 replicates)
  CHECK(s.data_groups.size() == 4);
  CHECK(r0.tasks_total == 4 * 9 / 2);
  rt::merge_results(dir / "merged.h5", {dir / "s1.h5", dir / "s0.h5"});
  const auto one = rt::read_results(dir / "one.h5");
  const auto two = rt::read_results(dir / "two.h5");
  const auto merged = rt::read_results(dir / "merged.h5");
  const auto shard0 = rt::read_results(dir / "s0.h5");
  CHECK(one.info.complete);
  CHECK(one.n_done(0) == 60);
  CHECK(!std::isnan(one.cell_results[3].values[5]));
  CHECK(same_numbers(one, two));
  CHECK(same_numbers(one, merged));
  REQUIRE(one.calibration.size() == 8);
  CHECK(one.calibration[3] == merged.calibration[3]);  // prepare() outputs survive sharding
  CHECK(one.calibration[3] == two.calibration[3]);
  REQUIRE(one.calibration[3].size() == 1);
  CHECK(one.calibration[3][0].first == "offset");
  CHECK(one.calibration[3][0].second.size() == static_cast<std::size_t>(one.cells[3].get_int("p")));
  CHECK(merged.info.shard_count == 1);
  CHECK(shard0.n_done(0) < 60);  // a shard holds part of each cell
  CHECK(!same_numbers(one, shard0));
  CHECK(rt::compare_results(one, merged, 4.0).empty());
  CHECK(!fs::exists(rt::journal_path(dir / "one.h5")));  // journal removed once complete
}

TEST_CASE("engine: data streams are shared across method factors, noise streams are not", "[engine][determinism]") {
  TempDir dir;
  rt::run_study(study(), options(dir / "a.h5"));
  const auto r = rt::read_results(dir / "a.h5");
  // cells 0 and 1: same (n, p), mechanism laplace vs gaussian: the p normals (metric v) agree,
  // x = data + noise + calibration differs.
  REQUIRE(r.cells[0].data_id() == r.cells[1].data_id());
  const auto& a = r.cell_results[0];
  const auto& b = r.cell_results[1];
  CHECK(a.values[1] == b.values[1]);
  CHECK(a.values[0] != b.values[0]);
}

TEST_CASE("engine: one data set per (data key, replicate), analysed by every cell of the key",
          "[engine][determinism]") {
  TempDir dir;
  const auto s = study("", 20);
  REQUIRE(s.data_groups.size() == 4);
  for (const auto& g : s.data_groups) {
    REQUIRE(g.size() == 2);
    CHECK(s.cells[g[0]].data_key() == s.cells[g[1]].data_key());
    CHECK(s.cells[g[0]].get_string("mechanism") != s.cells[g[1]].get_string("mechanism"));
  }
  dpmu_test::g_generate_calls = 0;
  dpmu_test::g_calls = 0;
  rt::run_study(s, options(dir / "a.h5", 2));
  CHECK(dpmu_test::g_generate_calls == 4 * 20);  // not 8 * 20: generated once per group and replicate
  CHECK(dpmu_test::g_calls == 8 * 20);           // analysed once per cell and replicate
  // What run_one_replicate gives for one cell alone (replay) equals that cell's row in the file.
  const auto r = rt::read_results(dir / "a.h5");
  const auto& e = *s.experiment;
  for (std::size_t c : {std::size_t{1}, std::size_t{6}}) {
    auto calibration = rt::calibration_stream(s.master_seed, s.cells[c]);
    rt::SharedCalibration shared;
    const auto prepared = e.prepare_erased(s.cells[c], calibration, shared);
    const auto& cr = r.cell_results[c];
    std::vector<double> out(cr.width);
    rt::CellReplicate one;
    one.cell = &s.cells[c];
    one.prepared = prepared.get();
    one.metrics = *s.cell_metrics[c];
    one.out = out;
    rt::run_one_replicate(e, s.cells[c].data_cell(), s.master_seed, 13, std::span<rt::CellReplicate>(&one, 1));
    CHECK(one.failure_stage.empty());
    CHECK(std::memcmp(out.data(), cr.values.data() + 13 * cr.width, cr.width * sizeof(double)) == 0);
  }
}

TEST_CASE("engine: generate sees the data factors only, its failure fails every cell of the key", "[engine][errors]") {
  const auto s = study("", 3);
  const rt::Cell& cell = s.cells[0];
  const rt::Cell data = cell.data_cell();
  CHECK(data.key() == cell.data_key());
  CHECK(data.data_id() == cell.data_id());
  CHECK(data.cell_id() == cell.data_id());
  CHECK(data.get_int("n") == cell.get_int("n"));
  // The data factors n, p and added_later (at its default: a parameter of the data cell, in no key).
  CHECK(data.values().size() == 3);
  CHECK(data.get_double("added_later") == 0.0);
  CHECK(data.key().find("added_later") == std::string::npos);
  CHECK_THROWS_AS(data.get("epsilon"), std::out_of_range);  // a method parameter

  struct FailingData final : rt::TypedExperiment<rt::Nothing, double> {
    std::string name() const override { return "failing_data"; }
    std::vector<rt::ParameterSpec> parameters() const override { return {}; }
    std::vector<rt::MetricSpec> metrics(const rt::Cell&) const override { return {{.name = "m"}}; }
    double generate(const rt::Cell&, dpmu::core::RngStream&) const override {
      throw std::runtime_error("no data today");
    }
    void analyse(const rt::Cell&, const rt::Nothing&, const double& x, dpmu::core::RngStream&,
                 rt::MetricWriter& out) const override {
      out.set("m", x);
    }
  } failing;
  const rt::Nothing nothing;
  const std::vector<rt::MetricSpec> specs = failing.metrics(cell);
  std::vector<double> a(1, 0.0), b(1, 0.0);
  std::vector<rt::CellReplicate> reps(2);
  for (auto [rep, out] : {std::pair{&reps[0], &a}, std::pair{&reps[1], &b}}) {
    rep->cell = &cell;
    rep->prepared = &nothing;
    rep->metrics = specs;
    rep->out = *out;
  }
  rt::run_one_replicate(failing, data, 1, 0, reps);
  for (const auto& r : reps) {
    CHECK(r.failure_stage == "generate");
    CHECK(r.failure_message == "no data today");
  }
  CHECK(std::isnan(a[0]));
  CHECK(std::isnan(b[0]));
}

TEST_CASE("MetricWriter: writes by name, checked against the declared metrics", "[engine][metrics]") {
  const std::vector<rt::MetricSpec> specs = {
      {.name = "a"}, {.name = "v", .size = 3, .is_vector = true}, {.name = "w", .size = 1, .is_vector = true}};
  std::vector<double> out(5, std::nan(""));
  rt::MetricWriter w(specs, out);
  w.set("a", 1.5);
  w.set("v", 2, 7.0);
  w.set("w", std::vector<double>{4.0});
  CHECK(out[0] == 1.5);
  CHECK(std::isnan(out[1]));  // unwritten stays NaN
  CHECK(std::isnan(out[2]));
  CHECK(out[3] == 7.0);
  CHECK(out[4] == 4.0);
  w.set("v", std::vector<double>{1, 2, 3});
  CHECK(out[1] == 1.0);
  CHECK(out[3] == 3.0);
  CHECK_THROWS_WITH(w.set("b", 1.0), Contains("undeclared metric 'b'") && Contains("declared: a, v, w"));
  CHECK_THROWS_WITH(w.set("v", 1.0), Contains("'v' is a vector of 3 components"));
  CHECK_THROWS_WITH(w.set("w", 1.0), Contains("'w' is a vector"));
  CHECK_THROWS_WITH(w.set("v", 3, 1.0), Contains("component 3 of metric 'v' is out of range"));
  CHECK_THROWS_WITH(w.set("v", std::vector<double>{1, 2}), Contains("'v' has 3 components but 2 values"));
  CHECK_THROWS_AS(rt::MetricWriter(specs, std::span<double>(out.data(), 4)), std::logic_error);
}

TEST_CASE("SharedCalibration: computed once per key whatever the threads, errors leave the key uncomputed",
          "[engine][calibration]") {
  rt::SharedCalibration shared;
  std::atomic<int> computed{0};
  std::vector<std::thread> threads;
  std::vector<double> seen(8, 0.0);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      seen[static_cast<std::size_t>(i)] = shared.get("ridge:laplace:p9", [&] {
        ++computed;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // others arrive meanwhile
        return std::vector<double>{2.5};
      })[0];
    });
  }
  for (auto& t : threads) t.join();
  CHECK(computed.load() == 1);
  for (double v : seen) CHECK(v == 2.5);
  CHECK(shared.get("other", [] { return std::vector<double>{1.0, 2.0}; }) == std::vector<double>{1.0, 2.0});
  CHECK(shared.size() == 2);
  CHECK_THROWS_WITH(shared.get("bad", []() -> std::vector<double> { throw std::runtime_error("no ridge"); }),
                    Contains("no ridge"));
  CHECK(shared.get("bad", [] { return std::vector<double>{3.0}; })[0] == 3.0);  // retried, not poisoned
}

TEST_CASE("engine: interrupted run resumes from its journal (torn last record ignored), bit-identical",
          "[engine][resume]") {
  TempDir dir;
  const auto s = study("parameters:\n  stop_after: 100\n", 200);
  rt::run_study(s, options(dir / "ref.h5", 2));  // no stop flag: runs to the end

  dpmu_test::g_calls = 0;
  dpmu_test::g_stop = false;
  auto o = options(dir / "run.h5", 2);
  o.stop_flag = &dpmu_test::g_stop;
  const auto first = rt::run_study(s, o);
  CHECK(!first.complete);
  CHECK(first.stopped);
  CHECK(first.tasks_run > 0);
  CHECK(first.tasks_run < first.tasks_total);
  const fs::path journal = rt::journal_path(dir / "run.h5");
  REQUIRE(fs::exists(journal));
  // The incomplete file is readable and says how many replicates each summary uses.
  const auto partial = rt::read_results(dir / "run.h5");
  CHECK(!partial.info.complete);
  std::int64_t done = 0;
  for (std::size_t c = 0; c < partial.cells.size(); ++c) done += partial.n_done(c);
  CHECK(done == static_cast<std::int64_t>(first.replicates_run));
  CHECK(rt::summarize_component(partial, 0, 0, 0).n <= 200);
  // Simulate kill -9 during a journal append: a torn record at the end.
  {
    std::ofstream j(journal, std::ios::binary | std::ios::app);
    const std::uint64_t len = 1000;
    j.write(reinterpret_cast<const char*>(&len), 8);
    j << "partial";
  }
  // Without --resume the run refuses to overwrite.
  CHECK_THROWS_WITH(rt::run_study(s, options(dir / "run.h5")), Contains("pass --resume"));
  auto again = options(dir / "run.h5", 1);
  again.resume = true;
  const auto second = rt::run_study(s, again);
  CHECK(second.complete);
  CHECK(second.tasks_resumed == first.tasks_run);
  CHECK(second.tasks_run + second.tasks_resumed == second.tasks_total);
  const auto ref = rt::read_results(dir / "ref.h5");
  const auto resumed = rt::read_results(dir / "run.h5");
  CHECK(same_numbers(ref, resumed));
  CHECK(ref.calibration == resumed.calibration);
  CHECK(!fs::exists(journal));
  // Resuming a complete file does nothing.
  const auto third = rt::run_study(s, again);
  CHECK(third.complete);
  CHECK(third.tasks_run == 0);
}

TEST_CASE("engine: --max-time stops cleanly and marks the file incomplete", "[engine][resume]") {
  TempDir dir;
  const auto s = study("", 20);
  auto o = options(dir / "a.h5");
  o.max_time_seconds = 1e-9;
  const auto rep = rt::run_study(s, o);
  CHECK(!rep.complete);
  CHECK(rep.stopped);
  const auto r = rt::read_results(dir / "a.h5");
  CHECK(!r.info.complete);
  CHECK(r.n_done(0) == 0);
  o.max_time_seconds.reset();
  o.resume = true;
  CHECK(rt::run_study(s, o).complete);
  CHECK(rt::read_results(dir / "a.h5").info.complete);
}

TEST_CASE("engine: a checkpoint of another study is refused", "[engine][resume]") {
  TempDir dir;
  auto o = options(dir / "a.h5");
  o.max_time_seconds = 1e-9;
  rt::run_study(study("", 20), o);
  o.max_time_seconds.reset();
  o.resume = true;
  CHECK_THROWS_WITH(rt::run_study(study("", 21), o), Contains("belongs to another study or shard"));
  o.shard = rt::parse_shard("1/2");
  CHECK_THROWS_WITH(rt::run_study(study("", 20), o), Contains("belongs to another study or shard"));
}

TEST_CASE("engine: failed replicates become NaN with an /errors record, never redrawn", "[engine][errors]") {
  TempDir dir;
  const auto s = study("parameters:\n  fail_probability: 0.2\n", 50);
  const auto rep = rt::run_study(s, options(dir / "a.h5", 2));
  CHECK(rep.complete);
  CHECK(rep.failed_cells.size() == 8);  // about 20% > max_failure_fraction 5%
  const auto r = rt::read_results(dir / "a.h5");
  REQUIRE(!r.errors.empty());
  std::int64_t nan_rows = 0;
  for (std::size_t c = 0; c < r.cells.size(); ++c) {
    const auto& cr = r.cell_results[c];
    for (std::size_t i = 0; i < 50; ++i) nan_rows += std::isnan(cr.values[i * cr.width]) ? 1 : 0;
  }
  CHECK(nan_rows == static_cast<std::int64_t>(r.errors.size()));
  CHECK(r.errors[0].stage == "replicate");
  CHECK(r.errors[0].message == "replicate failed on purpose");
  const auto& e = r.errors[0];
  CHECK(std::isnan(r.cell_results[e.cell].values[e.replicate * r.cell_results[e.cell].width]));
  const auto sum = rt::summarize_component(r, e.cell, 0, 0);
  CHECK(sum.n == 50);
  CHECK(sum.n_ok == 50 - r.n_failed(e.cell));
  CHECK(r.n_failed(e.cell) > 0);
  CHECK(r.cell_failed(e.cell));
}

TEST_CASE("engine: prepare runs once per cell, and a failed prepare fails the cell's replicates", "[engine][errors]") {
  TempDir dir;
  dpmu_test::g_prepare_calls = 0;
  rt::run_study(study("", 30), options(dir / "a.h5", 2));
  CHECK(dpmu_test::g_prepare_calls == 8);
  const auto s = study("parameters:\n  fail_prepare: 1\n", 10);
  const auto rep = rt::run_study(s, options(dir / "b.h5"));
  CHECK(rep.failed_cells.size() == 8);
  const auto r = rt::read_results(dir / "b.h5");
  CHECK(r.errors.size() == 80);
  CHECK(r.errors[0].stage == "prepare");
  CHECK(r.errors[0].message == "prepare failed on purpose");
}

TEST_CASE("engine: the run report counts the CPU time of the cells' prepare() apart from the loop's", "[engine]") {
  TempDir dir;
  // 8 cells, each prepare() spinning 40 ms of its thread's CPU: at least 0.32 s in set-up, and never
  // more than the loop's CPU time, whatever the threads.
  for (int threads : {1, 2}) {
    const auto rep = rt::run_study(study("parameters:\n  prepare_cpu_ms: 40\n", 20),
                                   options(dir / ("spin" + std::to_string(threads) + ".h5"), threads));
    INFO("threads " << threads << ": prepare " << rep.prepare_cpu_seconds << " s, loop " << rep.loop_cpu_seconds);
    CHECK(rep.prepare_cpu_seconds >= 8 * 0.040);
    CHECK(rep.prepare_cpu_seconds <= rep.loop_cpu_seconds + 0.01);
  }
  // Without the spin, set-up is a small part of the loop (the test experiment's prepare() draws one uniform).
  const auto quick = rt::run_study(study("", 20), options(dir / "quick.h5", 1));
  CHECK(quick.prepare_cpu_seconds < 0.05);
}

TEST_CASE("merge refuses missing, duplicated, incomplete and mismatched shards", "[engine][merge]") {
  TempDir dir;
  const auto s = study("", 20);
  for (int i = 0; i < 3; ++i) {
    const std::string idx = std::to_string(i);
    auto o = options(dir.path / ("s" + idx + ".h5"));  // (a temporary + std::string trips GCC 12's -Wrestrict)
    o.shard = rt::parse_shard(idx + "/3");
    rt::run_study(s, o);
  }
  auto other = options(dir / "other.h5");
  other.shard = rt::parse_shard("2/3");
  rt::run_study(rt::parse_study(s.config_yaml, "test.yaml", {.replicates = 21}), other);
  auto stopped = options(dir / "stopped.h5");
  stopped.shard = rt::parse_shard("2/3");
  stopped.max_time_seconds = 1e-9;
  rt::run_study(s, stopped);
  auto two = options(dir / "two.h5");
  two.shard = rt::parse_shard("1/2");
  rt::run_study(s, two);

  CHECK_THROWS_WITH(rt::merge_results(dir / "m.h5", {dir / "s0.h5", dir / "s1.h5"}), Contains("missing shard(s) 2/3"));
  CHECK_THROWS_WITH(rt::merge_results(dir / "m.h5", {dir / "s0.h5", dir / "s1.h5", dir / "s1.h5"}),
                    Contains("shard 1/3 is given twice"));
  CHECK_THROWS_WITH(rt::merge_results(dir / "m.h5", {dir / "s0.h5", dir / "s1.h5", dir / "other.h5"}),
                    Contains("comes from another study"));
  CHECK_THROWS_WITH(rt::merge_results(dir / "m.h5", {dir / "s0.h5", dir / "s1.h5", dir / "stopped.h5"}),
                    Contains("is incomplete"));
  CHECK_THROWS_WITH(rt::merge_results(dir / "m.h5", {dir / "s0.h5", dir / "two.h5"}), Contains("is shard 1/2 but"));
  CHECK(!fs::exists(dir / "m.h5"));
  rt::merge_results(dir / "m.h5", {dir / "s2.h5", dir / "s0.h5", dir / "s1.h5"});
  CHECK(rt::read_results(dir / "m.h5").info.complete);
}

TEST_CASE("compare: identical files are equal, shifted means and missing cells are flagged", "[engine][compare]") {
  TempDir dir;
  const auto s = study("", 40);
  rt::run_study(s, options(dir / "a.h5"));
  auto a = rt::read_results(dir / "a.h5");
  CHECK(rt::compare_results(a, a, 4.0).empty());
  // Another seed: same cells, independent numbers; all within 4 combined MC standard errors.
  auto s2 = rt::parse_study(
      "experiment: test_engine\nmaster_seed: 8\nreplicates: 40\nblock_size: 7\n"
      "grid:\n  - n: [10, 20]\n    p: [1, 3]\n    mechanism: [laplace, gaussian]\n",
      "b.yaml");
  rt::run_study(s2, options(dir / "b.h5"));
  const auto b = rt::read_results(dir / "b.h5");
  CHECK(rt::compare_results(a, b, 4.0).empty());
  // Shift metric x of cell 2 by 10 MC standard errors.
  auto shifted = a;
  const double shift = 10 * rt::summarize_component(a, 2, 0, 0).mcse;
  auto& cr = shifted.cell_results[2];
  for (std::size_t i = 0; i < 40; ++i) cr.values[i * cr.width] += shift;
  const auto d = rt::compare_results(a, shifted, 4.0);
  REQUIRE(d.size() == 1);
  CHECK(d[0].metric == "x");
  CHECK(d[0].cell_key == a.cells[2].key());
  CHECK(d[0].z == Approx(10 / std::sqrt(2.0)).epsilon(1e-9));
  CHECK(rt::compare_results(a, shifted, 8.0).empty());
  // A cell missing from one file.
  auto fewer = a;
  fewer.cells.pop_back();
  fewer.cell_results.pop_back();
  for (auto& m : fewer.metrics) m.sizes.pop_back();
  const auto d2 = rt::compare_results(a, fewer, 4.0);
  REQUIRE(d2.size() == 1);
  CHECK(d2[0].reason == "cell only in the first file");
}

TEST_CASE("results file round trip: what is written is read back", "[engine][hdf5]") {
  TempDir dir;
  rt::run_study(study("", 9), options(dir / "a.h5"));
  const auto r = rt::read_results(dir / "a.h5");
  rt::write_results(dir / "b.h5", r);
  const auto r2 = rt::read_results(dir / "b.h5");
  CHECK(same_numbers(r, r2));
  CHECK(r2.info.config_yaml == r.info.config_yaml);
  CHECK(r2.info.master_seed == 7);
  CHECK(r2.metrics.size() == 2);
  CHECK(r2.metrics[1].is_vector);
  CHECK(r2.metrics[1].max_size == 3);
  CHECK(r2.metrics[1].sizes[0] == 1);
  CHECK(r2.cells[3].get_string("mechanism") == r.cells[3].get_string("mechanism"));
  CHECK_THROWS_WITH(rt::read_results(dir / "none.h5"), Contains("no such file"));
  { std::ofstream(dir / "bad.h5") << "not hdf5"; }
  CHECK_THROWS_WITH(rt::read_results(dir / "bad.h5"), Contains("not an HDF5 file"));
}

TEST_CASE("results file round trip: list parameters come back as lists", "[engine][hdf5]") {
  TempDir dir;
  dpmu_test::register_test_experiments();
  const auto s = rt::parse_study(
      "experiment: test_lists\nmaster_seed: 3\nreplicates: 4\nparameters:\n  tags: [b]\n  indices: [7, 8]\n"
      "grid:\n  weights: [[0.25, 1e-3], []]\n",
      "lists.yaml");
  rt::run_study(s, options(dir / "a.h5"));
  const auto r = rt::read_results(dir / "a.h5");
  REQUIRE(r.cells.size() == 2);
  for (std::size_t c = 0; c < 2; ++c) {
    CHECK(r.cells[c].key() == s.cells[c].key());
    CHECK(r.cells[c].values() == s.cells[c].values());
  }
  CHECK(r.cells[0].get_real_list("weights") == std::vector<double>{0.25, 1e-3});
  CHECK(r.cells[1].get_real_list("weights").empty());
  CHECK(r.parameter_types == std::vector<rt::ParameterType>{rt::ParameterType::string_list,
                                                            rt::ParameterType::real_list,
                                                            rt::ParameterType::integer_list});
}

TEST_CASE("parse_shard", "[engine]") {
  CHECK(rt::parse_shard("1/4").index == 1);
  CHECK(rt::parse_shard("1/4").count == 4);
  CHECK_THROWS_WITH(rt::parse_shard("4/4"), Contains("0 <= i < N"));
  CHECK_THROWS_WITH(rt::parse_shard("a/4"), Contains("not of the form i/N"));
  CHECK_THROWS_WITH(rt::parse_shard("1"), Contains("not of the form i/N"));
}

TEST_CASE("Cell accessors and find_experiment", "[engine]") {
  dpmu_test::register_test_experiments();
  const rt::Cell c({{"b", std::int64_t{2}}, {"a", 0.5}, {"s", std::string("x")}}, {"b"});
  CHECK(c.key() == "a=0.5;b=2;s=x");
  CHECK(c.data_key() == "b=2");
  CHECK(c.get_double("b") == 2.0);
  CHECK_THROWS_AS(c.get_int("a"), std::invalid_argument);
  CHECK_THROWS_AS(c.get_double("s"), std::invalid_argument);
  CHECK_THROWS_AS(c.get("zz"), std::out_of_range);
  CHECK_THROWS_WITH(rt::find_experiment("zz"),
                    Contains("unknown experiment 'zz'; registered experiments are ") && Contains("normal_mean"));
}

TEST_CASE("Cell: a parameter at an unkeyed default is in no key, at any other value in both", "[engine]") {
  const std::vector<std::pair<std::string, std::string>> unkeyed = {
      {"d", "0"}, {"w", rt::format_parameter_value(std::vector<double>{})}};
  const rt::Cell at_default({{"b", std::int64_t{2}}, {"a", 0.5}, {"d", 0.0}, {"w", std::vector<double>{}}}, {"b", "d"},
                            unkeyed);
  CHECK(at_default.key() == "a=0.5;b=2");
  CHECK(at_default.data_key() == "b=2");
  CHECK(at_default.get_double("d") == 0.0);  // still a parameter of the cell
  const rt::Cell without({{"b", std::int64_t{2}}, {"a", 0.5}}, {"b"});
  CHECK(at_default.cell_id() == without.cell_id());
  CHECK(at_default.data_id() == without.data_id());
  CHECK(at_default.data_cell().key() == "b=2");
  CHECK(at_default.data_cell().get_double("d") == 0.0);
  const rt::Cell other({{"b", std::int64_t{2}}, {"a", 0.5}, {"d", 0.25}, {"w", std::vector<double>{1.0}}}, {"b", "d"},
                       unkeyed);
  CHECK(other.key() == "a=0.5;b=2;d=0.25;w=" + rt::format_parameter_value(std::vector<double>{1.0}));
  CHECK(other.data_key() == "b=2;d=0.25");
  CHECK(other.data_cell().key() == "b=2;d=0.25");
  // Every parameter is keyed unless its declaration says otherwise; a default is then required.
  CHECK(rt::unkeyed_defaults({{.name = "x", .default_value = 1.0}}).empty());
  CHECK(rt::unkeyed_defaults({{.name = "x", .default_value = 1.5, .keyed_at_default = false}}) ==
        std::vector<std::pair<std::string, std::string>>{{"x", "1.5"}});
  CHECK_THROWS_AS(rt::unkeyed_defaults({{.name = "x", .keyed_at_default = false}}), std::logic_error);
}

TEST_CASE("engine: a parameter added later keeps, at its default, every key, stream and number, files round trip",
          "[engine][hdf5]") {
  TempDir dir;
  const auto before = study("", 9);
  const auto given = study("parameters:\n  added_later: 0\n", 9);
  const auto moved = study("parameters:\n  added_later: 0.5\n", 9);
  REQUIRE(before.cells.size() == 8);
  for (std::size_t c = 0; c < before.cells.size(); ++c) {
    CHECK(before.cells[c].key().find("added_later") == std::string::npos);
    CHECK(given.cells[c].key() == before.cells[c].key());
    CHECK(moved.cells[c].key().find("added_later=0.5") != std::string::npos);
    CHECK(moved.cells[c].data_key().find("added_later=0.5") != std::string::npos);
  }
  CHECK(given.fingerprint() == before.fingerprint());
  CHECK(moved.fingerprint() != before.fingerprint());
  rt::run_study(before, options(dir / "before.h5"));
  rt::run_study(given, options(dir / "given.h5", 2));
  rt::run_study(moved, options(dir / "moved.h5"));
  const auto a = rt::read_results(dir / "before.h5");
  const auto b = rt::read_results(dir / "given.h5");
  const auto m = rt::read_results(dir / "moved.h5");
  CHECK(same_numbers(a, b));
  for (std::size_t c = 0; c < a.cells.size(); ++c) {  // the ids read back are the ids the run used
    CHECK(a.cells[c].cell_id() == before.cells[c].cell_id());
    CHECK(a.cells[c].data_id() == before.cells[c].data_id());
    CHECK(m.cells[c].cell_id() == moved.cells[c].cell_id());
    CHECK(m.cells[c].get_double("added_later") == 0.5);
    // At another value it is a data factor like any other: its own data key and stream.
    CHECK(m.cells[c].data_id() != a.cells[c].data_id());
  }
  // Resuming a complete file of the study before the parameter existed is accepted as complete.
  auto o = options(dir / "before.h5");
  o.resume = true;
  CHECK(rt::run_study(given, o).already_complete);
}

namespace {
rt::StudySpec shared_study(const std::string& share, std::int64_t broken = 0, std::int64_t replicates = 20,
                           std::int64_t fail_n = 0) {
  dpmu_test::register_test_experiments();
  return rt::parse_study("experiment: test_shared\nmaster_seed: 11\nreplicates: " + std::to_string(replicates) +
                             "\nblock_size: 3\nparameters:\n  share: " + share +
                             "\n  broken: " + std::to_string(broken) + "\n  fail_n: " + std::to_string(fail_n) +
                             "\ngrid:\n  - n: [10, 20, 30]\n    p: [1, 2]\n    epsilon: [0.5, 1.0]\n",
                         "shared.yaml");
}
/// True if `dpmu replay` of replicate `rep` of cell c (run_one_replicate with the cell's data cell
/// alone; test_shared has no prepare step) gives the run's numbers bit for bit.
bool replay_equals_run(const rt::StudySpec& s, const rt::StudyResults& run, std::size_t c, std::size_t rep) {
  const auto& cr = run.cell_results[c];
  std::vector<double> out(cr.width);
  rt::CellReplicate one;
  const rt::Nothing nothing;
  one.cell = &s.cells[c];
  one.prepared = &nothing;
  one.metrics = *s.cell_metrics[c];
  one.out = out;
  rt::run_one_replicate(*s.experiment, s.cells[c].data_cell(), s.master_seed, rep,
                        std::span<rt::CellReplicate>(&one, 1));
  return one.failure_stage.empty() &&
         std::memcmp(out.data(), cr.values.data() + rep * cr.width, cr.width * sizeof(double)) == 0;
}
}  // namespace

TEST_CASE("engine: generation groups share one generate_shared call per replicate, replay and threads agree",
          "[engine]") {
  TempDir dir;
  const auto none = shared_study("none");
  CHECK(none.data_groups.size() == 6);  // one per (n, p): 2 method cells each
  const auto s = shared_study("p");
  REQUIRE(s.cells.size() == 12);
  REQUIRE(s.data_groups.size() == 2);  // one per p: its 3 data keys x 2 method cells
  for (const auto& g : s.data_groups) {
    REQUIRE(g.size() == 6);
    for (std::size_t c : g) CHECK(s.cells[c].get_int("p") == s.cells[g.front()].get_int("p"));
  }
  dpmu_test::g_shared_generate_calls = 0;
  rt::run_study(s, options(dir / "one.h5", 1));
  CHECK(dpmu_test::g_shared_generate_calls == 2 * 20);  // per group and replicate, not per data key
  rt::run_study(s, options(dir / "two.h5", 2));
  const auto one = rt::read_results(dir / "one.h5");
  const auto two = rt::read_results(dir / "two.h5");
  CHECK(same_numbers(one, two));
  // u is the group's (the same for every data key of a p), w the data key's own
  for (const auto& g : s.data_groups) {
    const auto& first = one.cell_results[g.front()];
    for (std::size_t c : g) {
      const auto& a = one.cell_results[c];
      for (std::size_t r = 0; r < 20; ++r) CHECK(a.values[r * a.width + 0] == first.values[r * first.width + 0]);
    }
  }
  CHECK(one.cell_results[s.data_groups[0][0]].values[1] != one.cell_results[s.data_groups[0][2]].values[1]);
  // A replay generates the cell's data key alone: the same numbers as the run.
  for (std::size_t c = 0; c < s.cells.size(); ++c) {
    INFO("cell " << c);
    CHECK(replay_equals_run(s, one, c, 7));
  }
  // Two shards merged give the same numbers.
  auto o0 = options(dir / "s0.h5");
  o0.shard = rt::parse_shard("0/2");
  auto o1 = options(dir / "s1.h5");
  o1.shard = rt::parse_shard("1/2");
  rt::run_study(s, o0);
  rt::run_study(s, o1);
  rt::merge_results(dir / "merged.h5", {dir / "s0.h5", dir / "s1.h5"});
  CHECK(same_numbers(one, rt::read_results(dir / "merged.h5")));
}

TEST_CASE("engine: a generate_shared that returns too few data sets fails every cell of its group",
          "[engine][errors]") {
  TempDir dir;
  const auto s = shared_study("p", 1, 3);
  rt::run_study(s, options(dir / "broken.h5"));
  const auto r = rt::read_results(dir / "broken.h5");
  REQUIRE(!r.errors.empty());
  CHECK(r.errors.size() == 12 * 3);
  for (const auto& err : r.errors) {
    CHECK(err.stage == "generate");
    // retried alone, each data key gets none
    CHECK_THAT(err.message, Contains("generate_shared() returned 0 data sets for 1 data cells"));
  }
  for (const auto& cr : r.cell_results) CHECK(std::isnan(cr.values[0]));
}

TEST_CASE("engine: a data key whose generation fails fails its own cells only, the group's others run as replayed",
          "[engine][errors]") {
  TempDir dir;
  const auto s = shared_study("p", 0, 4, 20);  // the data keys with n = 20 fail, alone or in a group
  rt::run_study(s, options(dir / "partial.h5"));
  const auto r = rt::read_results(dir / "partial.h5");
  CHECK(r.errors.size() == 4 * 4);  // 4 cells (p 1, 2 x epsilon 0.5, 1) x 4 replicates
  for (const auto& err : r.errors) {
    CHECK(err.stage == "generate");
    CHECK(s.cells[err.cell].get_int("n") == 20);
    CHECK_THAT(err.message, Contains("n = fail_n fails on purpose"));
  }
  for (std::size_t c = 0; c < s.cells.size(); ++c) {
    if (s.cells[c].get_int("n") == 20) {
      CHECK(std::isnan(r.cell_results[c].values[0]));
      continue;
    }
    CHECK(replay_equals_run(s, r, c, 2));
  }
}
