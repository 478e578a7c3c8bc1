// `dpmu test --method test-of-tests | dp-f` through the release API: option checks before any work,
// the ledger charge (once, with the method's guarantee), "private" and the three kinds of fields.
#include "dpmu/api/test.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "../runtime/temp_dir.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/core/dp_f_test.hpp"
#include "dpmu/runtime/ledger.hpp"

using namespace dpmu;

namespace {

struct Data {
  Eigen::MatrixXd common, tested;
  Eigen::VectorXd y;
};

Data data(int n, unsigned seed, double effect) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  Data d{Eigen::MatrixXd(n, 1), Eigen::MatrixXd(n, 1), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) {
    d.common(i, 0) = z(rng);
    d.tested(i, 0) = z(rng);
    d.y(i) = 0.5 * d.common(i, 0) + effect * d.tested(i, 0) + z(rng);
  }
  return d;
}

nlohmann::ordered_json run(const Data& d, const api::TestRequest& q) {
  return api::test(d.common, d.tested, d.y, {"c"}, {"t"}, "y", q);
}

}  // namespace

TEST_CASE("api: test-of-tests releases a Tulap-noised count and its DP-UMP p-value", "[api][tot]") {
  const Data d = data(400, 1, 0.5);
  api::TestRequest q;
  q.method = "test-of-tests";
  q.epsilon = 1.0;
  q.seed = 7;
  const auto out = run(d, q);
  CHECK(out["private"] == false);
  CHECK(out["settings"]["method"] == "test-of-tests");
  CHECK(out["settings"]["num_subsets"].get<std::size_t>() >= 1);
  CHECK(out["settings"]["tuning"]["power_target"] == 0.9);
  CHECK(out["privacy"]["epsilon"] == 1.0);
  CHECK(out["privacy"]["delta"] == 0.0);
  const double p = out["p_value"].get<double>();
  CHECK(p > 0.0);
  CHECK(p < 0.05);  // effect 0.5 at n = 400: far beyond the tuned effect
  CHECK(out["diagnostics"].contains("count"));
  // a secure release: private, no diagnostics
  q.seed.reset();
  const auto secure = run(d, q);
  CHECK(secure["private"] == true);
  CHECK_FALSE(secure.contains("diagnostics"));
  // given m and alpha0
  q.groups = 8;
  q.alpha0 = 0.2;
  const auto given = run(d, q);
  CHECK(given["settings"]["num_subsets"] == 8);
  CHECK(given["settings"]["alpha0"] == 0.2);
}

TEST_CASE("api: dp-f releases noisy moments, the F statistic and the bootstrap p-value", "[api][dpf]") {
  const Data d = data(2000, 2, 0.5);
  api::TestRequest q;
  q.method = "dp-f";
  q.epsilon = 5.0;
  q.delta = 1e-6;
  q.bounds = {-3.0, 3.0};
  q.seed = 3;
  const auto out = run(d, q);
  CHECK(out["private"] == false);
  CHECK(out["privacy"]["epsilon"] == 5.0);  // rho chosen so that rho + 2 sqrt(rho log(1/delta)) = epsilon
  CHECK(out["privacy"]["rho_zcdp"].get<double>() == Approx(core::zcdp_rho_for_epsilon(5.0, 1e-6)));
  CHECK(out["settings"]["null_simulations"] == 1000);  // 10 / min(alpha) with alpha = 0.05, 0.01
  CHECK(out["moments"].size() == 4);
  CHECK(out["p_value"].get<double>() < 0.05);  // effect 0.5 at n = 2000
  CHECK(out["diagnostics"].contains("confidential_f_statistic"));
  q.seed.reset();
  const auto secure = run(d, q);
  CHECK(secure["private"] == true);
  CHECK_FALSE(secure.contains("diagnostics"));
}

TEST_CASE("api: the baseline methods check their options before any work", "[api][tot][dpf]") {
  const Data d = data(100, 3, 0.0);
  api::TestRequest q;
  q.epsilon = 1.0;
  q.method = "nonsense";
  CHECK_THROWS_AS(run(d, q), std::invalid_argument);
  q.method = "dp-f";
  CHECK_THROWS_AS(run(d, q), std::domain_error);  // no delta
  q.delta = 1e-6;
  CHECK_THROWS_AS(run(d, q), std::invalid_argument);  // no bounds
  q.bounds = {1.0, 2.0, 3.0};
  CHECK_THROWS_AS(run(d, q), std::invalid_argument);  // not pairs for every column
  q.method = "test-of-tests";
  q.bounds.clear();
  CHECK_THROWS_AS(run(d, q), std::invalid_argument);  // delta > 0 for a pure-DP test
  q.delta = 0.0;
  q.groups = 5;
  CHECK_THROWS_AS(run(d, q), std::invalid_argument);  // m without alpha0
  q.groups.reset();
  q.method = "subsample-aggregate";
  q.alpha0 = 0.1;
  q.groups = 5;
  CHECK_THROWS_AS(run(d, q), std::invalid_argument);  // alpha0 is not a PB option
  q.alpha0.reset();
  q.bounds = {-1.0, 1.0};
  CHECK_THROWS_AS(run(d, q), std::invalid_argument);  // bounds is not a PB option
  api::TestRequest np;
  np.method = "dp-f";
  CHECK_THROWS_AS(run(d, np), std::invalid_argument);  // a private method without epsilon
}

TEST_CASE("api: the baseline methods are charged once, with their guarantee, and refused past the budget",
          "[api][ledger][tot][dpf]") {
  dpmu::test::TempDir dir("dpmu_baselines_api");
  const std::string ledger = dir / "l.jsonl";
  api::ledger_init(ledger, "7,1e-5");
  const Data d = data(300, 4, 0.3);
  api::TestRequest tot;
  tot.method = "test-of-tests";
  tot.epsilon = 1.0;
  tot.ledger.path = ledger;
  const auto a = run(d, tot);
  CHECK(a["settings"]["ledger"]["epsilon"] == 1.0);
  CHECK(a["settings"]["ledger"]["delta"] == 0.0);
  api::TestRequest dpf;
  dpf.method = "dp-f";
  dpf.epsilon = 5.0;
  dpf.delta = 1e-6;
  dpf.bounds = {-3.0, 3.0};
  dpf.ledger.path = ledger;
  const auto b = run(d, dpf);
  CHECK(b["settings"]["ledger"]["epsilon"] == 5.0);
  CHECK(b["settings"]["ledger"]["delta"] == 1e-6);
  REQUIRE(runtime::read_ledger(ledger).entries.size() == 2);
  // 6 of 7 spent: another dp-f at epsilon 5 is refused, nothing charged
  CHECK_THROWS_AS(run(d, dpf), runtime::BudgetExceeded);
  CHECK(runtime::read_ledger(ledger).entries.size() == 2);
  // a seeded run is not a release and refuses a ledger
  tot.seed = 1;
  CHECK_THROWS(run(d, tot));
}
