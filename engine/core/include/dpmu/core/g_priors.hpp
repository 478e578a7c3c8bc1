#pragma once
/// @file g_priors.hpp
/// Identifiers of the priors on g (mixtures of g-priors, Liang et al. 2008) and of
/// the information criteria that play the same role in paper Eq. (4).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dpmu::core {

/// A prior on g (Bayes factors, paper Eq. 3) or an information criterion (paper Eq. 4).
enum class PriorKind {
  g_prior,       ///< Zellner's g-prior, fixed g (default g = n)
  zellner_siow,  ///< 1/g ~ Gamma(1/2, rate n/2), exact integral
  hyper_g,       ///< π(g) = (a-2)/2 (1+g)^{-a/2}, a > 2 (default 3)
  hyper_g_n,     ///< π(g) = (a-2)/(2n) (1+g/n)^{-a/2}, a > 2 (default 3)
  robust,        ///< Bayarri et al. (2012), a = 1/2, b = 1, ρ = 1/(p0 + p)
  bic,           ///< I10 with ρ = p
  aic,           ///< I10 with ρ = 2p/log n
  lr,            ///< likelihood ratio, ρ = 0
};

/// A prior with its parameters. `g` is used by g_prior only (unset = n, the unit-information
/// choice); `a` by hyper_g and hyper_g_n.
struct Prior {
  PriorKind kind = PriorKind::g_prior;
  std::optional<double> g;  ///< fixed g of the g-prior; unset means g = n (per subset: g_i = b_i)
  double a = 3.0;           ///< hyper-g / hyper-g/n parameter, a > 2
};

/// True for the priors on g (Bayes factors), false for bic/aic/lr (information criteria).
bool is_bayesian(PriorKind kind);

/// The command-line / config spelling: "g-prior", "zellner-siow", "hyper-g", "hyper-g-n",
/// "robust", "bic", "aic", "lr".
std::string_view to_string(PriorKind kind);

/// Inverse of to_string (also accepts '_' for '-').
/// @throws std::invalid_argument naming the accepted spellings.
PriorKind parse_prior_kind(std::string_view name);

/// All spellings accepted by parse_prior_kind, in declaration order.
std::vector<std::string> prior_kind_names();

/// Validate the parameters of a prior (g > 0 finite if set; a > 2 finite for hyper-g(-n)).
/// @throws std::domain_error with the offending parameter.
void check_prior(const Prior& prior);

/// log of the normalising constant c of the mixture prior density on g, π(g) = c·k(g) (the
/// kernels are written out in bayes_factor.cpp and model_space.cpp): Zellner–Siow
/// (n/2)^{1/2}/Γ(1/2); hyper-g (a−2)/2; hyper-g/n (a−2)/(2n); robust a0 [ρ(b0+n)]^{a0} with
/// a0 = 1/2, b0 = 1, ρ = 1/(p+p0) (Liang et al. 2008; Bayarri et al. 2012; paper Eq. 3).
/// 0 for the other kinds (no mixture). @param n rows; p tested, p0 common columns (intercept counted).
double log_mixture_prior_constant(const Prior& prior, double n, int p, int p0);

/// A lower limit in t = log g below which the mixture prior has no appreciable mass: 40 below the
/// log of its scale — hyper-g: log(2/(a−2)), hyper-g/n: log(2n/(a−2)) (the prior concentrates at
/// g ≈ 2/a, resp. 2n/a, for large a) — and +inf for the other kinds. The quadratures integrate from
/// min(−60, this), so a = 1e300 gives log B ≈ 0 (the limit a → ∞: g → 0, B → 1) instead of NaN.
double log_prior_mode_lower_limit(const Prior& prior, double n);

}  // namespace dpmu::core
