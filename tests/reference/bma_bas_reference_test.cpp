// Non-private model averaging against R package BAS (bas.lm with full enumeration); values in
// bma_bas_reference.json, produced by bma_bas_reference.R (header there says how).
// Requirement (docs/bma.md): agreement to 1e-6 on posterior inclusion probabilities, posterior
// model probabilities and posterior means (relative to max(1, |mean|) for the means).
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpmu/core/bma.hpp"
#include "dpmu/runtime/data_table.hpp"

using namespace dpmu::core;

namespace {
CoefficientPrior bas_prior(const std::string& name, const nlohmann::json& alpha) {
  if (name == "g-prior") return parse_coefficient_prior("g-prior", alpha.get<double>());
  if (name == "hyper-g") return parse_coefficient_prior("hyper-g", std::nullopt, alpha.get<double>());
  if (name == "JZS") return parse_coefficient_prior("zellner-siow");
  if (name == "ZS-null") return parse_coefficient_prior("zellner-siow-laplace");
  if (name == "BIC") return parse_coefficient_prior("bic");
  if (name == "AIC") return parse_coefficient_prior("aic");
  FAIL("unknown BAS prior " << name);
  return {};
}

Eigen::MatrixXd centred_gram(const dpmu::runtime::DataTable& t, const std::vector<std::string>& predictors,
                             const std::string& response) {
  std::vector<std::string> cols = predictors;
  cols.push_back(response);
  Eigen::MatrixXd d = t.matrix(cols);
  d.rowwise() -= d.colwise().mean();
  return d.transpose() * d;
}
}  // namespace

TEST_CASE("non-private BMA agrees with BAS bas.lm (full enumeration) to 1e-6", "[bma][reference]") {
  std::ifstream in(std::string(DPMU_TEST_REFERENCE_DIR) + "/bma_bas_reference.json");
  REQUIRE(in);
  const auto ref = nlohmann::json::parse(in);
  REQUIRE(ref["configurations"].size() >= 10);
  double worst_pip = 0, worst_prob = 0, worst_mean = 0;
  for (const auto& c : ref["configurations"]) {
    const std::string name = c["name"];
    INFO(name);
    const auto predictors = c["predictors"].get<std::vector<std::string>>();
    const std::string response = c["response"];
    const auto table = dpmu::runtime::read_csv(std::string(DPMU_TEST_DATA_DIR) + "/" + c["data"].get<std::string>());
    const Eigen::MatrixXd g = centred_gram(table, predictors, response);
    const double n = static_cast<double>(table.rows());
    REQUIRE(n == c["n"].get<double>());
    const CoefficientPrior prior = bas_prior(c["prior"], c["alpha"]);
    const ModelPrior mp = parse_model_prior(c["model_prior"].get<std::string>());
    const BmaResult r = bayesian_model_averaging(g, n, prior, mp);
    const auto pip = c["posterior_inclusion_probabilities"].get<std::vector<double>>();
    const auto mean = c["posterior_means"].get<std::vector<double>>();
    const auto masks = c["model_masks"].get<std::vector<double>>();
    const auto probs = c["model_probabilities"].get<std::vector<double>>();
    REQUIRE(static_cast<int>(pip.size()) == r.p);
    CHECK(r.models_rank_deficient == 0);
    for (int j = 0; j < r.p; ++j) {
      INFO("predictor " << predictors[static_cast<std::size_t>(j)]);
      const double dp = std::abs(r.posterior_inclusion_probability(j) - pip[static_cast<std::size_t>(j)]);
      const double dm = std::abs(r.model_averaged_coefficients(j) - mean[static_cast<std::size_t>(j)]) /
                        std::max(1.0, std::abs(mean[static_cast<std::size_t>(j)]));
      CHECK(dp < 1e-6);
      CHECK(dm < 1e-6);
      worst_pip = std::max(worst_pip, dp);
      worst_mean = std::max(worst_mean, dm);
    }
    for (std::size_t i = 0; i < masks.size(); ++i) {
      const auto mask = static_cast<Eigen::Index>(masks[i]);
      const double ours = std::exp(r.log_posterior_probability(mask));
      const double dd = std::abs(ours - probs[i]);
      INFO("model " << mask);
      CHECK(dd < 1e-6);
      worst_prob = std::max(worst_prob, dd);
    }
  }
  WARN("max |diff| vs BAS: PIP " << worst_pip << ", model probability " << worst_prob << ", posterior mean (rel) "
                                 << worst_mean);
}
