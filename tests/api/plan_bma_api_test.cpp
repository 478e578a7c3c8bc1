// api::plan_bma: one simulation per setting, whatever the spelling of an equivalent option.
#include <catch2/catch.hpp>
#include <string>

#include "dpmu/api/plan_bma.hpp"

using namespace dpmu;

TEST_CASE("api::plan_bma: the model prior's spellings give one simulation (it keys the cells' random streams)",
          "[api][plan-bma]") {
  api::PlanBmaRequest q;
  q.n = 500;
  q.epsilon = 2.0;
  q.coefficients = std::vector<double>{0.8, 0.0, 0.5};
  q.sigma = 1.0;
  q.replicates = 10;
  q.seed = 5;
  q.uncertainty = "plug-in";
  q.model_prior = "beta-binomial:1,1";
  const auto a = api::plan_bma(q);
  q.model_prior = "beta-binomial(1,1)";  // R's spelling: the same prior (it gave other numbers before)
  const auto b = api::plan_bma(q);
  CHECK(a["plug_in"].dump() == b["plug_in"].dump());
  CHECK(b["settings"]["model_prior"] == "beta-binomial:1,1");
  q.model_prior = "uniform";  // a different prior: different posteriors of the same releases
  const auto c = api::plan_bma(q);
  CHECK(a["plug_in"]["pip"].dump() != c["plug_in"]["pip"].dump());
}
