#pragma once
/// @file dpmu_bindings.hpp
/// The entry points shared by the R package (bindings/r) and the Python package (bindings/python):
/// data already in memory (one column per predictor), options named as the CLI's, and the result
/// as the JSON object that `dpmu bma` / `dpmu test` print for the same data and options (same
/// fields, same numbers, same privacy rules: docs/privacy.md). Each language converts the JSON
/// into its own objects; nothing statistical happens in R or Python.

#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace dpmu::bindings {

using Json = nlohmann::ordered_json;

/// Options of bma() (the options of `dpmu bma` that a binding exposes).
struct BmaRequest {
  std::string prior = "zellner-siow";             ///< as --prior
  std::optional<double> g;                        ///< --g (g-prior; default n)
  double a = 3.0;                                 ///< --a (hyper-g, hyper-g-n)
  std::string model_prior = "beta-binomial:1,1";  ///< --model-prior (also "beta-binomial(1,1)")
  std::optional<double> epsilon;                  ///< unset: non-private (exact) model averaging
  std::optional<double> delta;                    ///< wishart only
  std::string mechanism = "laplace";              ///< laplace | wishart
  std::vector<double> bounds;                     ///< as --bounds: l,u or l1,u1,...,l(p+1),u(p+1) (response last)
  std::optional<std::uint64_t> seed;              ///< unset: a real release (secure noise)
  bool rescale = false;                           ///< --rescale
  int top_models = 10;                            ///< --top-models
  bool mcmc = false;                              ///< --mcmc (automatic for p > 24)
  std::vector<std::string> always_include;        ///< --always-include
};

/// Model averaging of y on the columns of x (paper §5; docs/bma.md): the JSON of
/// `dpmu bma --non-private` when request.epsilon is unset, else of the SSP release
/// `dpmu bma --epsilon ...` (with request.seed: the same noise as `--seed` gives the CLI).
/// @param x n×p predictors (column j named predictors[j]); @param y length n.
/// @throws std::invalid_argument / std::domain_error with the CLI's message for bad input.
Json bma(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
         const std::vector<std::string>& predictors, const std::string& response, const BmaRequest& request);

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
