#pragma once
/// @file g_priors.hpp
/// Identifiers of the priors on g (mixtures of g-priors, Liang et al. 2008) and of
/// the information criteria that play the same role in paper Eq. (4). Each kind's formulas,
/// parameters and validation live in its unit (priors/*.hpp; dispatch in priors.hpp).

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

/// A prior's spelling as the parsers compare it: lower case, '_' for '-', and the spellings of R
/// package BAS (`bas.lm(prior = )`) mapped to dpmu's: "JZS" → "zellner-siow", "ZS-null" →
/// "zellner-siow-laplace" ("BIC", "AIC", "g-prior", "hyper-g", "hyper-g-n" are dpmu's names in
/// other case). docs/decisions.md "One prior vocabulary".
std::string canonical_prior_name(std::string_view name);

/// Why a spelling of BAS that dpmu does not implement is refused ("" for any other name): BAS's
/// "hyper-g-laplace", "ZS-full", "EB-local" and "EB-global".
std::string unsupported_bas_prior(std::string_view name);

/// Inverse of to_string; also accepts '_' for '-', any case and BAS's spellings
/// (canonical_prior_name).
/// @throws std::invalid_argument naming the accepted spellings.
PriorKind parse_prior_kind(std::string_view name);

/// All spellings accepted by parse_prior_kind, in declaration order.
std::vector<std::string> prior_kind_names();

/// Validate the parameters of a prior: those its unit uses (a > 2 finite for hyper-g(-n)), and
/// g > 0 finite whenever it is set (the g-prior's check; the command line takes --g with any prior).
/// @throws std::domain_error with the offending parameter.
void check_prior(const Prior& prior);

}  // namespace dpmu::core
