// `dpmu test --method test-of-tests | dp-f`: the baselines as releases (docs/methods.md §11),
// charged like every release (ReleaseCharge::draw_and_commit) and reported with settings, released
// values and diagnostics (api::ReleaseReport).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "dpmu/api/release_noise.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/api/test.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/dp_f_test.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/core/test_of_tests.hpp"
#include "dpmu/core/tulap.hpp"
#include "dpmu/runtime/secure_random.hpp"

namespace dpmu::api {

namespace {

using Json = nlohmann::ordered_json;

Json matrix_json(const Eigen::MatrixXd& m) {
  Json out = Json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    Json row = Json::array();
    for (Eigen::Index j = 0; j < m.cols(); ++j) row.push_back(m(i, j));
    out.push_back(row);
  }
  return out;
}

void common_settings(ReleaseReport& report, const TestRequest& q, const std::string& response,
                     const std::vector<std::string>& common_names, const std::vector<std::string>& tested_names,
                     std::size_t n, int p, int p0) {
  if (!q.ledger.data_label.empty()) report.setting("data", q.ledger.data_label);
  report.setting("response", response);
  report.setting("common", common_names);
  report.setting("tested", tested_names);
  report.setting("method", q.method);
  report.setting("seed", q.seed ? Json(*q.seed) : Json(nullptr));
  report.setting("n", n);
  report.setting("p", p);
  report.setting("p0", p0);
}

Json decisions(const std::vector<double>& alphas, double p_value) {
  Json out = Json::array();
  for (double a : alphas) out.push_back({{"significance_level", a}, {"reject", p_value <= a}});
  return out;
}

/// The bytes the ledger fingerprints when the caller gave none.
std::string ledger_bytes(const TestRequest& q, std::string_view data_bytes, const Eigen::MatrixXd& cols,
                         const std::vector<std::string>& names) {
  if (!data_bytes.empty() || q.ledger.path.empty()) return std::string(data_bytes);
  return matrix_bytes(cols, names);
}

}  // namespace

core::TestOfTestsSettings test_of_tests_settings(const TestRequest& q, std::size_t n, int p, int p0,
                                                 nlohmann::ordered_json* tuning) {
  const char* cmd = "dpmu test --method test-of-tests";
  if (!q.epsilon) throw std::invalid_argument("--method test-of-tests needs --epsilon");
  core::check_positive_finite(cmd, "--epsilon", *q.epsilon);
  check_epsilon_floor(cmd, "--epsilon", *q.epsilon);
  if (*q.epsilon > 1000.0) core::throw_domain(cmd, "--epsilon", *q.epsilon, "at most 1000 for the Tulap sampler");
  if (q.delta != 0.0) {
    throw std::invalid_argument("--method test-of-tests is pure epsilon-DP (Tulap noise): drop --delta");
  }
  if (q.alpha.empty()) throw std::invalid_argument("--alpha needs at least one level");
  for (double a : q.alpha) core::check_open_interval(cmd, "--alpha", a, 0.0, 1.0);
  core::check_open_interval(cmd, "--power-target", q.power_target, 0.0, 1.0);
  if (q.groups.has_value() != q.alpha0.has_value()) {
    throw std::invalid_argument(
        "--method test-of-tests takes both --groups M and --alpha0 A (your own choice) or neither (the authors' "
        "rule chooses them)");
  }
  core::TestOfTestsSettings s;
  s.epsilon = *q.epsilon;
  s.n = n;
  s.p0 = p0;
  s.q = p;
  if (q.groups) {
    core::check_open_interval(cmd, "--alpha0", *q.alpha0, 0.0, 1.0);
    s.num_subsets = *q.groups;
    s.alpha0 = *q.alpha0;
    if (tuning) *tuning = {{"rule", "given (--groups, --alpha0)"}};
    return s;
  }
  const auto min_rows = static_cast<std::size_t>(p0 + p + 1);
  if (n < min_rows) {
    throw std::invalid_argument("--method test-of-tests needs more rows than coefficients (n > p0 + p)");
  }
  const std::vector<std::size_t> m_grid = core::test_of_tests_m_grid(n, min_rows);
  std::vector<double> effects;
  for (int i = 0; i <= 28; ++i) effects.push_back(0.1 + 0.05 * i);
  const double eps_used = core::tulap_dyadic_epsilon(*q.epsilon);
  const core::PublicTestPower power = [p0, p, min_rows](double effect, std::size_t rows, double a0) {
    return rows < min_rows ? std::nan("") : core::partial_f_test_power(effect, rows, p0, p, a0);
  };
  const core::TestOfTestsTuning t =
      core::practical_m_alpha0(q.power_target, power, eps_used, n, m_grid, effects, q.alpha.front());
  s.num_subsets = t.m;
  s.alpha0 = t.alpha0;
  if (tuning) {
    *tuning = {{"rule",
                "Kazan et al. (2023) practical.m.alpha0: smallest Cohen's f in 0.1, 0.15, ..., 1.5 "
                "reaching the target power; m and alpha0 maximise the power there"},
               {"power_target", q.power_target},
               {"tuning_alpha", q.alpha.front()},
               {"tuned_effect_cohens_f", t.effect},
               {"power_at_tuned_effect", t.power}};
  }
  return s;
}

core::DpFTestSettings dp_f_test_settings(const TestRequest& q, std::size_t n, int p, int p0) {
  const char* cmd = "dpmu test --method dp-f";
  if (!q.epsilon) throw std::invalid_argument("--method dp-f needs --epsilon and --delta");
  core::check_positive_finite(cmd, "--epsilon", *q.epsilon);
  check_epsilon_floor(cmd, "--epsilon", *q.epsilon);
  if (!(q.delta > 0.0 && q.delta < 1.0)) {
    core::throw_domain(cmd, "--delta", q.delta,
                       "in (0, 1): the DP F-test is rho-zCDP, reported as (epsilon, delta)-DP (e.g. --delta 1e-6)");
  }
  if (q.alpha.empty()) throw std::invalid_argument("--alpha needs at least one level");
  for (double a : q.alpha) core::check_open_interval(cmd, "--alpha", a, 0.0, 1.0);
  const std::size_t columns = static_cast<std::size_t>(p0 - 1 + p + 1);
  if (q.bounds.size() != 2 && q.bounds.size() != 2 * columns) {
    throw std::invalid_argument(
        "--method dp-f needs public clipping bounds: --bounds L,U for every column, or one L,U pair per column (" +
        std::to_string(columns) + " pairs: common, tested, response in order)");
  }
  core::DpFTestSettings s;
  s.rho = core::zcdp_rho_for_epsilon(*q.epsilon, q.delta);
  s.n = n;
  s.p0 = p0;
  s.q = p;
  for (std::size_t i = 0; i + 1 < q.bounds.size(); i += 2) s.bounds.push_back({q.bounds[i], q.bounds[i + 1]});
  return s;
}

std::size_t dp_f_null_simulations(const TestRequest& q) {
  const double a = *std::min_element(q.alpha.begin(), q.alpha.end());
  return static_cast<std::size_t>(std::ceil(10.0 / a - 1e-9));
}

Json test_of_tests(const Eigen::MatrixXd& common, const Eigen::Ref<const Eigen::MatrixXd>& tested,
                   const Eigen::Ref<const Eigen::VectorXd>& y, const Eigen::MatrixXd& analysed,
                   const std::vector<std::string>& analysed_names, const std::vector<std::string>& common_names,
                   const std::vector<std::string>& tested_names, const std::string& response, const TestRequest& q,
                   std::string_view data_bytes) {
  const auto n = static_cast<std::size_t>(y.size());
  const int p = static_cast<int>(tested.cols()), p0 = static_cast<int>(common.cols());
  Json tuning;
  const core::TestOfTestsRelease release(test_of_tests_settings(q, n, p, p0, &tuning));
  ReleaseReport report(!q.seed.has_value(),
                       "Test of Tests around the partial F-test (Kazan, Shi, Groce & Bray 2023; Tulap noise and the "
                       "DP-UMP binomial test of Awan & Slavkovic 2018)");
  common_settings(report, q, response, common_names, tested_names, n, p, p0);
  report.setting("num_subsets", release.settings().num_subsets);
  report.setting("subset_sizes", core::subset_sizes(n, release.settings().num_subsets));
  report.setting("alpha0", release.settings().alpha0);
  report.setting("tuning", tuning);
  report.setting("alpha", q.alpha);
  report.privacy(release.privacy());
  report.privacy_detail("epsilon_used", release.epsilon_used());
  report.privacy_detail("tulap_b", std::exp(-release.epsilon_used()));

  // The budget is checked now, before any work; the charge is made when the noise is drawn.
  ReleaseCharge charge(q.ledger, q.command, release.privacy(),
                       Json::array({"noisy_count", "and post-processing of it"}));
  ReleaseNoise r(q.seed, core::fnv1a_64("dpmu test --method test-of-tests"));
  const std::string bytes = ledger_bytes(q, data_bytes, analysed, analysed_names);
  const core::TestOfTestsOutput out =
      charge.draw_and_commit([&] { return release.release(common, tested, y, r.noise); }, bytes);
  if (const auto& c = charge.charge()) report.setting("ledger", to_json(*c));
  if (out.diagnostics) {
    report.diagnostic("count", out.diagnostics->count);
    report.diagnostic("subset_p_values", out.diagnostics->subset_p_values);
    report.diagnostic("failed_subsets", out.diagnostics->failed_subsets);
  }
  report.released("noisy_count", out.noisy_count);
  report.released("p_value", out.p_value);
  report.released("decisions", decisions(q.alpha, out.p_value));
  return report.finish();
}

Json dp_f_test(const Eigen::Ref<const Eigen::MatrixXd>& rows, const Eigen::MatrixXd& analysed,
               const std::vector<std::string>& analysed_names, const std::vector<std::string>& common_names,
               const std::vector<std::string>& tested_names, const std::string& response, const TestRequest& q,
               std::string_view data_bytes) {
  const auto n = static_cast<std::size_t>(rows.rows());
  const int p = static_cast<int>(tested_names.size()), p0 = static_cast<int>(common_names.size()) + 1;
  const core::DpFTestRelease release(dp_f_test_settings(q, n, p, p0));
  const std::size_t K = dp_f_null_simulations(q);
  const core::PrivacyGuarantee guarantee = release.privacy(q.delta);
  ReleaseReport report(!q.seed.has_value(),
                       "DP F-test from Gaussian-noised moments with a parametric-bootstrap null (Alabi & Vadhan 2022)");
  common_settings(report, q, response, common_names, tested_names, n, p, p0);
  Json bounds = Json::array();
  for (const auto& b : release.settings().bounds) bounds.push_back({b.lower, b.upper});
  report.setting("bounds", bounds);
  report.setting("null_simulations", K);
  report.setting("alpha", q.alpha);
  report.privacy(guarantee);
  report.privacy_detail("rho_zcdp", release.settings().rho);
  report.privacy_detail("conversion", "epsilon = rho + 2 sqrt(rho log(1/delta)) (Bun & Steinke 2016, Prop. 1.3)");
  report.privacy_detail("released_moments", release.released_moments());
  report.privacy_detail("moment_noise_sd", matrix_json(release.noise_sd()));

  ReleaseCharge charge(q.ledger, q.command, guarantee, Json::array({"moments", "and post-processing of them"}));
  ReleaseNoise r(q.seed, core::fnv1a_64("dpmu test --method dp-f"));
  const std::string bytes = ledger_bytes(q, data_bytes, analysed, analysed_names);
  const core::DpFTestOutput out = charge.draw_and_commit([&] { return release.release(rows, r.noise); }, bytes);
  if (const auto& c = charge.charge()) report.setting("ledger", to_json(*c));
  // The null simulation is post-processing of the released moments with public randomness.
  const std::uint64_t calibration_seed = q.seed ? *q.seed : r.secure_rng();
  core::RngStream null_rng(calibration_seed, core::fnv1a_64("dpmu test --method dp-f"), 0,
                           core::StreamPurpose::calibration);
  const std::vector<double> null = release.null_statistics(out.moments, K, null_rng);
  const double p_value = core::DpFTestRelease::monte_carlo_p_value(out.statistic, null);
  if (out.confidential_moments) {
    report.diagnostic("confidential_moments", matrix_json(*out.confidential_moments));
    report.diagnostic("confidential_f_statistic", release.f_statistic(*out.confidential_moments));
  }
  report.released("moments", matrix_json(out.moments));
  report.released("f_statistic", std::isfinite(out.statistic) ? Json(out.statistic) : Json(nullptr));
  report.released("f_statistic_status", std::isnan(out.statistic)   ? "noisy moment matrix not positive definite"
                                        : std::isinf(out.statistic) ? "noisy residual sum of squares <= 0"
                                                                    : "ok");
  report.released("p_value", p_value);
  report.released("decisions", decisions(q.alpha, p_value));
  return report.finish();
}

}  // namespace dpmu::api
