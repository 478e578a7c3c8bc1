// Convergence diagnostics of Markov chains (mcmc_diagnostics.hpp; Vehtari et al. 2021).

#include "dpmu/core/mcmc_diagnostics.hpp"

#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "dpmu/core/checks.hpp"

namespace dpmu::core {

namespace {

bool is_constant(const Eigen::Ref<const Eigen::MatrixXd>& x) { return x.maxCoeff() == x.minCoeff(); }

}  // namespace

Eigen::MatrixXd split_chains(const Eigen::Ref<const Eigen::MatrixXd>& chains) {
  const Eigen::Index n = chains.rows() / 2;
  const Eigen::Index m = chains.cols();
  Eigen::MatrixXd out(n, 2 * m);
  for (Eigen::Index c = 0; c < m; ++c) {
    out.col(2 * c) = chains.col(c).head(n);
    out.col(2 * c + 1) = chains.col(c).tail(n);
  }
  return out;
}

Eigen::MatrixXd rank_normalise(const Eigen::Ref<const Eigen::MatrixXd>& draws) {
  const Eigen::Index s = draws.size();
  std::vector<Eigen::Index> order(static_cast<std::size_t>(s));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  const Eigen::MatrixXd plain = draws;  // contiguous copy (a Ref may have an outer stride)
  const double* v = plain.data();
  std::stable_sort(order.begin(), order.end(), [v](Eigen::Index a, Eigen::Index b) { return v[a] < v[b]; });
  Eigen::MatrixXd z(draws.rows(), draws.cols());
  double* zp = z.data();
  std::size_t i = 0;
  while (i < order.size()) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = 0.5 * (static_cast<double>(i) + static_cast<double>(j)) + 1.0;  // average rank, 1-based
    const double u = (rank - 0.375) / (static_cast<double>(s) + 0.25);
    const double score = -1.4142135623730951 * boost::math::erfc_inv(2.0 * u);
    for (std::size_t k = i; k <= j; ++k) zp[order[k]] = score;
    i = j + 1;
  }
  return z;
}

double potential_scale_reduction(const Eigen::Ref<const Eigen::MatrixXd>& chains) {
  const auto n = static_cast<double>(chains.rows());
  const Eigen::Index m = chains.cols();
  if (is_constant(chains)) return 1.0;
  const Eigen::VectorXd means = chains.colwise().mean().transpose();
  double w = 0.0;
  for (Eigen::Index c = 0; c < m; ++c) w += (chains.col(c).array() - means(c)).square().sum() / (n - 1.0);
  w /= static_cast<double>(m);
  const double b = m > 1 ? n * (means.array() - means.mean()).square().sum() / static_cast<double>(m - 1) : 0.0;
  if (w <= 0.0) return std::numeric_limits<double>::infinity();
  const double var_plus = (n - 1.0) / n * w + b / n;
  return std::sqrt(var_plus / w);
}

double effective_sample_size(const Eigen::Ref<const Eigen::MatrixXd>& chains) {
  const Eigen::Index n = chains.rows();
  const Eigen::Index m = chains.cols();
  const double total = static_cast<double>(n * m);
  if (is_constant(chains)) return total;
  const Eigen::MatrixXd centred = chains.rowwise() - chains.colwise().mean();
  const auto acov = [&](Eigen::Index c, Eigen::Index t) {
    return centred.col(c).head(n - t).dot(centred.col(c).tail(n - t)) / static_cast<double>(n);
  };
  const auto mean_acov = [&](Eigen::Index t) {
    double s = 0.0;
    for (Eigen::Index c = 0; c < m; ++c) s += acov(c, t);
    return s / static_cast<double>(m);
  };
  const double dn = static_cast<double>(n);
  const double mean_var = mean_acov(0) * dn / (dn - 1.0);
  double var_plus = mean_var * (dn - 1.0) / dn;
  if (m > 1) {
    const Eigen::VectorXd means = chains.colwise().mean().transpose();
    var_plus += (means.array() - means.mean()).square().sum() / static_cast<double>(m - 1);
  }
  if (!(var_plus > 0.0)) return total;
  // Stan's estimator (stan/analyze/mcmc/compute_effective_sample_size.hpp), written from its definition.
  std::vector<double> rho(static_cast<std::size_t>(n + 2), 0.0);
  const auto rho_at = [&](Eigen::Index t) { return 1.0 - (mean_var - mean_acov(t)) / var_plus; };
  const auto at = [&](Eigen::Index t) -> double& { return rho[static_cast<std::size_t>(t)]; };
  at(0) = 1.0;
  double even = 1.0;
  double odd = rho_at(1);
  at(1) = odd;
  Eigen::Index t = 1;
  while (t < n - 5 && even + odd > 0.0) {
    even = rho_at(t + 1);
    odd = rho_at(t + 2);
    if (even + odd >= 0.0) {
      at(t + 1) = even;
      at(t + 2) = odd;
    }
    t += 2;
  }
  const Eigen::Index max_t = t;
  if (even > 0.0) at(max_t + 1) = even;
  // Geyer's initial monotone sequence on the pair sums.
  for (Eigen::Index k = 1; k <= max_t - 2; k += 2) {
    if (at(k + 1) + at(k + 2) > at(k - 1) + at(k)) {
      at(k + 1) = (at(k - 1) + at(k)) / 2.0;
      at(k + 2) = at(k + 1);
    }
  }
  double tau = -1.0 + at(max_t + 1);
  for (Eigen::Index k = 0; k < max_t; ++k) tau += 2.0 * at(k);
  tau = std::max(tau, 1.0 / std::log10(total));
  return std::min(total / tau, total * std::log10(total));
}

ChainSummary summarise_chains(const Eigen::Ref<const Eigen::MatrixXd>& chains) {
  constexpr const char* fn = "summarise_chains";
  if (chains.rows() < 4 || chains.cols() < 1) throw_invalid(fn, "need at least one chain of at least 4 draws");
  check_all_finite(fn, "draws", chains);
  ChainSummary s;
  const double total = static_cast<double>(chains.size());
  s.mean = chains.mean();
  s.sd = std::sqrt((chains.array() - s.mean).square().sum() / (total - 1.0));
  const Eigen::MatrixXd split = split_chains(chains);
  const Eigen::MatrixXd z = rank_normalise(split);
  Eigen::MatrixXd folded = split;
  {
    std::vector<double> v(split.data(), split.data() + split.size());
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    double med = v[v.size() / 2];
    if (v.size() % 2 == 0) {
      const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2));
      med = 0.5 * (med + lower);
    }
    folded = (split.array() - med).abs().matrix();
  }
  const double rhat_bulk = potential_scale_reduction(z);
  const double rhat_folded = potential_scale_reduction(rank_normalise(folded));
  // Chains that are constant at different values (e.g. an inclusion probability stuck at 0 in one
  // chain and 1 in another) have infinite R̂; the rank-normalised scores keep that (constant per chain).
  s.rhat = std::max(rhat_bulk, rhat_folded);
  if (is_constant(split)) s.rhat = 1.0;
  s.ess_bulk = effective_sample_size(z);
  s.ess_mean = effective_sample_size(split);
  s.mc_se = s.sd / std::sqrt(s.ess_mean);
  return s;
}

}  // namespace dpmu::core
