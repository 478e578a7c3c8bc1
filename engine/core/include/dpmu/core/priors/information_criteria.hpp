#pragma once
/// @file priors/information_criteria.hpp
/// The information criteria that take the place of a prior in paper Eq. (4):
///   log I10 = −(n/2) log(1 − R²) − (ρ/2) log n,  ρ = p (bic), 2p/log n (aic), 0 (lr).
/// Each unit gives its penalty (ρ/2) log n; they have no parameters.

#include <cmath>
#include <string_view>

#include "dpmu/core/priors/unit.hpp"

namespace dpmu::core::priors {

struct Bic {
  static constexpr PriorKind kind = PriorKind::bic;
  static constexpr std::string_view name = "bic";
  static constexpr Family family = Family::information_criterion;
  static void check(const Prior& /*prior*/) {}
  Bic(const Prior& /*prior*/, double /*n*/, int /*p*/, int /*p0*/) {}
  /// (p/2) log n.
  static double penalty(double n, int p) { return 0.5 * p * std::log(n); }
};

struct Aic {
  static constexpr PriorKind kind = PriorKind::aic;
  static constexpr std::string_view name = "aic";
  static constexpr Family family = Family::information_criterion;
  static void check(const Prior& /*prior*/) {}
  Aic(const Prior& /*prior*/, double /*n*/, int /*p*/, int /*p0*/) {}
  /// p.
  static double penalty(double /*n*/, int p) { return static_cast<double>(p); }
};

struct Lr {
  static constexpr PriorKind kind = PriorKind::lr;
  static constexpr std::string_view name = "lr";
  static constexpr Family family = Family::information_criterion;
  static void check(const Prior& /*prior*/) {}
  Lr(const Prior& /*prior*/, double /*n*/, int /*p*/, int /*p0*/) {}
  /// 0 (the likelihood ratio itself).
  static double penalty(double /*n*/, int /*p*/) { return 0.0; }
};

}  // namespace dpmu::core::priors
