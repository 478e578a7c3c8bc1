#pragma once
/// @file dpmu_bindings.hpp
/// The entry points shared by the R package (bindings/r) and the Python package (bindings/python):
/// data already in memory (one column per predictor) and options named as the CLI's. Model averaging
/// is api::bma (dpmu/api/bma.hpp), the entry point the `dpmu bma` command uses; here are the pieces
/// of the CLI's report the packages need besides it, and the nested test, whose result is the JSON
/// object `dpmu test` prints for the same data and options (same fields, same numbers, same
/// privacy rules: docs/privacy.md). Nothing statistical happens in R or Python.

#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dpmu/api/bma.hpp"
#include "dpmu/core/release.hpp"

namespace dpmu::bindings {

using Json = nlohmann::ordered_json;

/// The privacy fields of a model-averaging fit as the CLI reports them (engine/cli/release_report.hpp):
/// {"private", "private_reason", "privacy"}; "privacy" is null for a non-private fit, and for a
/// seeded release its "sampler" says that simulation noise was used.
Json bma_privacy(const api::BmaFit& fit);

/// Public bounds given as one flat list l1, u1, l2, u2, ... (R and Python): pairs.
/// @throws std::invalid_argument for an odd count or an empty list.
std::vector<core::ColumnBounds> bounds_from_pairs(const std::vector<double>& flat);

/// Options of test() (the options of `dpmu test`).
struct TestRequest {
  std::string prior = "g-prior";
  std::optional<double> g;
  double a = 3.0;
  double prior_h0 = 0.5;
  std::optional<double> epsilon;  ///< unset: non-private test
  double delta = 0.0;
  std::optional<std::size_t> groups;
  std::vector<double> censor;
  std::vector<double> censor_probability;
  std::vector<double> alpha{0.05, 0.01};
  std::optional<std::uint64_t> seed;
  std::size_t simulations = 10000;
  std::string gaussian_calibration = "exact";
};

/// Test H0: y ~ 1 + common against H1: y ~ 1 + common + tested (paper §3–4): the JSON of
/// `dpmu test` for the same columns and options.
/// @param common n×k (k may be 0; the intercept is added), tested n×p (p ≥ 1), y length n.
/// @throws std::invalid_argument / std::domain_error with the CLI's message for bad input.
Json test(const Eigen::Ref<const Eigen::MatrixXd>& common, const Eigen::Ref<const Eigen::MatrixXd>& tested,
          const Eigen::Ref<const Eigen::VectorXd>& y, const std::vector<std::string>& common_names,
          const std::vector<std::string>& tested_names, const std::string& response, const TestRequest& request);

}  // namespace dpmu::bindings
