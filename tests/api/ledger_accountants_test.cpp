// The ledger's accountants through api::ReleaseCharge with the guarantees the release types derive
// (core::PrivacyGuarantee): every entry records its mechanism; a tight ledger with a budget of
// (2, 1e-5) takes ten analytic-Gaussian test releases at (0.5, 1e-6) where a basic one refuses the
// fifth; the records of the Laplace and Wishart SSP releases and of selection.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "../runtime/temp_dir.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/core/composition.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/runtime/ledger.hpp"

using namespace dpmu;
using Catch::Matchers::Contains;

namespace {

core::PrivacyGuarantee gaussian_test_guarantee(double epsilon, double delta) {
  core::SubsampleAggregateSettings s;
  s.epsilon = epsilon;
  s.delta = delta;
  s.num_subsets = 10;
  s.limits = {0, 1};
  s.n = 200;
  return core::SubsampleAggregateRelease(s).privacy();
}

/// Charge `g` to the ledger at `path`: construct (the early check) and commit.
nlohmann::ordered_json charge(const std::string& path, const core::PrivacyGuarantee& g) {
  api::ReleaseCharge c(api::LedgerOptions{path, "", "data"}, "api test", g, {"statistic"});
  return api::to_json(*c.commit("the analysed bytes"));
}

}  // namespace

TEST_CASE("api accountants: ten Gaussian test releases fit (2, 1e-5) under tight, the fifth is refused under basic",
          "[api][ledger]") {
  dpmu::test::TempDir dir("dpmu_ledger_accountants");
  const auto g = gaussian_test_guarantee(0.5, 1e-6);
  REQUIRE(g.noise_kind == "gaussian");
  CHECK(g.sensitivity / g.noise_scale == Approx(core::analytic_gaussian_mu(0.5, 1e-6)).epsilon(1e-12));
  const auto record = api::mechanism_record(g);
  REQUIRE(record.has_value());
  CHECK(record->kind == "gaussian");
  CHECK(record->sensitivity_name == "l2_sensitivity");
  CHECK(record->neighbouring == g.neighbouring);

  const std::string tight = dir / "tight";
  api::ledger_init(tight, "2,1e-5", "tight");
  nlohmann::ordered_json last;
  for (int i = 0; i < 10; ++i) last = charge(tight, g);
  CHECK(last["accountant"] == "tight");
  CHECK(last["total_epsilon"].get<double>() == Approx(5.0));
  CHECK(last["accounted_total"]["epsilon"].get<double>() == Approx(1.5225256).epsilon(1e-6));
  const auto summary = api::ledger_summary(tight);
  CHECK(summary["totals"]["basic"]["epsilon"].get<double>() == Approx(5.0));
  CHECK(summary["totals"]["tight"]["epsilon"].get<double>() == Approx(1.5225256).epsilon(1e-6));
  CHECK(summary["totals"]["tight"]["delta"].get<double>() == 1e-5);
  CHECK(summary["remaining"]["epsilon"].get<double>() == Approx(2.0 - 1.5225256).epsilon(1e-5));
  for (const auto& e : runtime::read_ledger(tight).entries) {
    REQUIRE(e.mechanism.has_value());
    CHECK(e.mechanism->kind == "gaussian");
  }

  const std::string basic = dir / "basic";
  api::ledger_init(basic, "2,1e-5");
  for (int i = 0; i < 4; ++i) charge(basic, g);
  // Refused before any work: at construction.
  CHECK_THROWS_AS(api::ReleaseCharge(api::LedgerOptions{basic, "", "data"}, "api test", g, {"statistic"}),
                  runtime::BudgetExceeded);
  CHECK(runtime::read_ledger(basic).entries.size() == 4);
}

TEST_CASE("api accountants: Laplace, Wishart and selection records, a rho ledger refuses what zCDP cannot bound",
          "[api][ledger]") {
  core::SspReleaseSettings s;
  s.bounds = {{0.0, 1.0}};
  s.epsilon = 0.5;
  s.n = 100;
  s.p = 2;
  const auto laplace = core::SspRelease(s).privacy();
  CHECK(laplace.noise_kind == "laplace");
  CHECK(laplace.noise_scale == Approx(laplace.sensitivity / 0.5));
  s.mechanism = core::SspMechanismKind::wishart;
  s.delta = 1e-6;
  const auto wishart = core::SspRelease(s).privacy();
  CHECK(wishart.noise_kind == "wishart");

  dpmu::test::TempDir dir("dpmu_ledger_accountants");
  const std::string tight = dir / "tight";
  api::ledger_init(tight, "10,1e-5", "tight");
  charge(tight, laplace);
  charge(tight, wishart);
  charge(tight, gaussian_test_guarantee(0.5, 1e-6));
  const auto entries = runtime::read_ledger(tight).entries;
  CHECK(runtime::entry_family(entries[0]) == runtime::EntryFamily::pure);
  CHECK(runtime::entry_family(entries[1]) == runtime::EntryFamily::approximate);
  CHECK(runtime::entry_family(entries[2]) == runtime::EntryFamily::gaussian);
  const auto t = api::ledger_summary(tight)["totals"]["tight"];
  CHECK(t["pure"]["releases"] == 1);
  CHECK(t["basic_composition"]["releases"] == 1);
  CHECK(t["gaussian"]["releases"] == 1);
  CHECK(t["epsilon"].get<double>() <= 1.5 + 1e-12);

  const std::string rho = dir / "rho";
  api::ledger_init(rho, "rho=1");
  charge(rho, laplace);  // ε-DP: ε²/2
  CHECK(api::ledger_summary(rho)["totals"]["zcdp"]["rho"].get<double>() == Approx(0.125));
  CHECK_THROWS_WITH(charge(rho, wishart), Contains("cannot be accounted in zCDP"));
  CHECK(runtime::read_ledger(rho).entries.size() == 1);
  // A rho budget given with a release creates a zcdp ledger.
  const std::string created = dir / "created";
  api::ReleaseCharge c(api::LedgerOptions{created, "rho=0.5", "data"}, "api test", laplace, {"x"});
  c.commit("bytes");
  CHECK(runtime::read_ledger(created).accountant() == runtime::Accountant::zcdp);
  CHECK_THROWS_WITH(api::ledger_init(dir / "bad", "1", "pld"), Contains("--accountant 'pld'"));
}
