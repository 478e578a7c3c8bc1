// The checks every SSP mechanism unit (engine/core/include/dpmu/core/ssp.hpp, SspMechanismUnits)
// passes: its spelling round-trips, its sensitivity is validated by name, its centred noise has the
// documented off-diagonal quantile (absolute_quantile, the threshold of docs/methods.md §5.4), and
// a release describes it. Fixed seeds; tolerances from the Monte Carlo standard error.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "dpmu/core/random.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/core/ssp.hpp"

using namespace dpmu::core;

namespace {
SspMechanism mechanism_of(SspMechanismKind kind) {
  SspMechanism m;
  m.kind = kind;
  m.p = 2;
  m.lower = -1.0;
  m.upper = 1.0;
  m.epsilon = 0.5;
  m.delta = kind == SspMechanismKind::wishart ? 1e-4 : 0.0;
  return m;
}
}  // namespace

TEMPLATE_LIST_TEST_CASE("every SSP mechanism unit: spelling, validation, noise quantile", "[ssp][statistical]",
                        SspMechanismUnits) {
  using Unit = TestType;
  INFO(Unit::name);
  CHECK(to_string(Unit::kind) == Unit::name);
  CHECK(parse_ssp_mechanism(Unit::name) == Unit::kind);

  SspMechanism m = mechanism_of(Unit::kind);
  CHECK_NOTHROW(check_ssp_mechanism(m));
  // Reading (b): a set sensitivity must be the unit's own, positive and finite.
  m.noise_l1_sensitivity = -1.0;
  m.noise_row_norm_squared = -1.0;
  const std::string field =
      Unit::sensitivity_name == "l1_sensitivity" ? "noise_l1_sensitivity" : "noise_row_norm_squared";
  CHECK_THROWS_WITH(check_ssp_mechanism(m), Catch::Contains(field + " is -1"));

  // P(|E_ij| ≤ x_0.9) = 0.9 for the off-diagonal entries of the centred noise.
  m = mechanism_of(Unit::kind);
  const double x = Unit::absolute_quantile(m, 0.9);
  CHECK(threshold_value(m, 0.9) == x);
  RngStream rng(17, static_cast<std::uint64_t>(Unit::kind), 0, StreamPurpose::noise);
  int below = 0;
  constexpr int kDraws = 4000;
  for (int r = 0; r < kDraws; ++r) {
    const Eigen::MatrixXd e = ssp_noise(m, rng);
    for (int j = 0; j < 3; ++j) {
      for (int i = j + 1; i < 3; ++i) below += std::abs(e(i, j)) <= x ? 1 : 0;
    }
  }
  const double total = 3.0 * kDraws;
  const double se = std::sqrt(0.9 * 0.1 / total);
  CHECK(std::abs(below / total - 0.9) < 4.0 * se);
}

TEST_CASE("an SspMechanismKind that is no unit is an error naming it", "[ssp]") {
  const auto bogus = static_cast<SspMechanismKind>(7);
  CHECK_THROWS_WITH(to_string(bogus), Catch::Contains("SspMechanismKind value 7 is not a mechanism"));
  SspMechanism m = mechanism_of(SspMechanismKind::laplace);
  m.kind = bogus;
  CHECK_THROWS_AS(check_ssp_mechanism(m), std::invalid_argument);
  CHECK_THROWS_WITH(parse_ssp_mechanism("gaussian"), Catch::Contains("use laplace or wishart"));
}

TEST_CASE("a release takes its privacy checks and description from the mechanism's unit", "[ssp]") {
  SspReleaseSettings s;
  s.p = 1;
  s.n = 100;
  s.bounds = {{0.0, 1.0}, {0.0, 1.0}};
  s.epsilon = 0.5;
  s.mechanism = SspMechanismKind::laplace;
  s.delta = 1e-5;
  CHECK_THROWS_WITH(SspRelease(s), Catch::Contains("0 for the Laplace mechanism"));
  s.delta = 0.0;
  CHECK(SspRelease(s).privacy().sensitivity_name == SspLaplaceMechanism::sensitivity_name);
  s.mechanism = SspMechanismKind::wishart;
  CHECK_THROWS_WITH(SspRelease(s), Catch::Contains("delta is 0"));
  s.delta = 1e-5;
  const PrivacyGuarantee g = SspRelease(s).privacy();
  CHECK(g.sensitivity_name == SspWishartMechanism::sensitivity_name);
  CHECK(g.mechanism == SspWishartMechanism::description);
}
