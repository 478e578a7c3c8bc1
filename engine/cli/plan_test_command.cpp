// `dpmu plan-test`: choose M and censoring limits before a private test (paper §4.5).
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "dpmu/api/plan_test.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/core/checks.hpp"

namespace dpmu::cli {

namespace {

struct PlanOptions {
  api::PlanTestRequest request;
  std::vector<std::string> censor;  // "L,U" each
};

core::CensoringLimits parse_limits(const std::string& text) {
  const auto comma = text.find(',');
  if (comma == std::string::npos) throw std::invalid_argument("--censor '" + text + "': expected L,U");
  try {
    std::size_t used1 = 0, used2 = 0;
    const std::string a = text.substr(0, comma), b = text.substr(comma + 1);
    core::CensoringLimits lim{std::stod(a, &used1), std::stod(b, &used2)};
    if (used1 != a.size() || used2 != b.size()) throw std::invalid_argument("trailing characters");
    core::check_censoring_limits("--censor", lim);
    return lim;
  } catch (const std::domain_error&) {
    throw;
  } catch (const std::exception&) {
    throw std::invalid_argument("--censor '" + text + "': expected two numbers L,U");
  }
}

void run_plan(PlanOptions o) {
  for (const auto& c : o.censor) o.request.censor.push_back(parse_limits(c));
  std::cout << api::json_text(api::plan_test(o.request), 2) << "\n";
}

}  // namespace

void add_plan_test_command(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan-test",
      "Before a private test: simulate the bias, variance and MSE of the DP statistic for candidate numbers of "
      "subsets M and censoring limits, under H0 or at a given R², and recommend M (paper §4.5). Uses public "
      "quantities only. Prints JSON.");
  cmd->add_option("--n", o->request.n, "Number of rows")->required()->check(unsigned_integer());
  cmd->add_option("--p", o->request.p, "Number of tested predictors")->capture_default_str();
  cmd->add_option("--p0", o->request.p0, "Number of common columns, intercept included")->capture_default_str();
  cmd->add_option("--prior", o->request.prior, "g-prior | zellner-siow | hyper-g | hyper-g-n | robust | bic | aic | lr")
      ->capture_default_str();
  cmd->add_option("--g", o->request.g, "Fixed g of the g-prior (default b_i)");
  cmd->add_option("--a", o->request.a, "Parameter of hyper-g / hyper-g-n")->capture_default_str();
  cmd->add_option("--epsilon", o->request.epsilon, "Privacy parameter epsilon > 0")->required();
  cmd->add_option("--delta", o->request.delta, "Privacy parameter delta in [0, 1)")->capture_default_str();
  cmd->add_option("--groups", o->request.groups, "Candidate numbers of subsets M")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--censor", o->censor, "Candidate censoring limits L,U (repeat the flag for several)");
  cmd->add_option("--r-squared", o->request.r_squared, "Scenario: full-data R² (default: the null hypothesis)");
  cmd->add_option("--simulations", o->request.simulations, "Monte Carlo replicates per setting")
      ->capture_default_str()
      ->check(unsigned_integer());
  cmd->add_option("--seed", o->request.seed, "Seed of the simulation")->check(unsigned_integer());
  cmd->add_option("--gaussian-calibration", o->request.gaussian_calibration, "exact | paper-literal")
      ->capture_default_str();
  cmd->callback([o] { run_plan(*o); });
}

}  // namespace dpmu::cli
