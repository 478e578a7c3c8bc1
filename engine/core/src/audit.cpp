#include "dpmu/core/audit.hpp"

#include <algorithm>
#include <boost/math/distributions/beta.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "dpmu/core/checks.hpp"

namespace dpmu::core {

double clopper_pearson_lower(std::size_t k, std::size_t n, double alpha) {
  constexpr const char* fn = "clopper_pearson_lower";
  if (n == 0) throw_domain(fn, "n", 0.0, ">= 1");
  if (k > n) throw_domain(fn, "k", static_cast<double>(k), "<= n");
  check_open_interval(fn, "alpha", alpha, 0.0, 1.0);
  if (k == 0) return 0.0;
  const boost::math::beta_distribution<double> b(static_cast<double>(k), static_cast<double>(n - k + 1));
  return boost::math::quantile(b, alpha);
}

double clopper_pearson_upper(std::size_t k, std::size_t n, double alpha) {
  constexpr const char* fn = "clopper_pearson_upper";
  if (n == 0) throw_domain(fn, "n", 0.0, ">= 1");
  if (k > n) throw_domain(fn, "k", static_cast<double>(k), "<= n");
  check_open_interval(fn, "alpha", alpha, 0.0, 1.0);
  if (k == n) return 1.0;
  const boost::math::beta_distribution<double> b(static_cast<double>(k + 1), static_cast<double>(n - k));
  return boost::math::quantile(b, 1.0 - alpha);
}

namespace {

double median(std::vector<double> v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

/// An event on scalar scores: {s > t} (upper) or {s ≤ t}, compared as P_D(E) vs P_D'(E) or reversed.
struct Event {
  double threshold = 0.0;
  bool upper = true;
  bool reversed = false;  // true: bound log P_D'(E)/P_D(E)
};

std::size_t count_in(const std::vector<double>& s, const Event& e) {
  std::size_t c = 0;
  for (double v : s) c += (e.upper ? v > e.threshold : v <= e.threshold) ? 1 : 0;
  return c;
}

double epsilon_bound(std::size_t k1, std::size_t k2, std::size_t n, double alpha_each, double delta) {
  const double p = clopper_pearson_lower(k1, n, alpha_each) - delta;
  const double q = clopper_pearson_upper(k2, n, alpha_each);
  if (!(p > 0.0)) return 0.0;
  return std::max(0.0, std::log(p / q));
}

}  // namespace

AuditResult audit_releases(const std::vector<Eigen::VectorXd>& first, const std::vector<Eigen::VectorXd>& second,
                           const AuditOptions& o) {
  constexpr const char* fn = "audit_releases";
  check_open_interval(fn, "confidence", o.confidence, 0.0, 1.0);
  if (o.candidate_events < 1) throw_domain(fn, "candidate_events", o.candidate_events, ">= 1");
  check_half_open_interval(fn, "delta", o.delta, 0.0, 1.0);
  if (first.size() != second.size()) throw_invalid(fn, "the two sides have different numbers of releases");
  if (first.size() < 20) throw_invalid(fn, "need at least 20 releases per data set");
  const Eigen::Index dim = first.front().size();
  for (const auto* side : {&first, &second}) {
    for (const auto& v : *side) {
      if (v.size() != dim) throw_invalid(fn, "releases of different lengths");
    }
  }
  const std::size_t half = first.size() / 2;
  const std::size_t n_eval = first.size() - half;

  // Score, fitted on the selection halves only.
  std::vector<double> centre_first(static_cast<std::size_t>(dim)), centre_second(static_cast<std::size_t>(dim));
  std::map<double, std::pair<double, double>> category_counts;
  if (o.score == AuditScore::laplace_likelihood_ratio) {
    for (Eigen::Index u = 0; u < dim; ++u) {
      std::vector<double> a, b;
      for (std::size_t i = 0; i < half; ++i) {
        a.push_back(first[i](u));
        b.push_back(second[i](u));
      }
      centre_first[static_cast<std::size_t>(u)] = median(a);
      centre_second[static_cast<std::size_t>(u)] = median(b);
    }
  } else {
    for (std::size_t i = 0; i < half; ++i) {
      category_counts[first[i](0)].first += 1.0;
      category_counts[second[i](0)].second += 1.0;
    }
  }
  const auto score = [&](const Eigen::VectorXd& v) {
    if (o.score == AuditScore::categorical) {
      const auto it = category_counts.find(v(0));
      const auto c = it == category_counts.end() ? std::pair<double, double>{0.0, 0.0} : it->second;
      return std::log((c.first + 1.0) / (c.second + 1.0));
    }
    double s = 0.0;
    for (Eigen::Index u = 0; u < dim; ++u) {
      s += std::abs(v(u) - centre_second[static_cast<std::size_t>(u)]) -
           std::abs(v(u) - centre_first[static_cast<std::size_t>(u)]);
    }
    return s;
  };
  std::vector<double> sel_a, sel_b, eval_a, eval_b;
  for (std::size_t i = 0; i < first.size(); ++i) {
    (i < half ? sel_a : eval_a).push_back(score(first[i]));
    (i < half ? sel_b : eval_b).push_back(score(second[i]));
  }

  // Event: the best candidate on the selection half (the same bound, computed there).
  std::vector<double> pooled = sel_a;
  pooled.insert(pooled.end(), sel_b.begin(), sel_b.end());
  std::sort(pooled.begin(), pooled.end());
  pooled.erase(std::unique(pooled.begin(), pooled.end()), pooled.end());
  const double alpha_each = (1.0 - o.confidence) / 2.0;
  Event best;
  double best_bound = -1.0;
  const int k = std::min<int>(o.candidate_events, static_cast<int>(pooled.size()));
  for (int c = 0; c < k; ++c) {
    const std::size_t idx = k == 1
                                ? pooled.size() / 2
                                : static_cast<std::size_t>(c) * (pooled.size() - 1) / static_cast<std::size_t>(k - 1);
    for (bool upper : {true, false}) {
      for (bool reversed : {false, true}) {
        const Event e{pooled[idx], upper, reversed};
        const std::size_t ka = count_in(sel_a, e), kb = count_in(sel_b, e);
        const double b = reversed ? epsilon_bound(kb, ka, half, alpha_each, o.delta)
                                  : epsilon_bound(ka, kb, half, alpha_each, o.delta);
        if (b > best_bound) {
          best_bound = b;
          best = e;
        }
      }
    }
  }

  AuditResult r;
  r.confidence = o.confidence;
  r.selection_samples = half;
  r.evaluation_samples = n_eval;
  std::size_t k1 = count_in(eval_a, best), k2 = count_in(eval_b, best);
  if (best.reversed) std::swap(k1, k2);
  r.probability_first = static_cast<double>(k1) / static_cast<double>(n_eval);
  r.probability_second = static_cast<double>(k2) / static_cast<double>(n_eval);
  r.probability_first_lower = clopper_pearson_lower(k1, n_eval, alpha_each);
  r.probability_second_upper = clopper_pearson_upper(k2, n_eval, alpha_each);
  r.epsilon_lower_bound = epsilon_bound(k1, k2, n_eval, alpha_each, o.delta);
  const double p = r.probability_first - o.delta;
  r.epsilon_estimate = p <= 0.0 ? -std::numeric_limits<double>::infinity() : std::log(p / r.probability_second);
  r.event = std::string("score ") + (best.upper ? "> " : "<= ") + format_value(best.threshold) +
            (best.reversed ? ", more likely on the neighbour" : ", more likely on the data set");
  return r;
}

}  // namespace dpmu::core
