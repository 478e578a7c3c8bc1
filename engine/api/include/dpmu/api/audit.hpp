#pragma once
/// @file audit.hpp
/// The verdict of an empirical privacy audit from releases drawn on two neighbouring data sets
/// (core::audit_releases: a Clopper–Pearson lower bound on ε; Jagielski, Ullman & Oprea 2020). The
/// one implementation behind `dpmu audit` and the R and Python audit(), which draw the releases
/// through their own front ends (so a leak in a front end is audited, not only the core).

#include <Eigen/Dense>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dpmu::api {

/// What the audit tests.
struct AuditClaim {
  double epsilon = 0.0;           ///< the claimed ε (> 0; non-finite: no valid claim)
  double delta = 0.0;             ///< the claimed δ
  double confidence = 0.95;       ///< of the lower bound, in (0, 1)
  int candidate_events = 50;      ///< thresholds tried on the selection half
  std::string score = "laplace";  ///< laplace (continuous releases) | categorical (entry 0 is a category)
};

/// Audit N releases on D (`first`) against N on D' (`second`), each a vector of one length (N ≥ 20):
/// {"samples_per_data_set", "selection_samples", "evaluation_samples", "event",
/// "probability_on_data", "probability_on_neighbour", "probability_on_data_lower",
/// "probability_on_neighbour_upper", "epsilon_estimate" (null if infinite), "epsilon_lower_bound",
/// "confidence", "consistent_with_claim", "verdict"}. A lower bound above the claimed ε refutes the
/// claim; one below it is consistent with it (an audit cannot prove privacy).
/// @throws std::invalid_argument / std::domain_error for too few samples, unequal lengths, a bad claim.
nlohmann::ordered_json audit_samples(const std::vector<Eigen::VectorXd>& first,
                                     const std::vector<Eigen::VectorXd>& second, const AuditClaim& claim);

}  // namespace dpmu::api
