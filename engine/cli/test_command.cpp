#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "dpmu/core/bayes_factor.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/g_priors.hpp"
#include "dpmu/core/information_criteria.hpp"
#include "dpmu/core/linear_model.hpp"
#include "dpmu/runtime/data_table.hpp"

namespace dpmu::cli {

namespace {

struct TestOptions {
  bool non_private = false;
  std::string data;
  std::string response;
  std::vector<std::string> common;
  std::vector<std::string> tested;
  std::string prior = "g-prior";
  std::optional<double> g;
  double a = 3.0;
  double prior_h0 = 0.5;
};

std::vector<std::string> non_empty(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

void check_distinct_columns(const TestOptions& o) {
  std::vector<std::string> all = o.common;
  all.insert(all.end(), o.tested.begin(), o.tested.end());
  all.push_back(o.response);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (all[i] == all[j]) {
        throw std::invalid_argument("column '" + all[i] +
                                    "' is named twice among --response, --common and --tested");
      }
    }
  }
}

void run_test(TestOptions o) {
  o.common = non_empty(o.common);
  o.tested = non_empty(o.tested);
  if (o.tested.empty()) throw std::invalid_argument("--tested needs at least one column");
  check_distinct_columns(o);
  core::Prior prior;
  prior.kind = core::parse_prior_kind(o.prior);
  prior.g = o.g;
  prior.a = o.a;
  core::check_prior(prior);
  core::check_open_interval("dpmu test", "--prior-h0", o.prior_h0, 0.0, 1.0);
  if (!o.non_private) {
    throw std::invalid_argument(
        "this build of `dpmu test` computes the non-private test only; pass --non-private");
  }

  std::vector<std::string> wanted = o.common;
  wanted.insert(wanted.end(), o.tested.begin(), o.tested.end());
  wanted.push_back(o.response);
  const runtime::DataTable table = runtime::read_csv(o.data, wanted);
  const auto n = static_cast<Eigen::Index>(table.rows());

  Eigen::MatrixXd common(n, static_cast<Eigen::Index>(o.common.size() + 1));
  common.col(0).setOnes();
  common.rightCols(static_cast<Eigen::Index>(o.common.size())) = table.matrix(o.common);
  const Eigen::MatrixXd tested = table.matrix(o.tested);
  const auto& y = table.column(o.response);
  const Eigen::VectorXd response = Eigen::Map<const Eigen::VectorXd>(y.data(), n);

  std::vector<std::string> names{"(intercept)"};
  names.insert(names.end(), o.common.begin(), o.common.end());
  names.insert(names.end(), o.tested.begin(), o.tested.end());
  const core::NestedFit fit = core::fit_nested_models(common, tested, response, names);

  const double nd = static_cast<double>(fit.n);
  const int p = static_cast<int>(fit.p);
  const int p0 = static_cast<int>(fit.p0);
  nlohmann::ordered_json out;
  out["data"] = o.data;
  out["response"] = o.response;
  out["common"] = o.common;
  out["tested"] = o.tested;
  out["private"] = false;
  out["n"] = fit.n;
  out["p"] = fit.p;
  out["p0"] = fit.p0;
  out["r_squared"] = fit.r_squared;
  out["log_one_minus_r_squared"] = fit.log_one_minus_r_squared;
  out["two_log_likelihood_ratio"] = core::two_log_likelihood_ratio(fit.log_one_minus_r_squared, nd);
  out["prior"] = core::to_string(prior.kind);
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  if (prior.kind == core::PriorKind::g_prior) params["g"] = prior.g.value_or(nd);
  if (prior.kind == core::PriorKind::hyper_g || prior.kind == core::PriorKind::hyper_g_n) params["a"] = prior.a;
  out["prior_parameters"] = params;
  double log_stat = 0.0;
  if (core::is_bayesian(prior.kind)) {
    const auto bf = core::log_bayes_factor_and_shrinkage(prior, fit.log_one_minus_r_squared, nd, p, p0);
    log_stat = bf.log_bayes_factor;
    out["statistic"] = "log_bayes_factor";
    out["log_statistic"] = log_stat;
    out["shrinkage"] = bf.shrinkage;
  } else {
    log_stat = core::log_information_criterion(prior.kind, fit.log_one_minus_r_squared, nd, p);
    out["statistic"] = "log_information_criterion";
    out["log_statistic"] = log_stat;
  }
  if (prior.kind != core::PriorKind::lr) {
    out["prior_probability_h0"] = o.prior_h0;
    out["posterior_probability_h1"] = core::posterior_probability_h1(log_stat, o.prior_h0);
  }
  std::cout << out.dump(2) << "\n";
}

}  // namespace

void add_test_command(CLI::App& app) {
  auto opts = std::make_shared<TestOptions>();
  CLI::App* cmd = app.add_subcommand(
      "test",
      "Test H0: Y ~ 1 + common against H1: Y ~ 1 + common + tested with a Bayes factor (mixture of "
      "g-priors, paper Eq. 3) or an information criterion (Eq. 4). Prints JSON.");
  cmd->add_flag("--non-private", opts->non_private, "Compute the confidential (non-private) statistic");
  cmd->add_option("--data", opts->data, "CSV file with a header row")->required()->check(CLI::ExistingFile);
  cmd->add_option("--response", opts->response, "Response column Y")->required();
  cmd->add_option("--common", opts->common, "Comma-separated common predictors (may be empty)")
      ->delimiter(',');
  cmd->add_option("--tested", opts->tested, "Comma-separated tested predictors")->required()->delimiter(',');
  cmd->add_option("--prior", opts->prior,
                  "g-prior | zellner-siow | hyper-g | hyper-g-n | robust | bic | aic | lr")
      ->capture_default_str();
  cmd->add_option("--g", opts->g, "Fixed g of the g-prior (default: n)");
  cmd->add_option("--a", opts->a, "Parameter a > 2 of hyper-g and hyper-g-n")->capture_default_str();
  cmd->add_option("--prior-h0", opts->prior_h0, "Prior probability of H0, in (0, 1)")->capture_default_str();
  cmd->callback([opts] { run_test(*opts); });
}

}  // namespace dpmu::cli
