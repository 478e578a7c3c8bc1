// `dpmu test`: non-private and differentially private tests of nested linear models.
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "audit_command.hpp"
#include "commands.hpp"
#include "data_options.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/api/test.hpp"
#include "dpmu/core/dp_f_test.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/core/test_of_tests.hpp"
#include "dpmu/runtime/data_table.hpp"

namespace dpmu::cli {

namespace {

using Json = nlohmann::ordered_json;

struct TestOptions {
  bool non_private = false;
  std::string data;
  std::string sep = "auto";
  std::string response;
  std::vector<std::string> common;
  std::vector<std::string> tested;
  api::TestRequest request;  // prior, privacy, ledger
};

std::vector<std::string> non_empty(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

/// The columns of a test: common (without the intercept), tested and the response, read once.
struct TestData {
  std::string bytes;  // the file as read: what the ledger fingerprints
  Eigen::MatrixXd common;
  Eigen::MatrixXd tested;
  Eigen::VectorXd response;
};

TestData load_test_data(const TestOptions& o, const char* command) {
  std::vector<std::string> wanted = o.common;
  wanted.insert(wanted.end(), o.tested.begin(), o.tested.end());
  wanted.push_back(o.response);
  DataFile file = read_data_file(command, o.data, wanted, o.sep);
  const auto n = static_cast<Eigen::Index>(file.table.rows());
  TestData d;
  d.common = file.table.matrix(o.common);
  d.tested = file.table.matrix(o.tested);
  const auto& y = file.table.column(o.response);
  d.response = Eigen::Map<const Eigen::VectorXd>(y.data(), n);
  d.bytes = std::move(file.bytes);
  return d;
}

/// The checks that need no data, then the columns.
TestData checked_data(TestOptions& o, const char* command) {
  o.common = non_empty(o.common);
  o.tested = non_empty(o.tested);
  if (o.tested.empty()) throw std::invalid_argument("--tested needs at least one column");
  std::vector<std::string> all = o.common;
  all.insert(all.end(), o.tested.begin(), o.tested.end());
  all.push_back(o.response);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (all[i] == all[j]) {
        throw std::invalid_argument("column '" + all[i] + "' is named twice among --response, --common and --tested");
      }
    }
  }
  api::test_prior(o.request);
  api::check_test_method_options(o.request);
  o.request.ledger.data_label = o.data;
  api::check_ledger_options(o.request.ledger, o.request.epsilon && !o.request.seed);
  return load_test_data(o, command);
}

void run_test(TestOptions o) {
  if (o.non_private == o.request.epsilon.has_value()) {
    throw std::invalid_argument(
        "choose one: --non-private (confidential statistic) or --epsilon E --groups M (differentially private)");
  }
  default_ledger_from_environment(o.request.ledger, o.request.epsilon && !o.request.seed);
  const TestData d = checked_data(o, "dpmu test");
  const auto out = api::test(d.common, d.tested, d.response, o.common, o.tested, o.response, o.request, d.bytes);
  std::cout << api::json_text(out, 2) << "\n";
}

void register_test_options(CLI::App* cmd, TestOptions& o) {
  cmd->add_flag("--non-private", o.non_private, "Compute the confidential (non-private) statistic");
  cmd->add_option("--data", o.data, "CSV file with a header row")->required()->check(CLI::ExistingFile);
  add_separator_option(cmd, o.sep);
  cmd->add_option("--response", o.response, "Response column Y")->required();
  cmd->add_option("--common", o.common, "Comma-separated common predictors (may be empty)")->delimiter(',');
  cmd->add_option("--tested", o.tested, "Comma-separated tested predictors")->required()->delimiter(',');
  cmd->add_option("--prior", o.request.prior, "g-prior | zellner-siow | hyper-g | hyper-g-n | robust | bic | aic | lr")
      ->capture_default_str();
  cmd->add_option("--g", o.request.g, "Fixed g of the g-prior (default: n, or b_i per subset)");
  cmd->add_option("--a", o.request.a, "Parameter a > 2 of hyper-g and hyper-g-n")->capture_default_str();
  cmd->add_option("--prior-h0", o.request.prior_h0, "Prior probability of H0, in (0, 1)")->capture_default_str();
  auto* dp = "Differential privacy";
  cmd->add_option("--epsilon", o.request.epsilon, "Privacy parameter epsilon > 0")->group(dp);
  cmd->add_option("--delta", o.request.delta, "Privacy parameter delta in [0, 1); 0 = Laplace, > 0 = analytic Gaussian")
      ->capture_default_str()
      ->group(dp);
  cmd->add_option("--groups", o.request.groups, "Number of subsets M for subsample and aggregate")
      ->group(dp)
      ->check(unsigned_integer());
  cmd->add_option("--censor", o.request.censor, "Censoring limits L,U on the statistic's log scale")
      ->delimiter(',')
      ->group(dp);
  cmd->add_option("--censor-probability", o.request.censor_probability,
                  "Censoring limits as posterior probabilities of H1, e.g. 0.01,0.99")
      ->delimiter(',')
      ->group(dp);
  cmd->add_option("--alpha", o.request.alpha, "Significance levels (intervals and critical values)")
      ->delimiter(',')
      ->capture_default_str()
      ->group(dp);
  cmd->add_option("--seed", o.request.seed,
                  "Seed: reproducible simulation noise; the output says \"private\": false (not a release)")
      ->check(unsigned_integer())
      ->group(dp);
  cmd->add_option("--simulations", o.request.simulations, "Null simulations for corrected critical values")
      ->capture_default_str()
      ->group(dp)
      ->check(unsigned_integer());
  cmd->add_option("--gaussian-calibration", o.request.gaussian_calibration,
                  "exact (Balle & Wang sigma for sensitivity (U-L)/M) | paper-literal (variance a(U-L)^2/(2M eps))")
      ->capture_default_str()
      ->group(dp);
  auto* base = "Baselines (docs/methods.md Sec. 11)";
  cmd->add_option("--method", o.request.method,
                  "subsample-aggregate (paper Sec. 4) | test-of-tests (Kazan et al. 2023, pure epsilon-DP) | dp-f "
                  "(Alabi & Vadhan 2022, zCDP reported as (epsilon, delta))")
      ->capture_default_str()
      ->group(base);
  cmd->add_option("--bounds", o.request.bounds,
                  "dp-f: public clipping bounds L,U for every column, or one L,U pair per column (common, tested, "
                  "response)")
      ->delimiter(',')
      ->group(base);
  cmd->add_option("--alpha0", o.request.alpha0,
                  "test-of-tests: subsample level alpha0 (with --groups M; default: both by the authors' rule)")
      ->group(base);
  cmd->add_option("--power-target", o.request.power_target, "test-of-tests: target power of the authors' rule")
      ->capture_default_str()
      ->group(base);
  add_ledger_options(cmd, o.request.ledger);
}

/// The rows an audited test reads (common without the intercept, tested, response) and their names.
AuditTarget audit_rows(const TestOptions& o, const TestData& d) {
  AuditTarget t;
  t.command = "dpmu test --method " + o.request.method;
  t.data.resize(d.response.size(), d.common.cols() + d.tested.cols() + 1);
  t.data << d.common, d.tested, d.response;
  t.columns = o.common;
  t.columns.insert(t.columns.end(), o.tested.begin(), o.tested.end());
  t.columns.push_back(o.response);
  return t;
}

/// `dpmu audit test --method test-of-tests`: the released noisy count Z (the p-value is a function of it).
AuditTarget test_of_tests_audit_target(const TestOptions& o, const TestData& d) {
  const auto n = static_cast<std::size_t>(d.response.size());
  const int p = static_cast<int>(d.tested.cols()), p0 = static_cast<int>(d.common.cols() + 1);
  auto release = std::make_shared<const core::TestOfTestsRelease>(api::test_of_tests_settings(o.request, n, p, p0));
  AuditTarget t = audit_rows(o, d);
  for (Eigen::Index j = 0; j < t.data.cols(); ++j)
    t.bounds.push_back({t.data.col(j).minCoeff(), t.data.col(j).maxCoeff()});
  t.bounds_source = "the data's range (the count's sensitivity does not depend on bounds)";
  t.guarantee = release->privacy();
  t.release = [release, p0, p](const Eigen::MatrixXd& rows, core::NoiseSource& noise) {
    Eigen::MatrixXd common(rows.rows(), p0);
    common.col(0).setOnes();
    common.rightCols(p0 - 1) = rows.leftCols(p0 - 1);
    const auto r = release->release(common, rows.middleCols(p0 - 1, p), rows.col(rows.cols() - 1), noise);
    Eigen::VectorXd v(1);
    v(0) = r.noisy_count;
    return v;
  };
  return t;
}

/// `dpmu audit test --method dp-f`: the released moments (the statistic and p-value are functions of them).
AuditTarget dp_f_audit_target(const TestOptions& o, const TestData& d) {
  const auto n = static_cast<std::size_t>(d.response.size());
  const int p = static_cast<int>(d.tested.cols()), p0 = static_cast<int>(d.common.cols() + 1);
  auto release = std::make_shared<const core::DpFTestRelease>(api::dp_f_test_settings(o.request, n, p, p0));
  AuditTarget t = audit_rows(o, d);
  const auto& b = release->settings().bounds;
  for (Eigen::Index j = 0; j < t.data.cols(); ++j) t.bounds.push_back(b.size() == 1 ? b[0] : b[j]);
  t.bounds_source = "--bounds";
  t.guarantee = release->privacy(o.request.delta);
  t.release = [release](const Eigen::MatrixXd& rows, core::NoiseSource& noise) {
    const Eigen::MatrixXd m = release->release(rows, noise).moments;
    const auto dim = m.rows();
    Eigen::VectorXd v(dim * (dim + 1) / 2 - 1);
    Eigen::Index k = 0;
    for (Eigen::Index j = 0; j < dim; ++j) {
      for (Eigen::Index l = j; l < dim; ++l) {
        if (j > 0 || l > 0) v(k++) = m(j, l);
      }
    }
    return v;
  };
  return t;
}

/// `dpmu audit test`: the released noisy statistic T̃ (T* is a function of it).
AuditTarget test_audit_target(TestOptions o) {
  if (o.non_private || !o.request.epsilon) {
    throw std::invalid_argument("dpmu audit test audits a private test: give --epsilon");
  }
  if (!o.request.ledger.path.empty()) throw std::invalid_argument("dpmu audit is not a release: drop --ledger");
  const TestData d = checked_data(o, "dpmu audit test");
  if (o.request.method == "test-of-tests") return test_of_tests_audit_target(o, d);
  if (o.request.method == "dp-f") return dp_f_audit_target(o, d);
  auto release = api::make_test_release(o.request, static_cast<std::size_t>(d.response.size()),
                                        static_cast<int>(d.tested.cols()), static_cast<int>(d.common.cols() + 1));
  AuditTarget t;
  t.command = "dpmu test";
  const Eigen::Index n = d.response.size(), p0 = d.common.cols() + 1, p = d.tested.cols();
  t.data.resize(n, p0 - 1 + p + 1);
  t.data << d.common, d.tested, d.response;
  t.columns = o.common;
  t.columns.insert(t.columns.end(), o.tested.begin(), o.tested.end());
  t.columns.push_back(o.response);
  for (Eigen::Index j = 0; j < t.data.cols(); ++j)
    t.bounds.push_back({t.data.col(j).minCoeff(), t.data.col(j).maxCoeff()});
  t.bounds_source = "the data's range (a test has no declared bounds: its sensitivity does not depend on them)";
  t.guarantee = release->privacy();
  t.release = [release, p0, p](const Eigen::MatrixXd& rows, core::NoiseSource& noise) {
    Eigen::MatrixXd common(rows.rows(), p0);
    common.col(0).setOnes();
    common.rightCols(p0 - 1) = rows.leftCols(p0 - 1);
    const auto r = release->release(common, rows.middleCols(p0 - 1, p), rows.col(rows.cols() - 1), noise);
    Eigen::VectorXd v(1);
    v(0) = r.noisy_statistic;
    return v;
  };
  return t;
}

}  // namespace

void add_test_command(CLI::App& app, CLI::App& audit) {
  auto opts = std::make_shared<TestOptions>();
  CLI::App* cmd = app.add_subcommand(
      "test",
      "Test H0: Y ~ 1 + common against H1: Y ~ 1 + common + tested with a Bayes factor (mixture of g-priors, paper "
      "Eq. 3) or an information criterion (Eq. 4), non-private or differentially private by subsample and "
      "aggregate (paper Sec. 4). Prints JSON.");
  register_test_options(cmd, *opts);
  cmd->callback([opts] { run_test(*opts); });
  auto ao = std::make_shared<TestOptions>();
  auto audit_options = std::make_shared<AuditCliOptions>();
  CLI::App* acmd = audit.add_subcommand("test", "Audit the release of dpmu test (the noisy statistic)");
  register_test_options(acmd, *ao);
  add_audit_options(acmd, *audit_options);
  acmd->callback([ao, audit_options] { run_audit(test_audit_target(*ao), *audit_options); });
}

}  // namespace dpmu::cli
