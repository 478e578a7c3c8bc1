// api::audit_samples(): the lower bound on ε from releases on neighbouring data sets, and its verdict.
#include "dpmu/api/audit.hpp"

#include <cmath>
#include <stdexcept>

#include "dpmu/core/audit.hpp"

namespace dpmu::api {

nlohmann::ordered_json audit_samples(const std::vector<Eigen::VectorXd>& first,
                                     const std::vector<Eigen::VectorXd>& second, const AuditClaim& claim) {
  core::AuditOptions ao;
  ao.confidence = claim.confidence;
  ao.candidate_events = claim.candidate_events;
  ao.delta = claim.delta;
  if (claim.score == "laplace") {
    ao.score = core::AuditScore::laplace_likelihood_ratio;
  } else if (claim.score == "categorical") {
    ao.score = core::AuditScore::categorical;
  } else {
    throw std::invalid_argument("audit score '" + claim.score + "': expected laplace or categorical");
  }
  const core::AuditResult r = core::audit_releases(first, second, ao);
  nlohmann::ordered_json out;
  out["samples_per_data_set"] = first.size();
  out["selection_samples"] = r.selection_samples;
  out["evaluation_samples"] = r.evaluation_samples;
  out["event"] = r.event;
  out["probability_on_data"] = r.probability_first;
  out["probability_on_neighbour"] = r.probability_second;
  out["probability_on_data_lower"] = r.probability_first_lower;
  out["probability_on_neighbour_upper"] = r.probability_second_upper;
  out["epsilon_estimate"] =
      std::isfinite(r.epsilon_estimate) ? nlohmann::ordered_json(r.epsilon_estimate) : nlohmann::ordered_json(nullptr);
  out["epsilon_lower_bound"] = r.epsilon_lower_bound;
  out["confidence"] = r.confidence;
  const bool consistent = !(r.epsilon_lower_bound > claim.epsilon);
  out["consistent_with_claim"] = consistent;
  out["verdict"] = consistent ? "consistent with the claimed epsilon (an audit cannot prove privacy)"
                              : "the claimed epsilon is refuted: the lower bound exceeds it";
  return out;
}

}  // namespace dpmu::api
