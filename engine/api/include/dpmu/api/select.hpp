#pragma once
/// @file select.hpp
/// Differentially private model selection of Lei, Charest, Slavković, Smith & Fienberg (2018):
/// all 2^d submodels (no intercept), ℓ1-constrained least squares, report-noisy-min (Algorithm 1,
/// ε-DP) or an Algorithm-2-like placeholder ((2ε, δ)-DP); docs/lcssf.md, docs/methods.md §6. The one
/// composition of core calls that the `dpmu select` command and the R and Python packages make;
/// its result is the JSON object `dpmu select` prints (fields typed by api::ReleaseReport).

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dpmu/api/ledger.hpp"
#include "dpmu/core/lcssf.hpp"
#include "dpmu/core/release.hpp"

namespace dpmu::api {

/// Settings of select(). Spellings as `dpmu select --help`; [U] marks reconstructed constants.
struct SelectRequest {
  int algorithm = 1;            ///< 1 (ε-DP) or 2 ((2ε, δ)-DP placeholder)
  double epsilon = 0.0;         ///< > 0
  std::optional<double> delta;  ///< Algorithm 2 only, in (0, 1)
  double radius = 0.0;          ///< R > 0: ℓ1 bound on the coefficients
  double penalty = 0.0;         ///< φ ≥ 0 per included predictor
  std::string data_bound;       ///< r > 0 bounding |Y| (and |X| unless rpR_2), public; "auto": data-dependent
  std::string lcssf_delta = "r2_1pR2";
  double objective_scale = 0.5;  ///< c in L* = c RSS + φ|M| [U]
  double noise_factor = 2.0;     ///< κ: Laplace scale κ c Δ / ε [U]
  double variance_floor = 0.01;  ///< Algorithm 2's public floor of the released variance
  std::string alg2_selection = "exponential_mechanism";
  bool standardize = false;           ///< centre and scale by the confidential means and SDs (not private)
  std::optional<std::uint64_t> seed;  ///< seeded simulation noise ("private": false)
  LedgerOptions ledger;               ///< where a real release is charged
  std::string command = "dpmu select";
};

/// Checks of a request that need no data, for d predictors. @throws std::invalid_argument /
/// std::domain_error naming the option.
void check_select_request(const SelectRequest& request, std::size_t d);

/// The checked settings of a selection on x (n×d) and y: the release's settings, the LCSSF
/// constants (data_bound resolved; "auto" from the data), the data after --standardize, and the
/// labels the output carries. @throws as check_select_request, and for overflowing magnitudes.
struct SelectPlan {
  core::LcssfSettings lcssf;
  core::LcssfReleaseSettings release;
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  std::vector<std::string> labels;
};
SelectPlan select_plan(const SelectRequest& request, const Eigen::Ref<const Eigen::MatrixXd>& x,
                       const Eigen::Ref<const Eigen::VectorXd>& y);

/// The release of a plan, checked for magnitudes that overflow a double (for `dpmu audit select`).
std::shared_ptr<const core::LcssfRelease> make_select_release(const SelectPlan& plan);

/// The selection: the JSON of `dpmu select`. x is n×d (d ≤ 20) with names `predictors`, y length n.
/// With a public data_bound a non-finite value is mapped by a public rule, never refused (+Inf to the
/// upper and -Inf to the lower bound of its column's domain, NaN to 0); with "auto" it is an error. `data_bytes`: what
/// the ledger fingerprints (empty: the analysed columns).
/// @throws std::invalid_argument / std::domain_error naming the input; runtime::BudgetExceeded.
nlohmann::ordered_json select(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                              const std::vector<std::string>& predictors, const std::string& response,
                              const SelectRequest& request, std::string_view data_bytes = {});

}  // namespace dpmu::api
