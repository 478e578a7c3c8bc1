#pragma once
/// @file priors.hpp
/// Every prior unit (priors/*.hpp) and the one dispatch from a PriorKind to its unit. Code that
/// depends on the prior calls visit_prior_kind / visit_prior and branches on the unit's type or
/// family with `if constexpr`, never on the enum, so a new prior is one unit, one enum value, one
/// entry in PriorUnits and one case in visit_prior_kind (the compiler flags a missed case:
/// -Werror=switch). Steps: docs/architecture.md "How to add a prior".

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "dpmu/core/checks.hpp"
#include "dpmu/core/g_priors.hpp"
#include "dpmu/core/priors/g_prior.hpp"
#include "dpmu/core/priors/hyper_g.hpp"
#include "dpmu/core/priors/information_criteria.hpp"
#include "dpmu/core/priors/robust.hpp"
#include "dpmu/core/priors/unit.hpp"
#include "dpmu/core/priors/zellner_siow.hpp"

namespace dpmu::core {

/// The prior units in the order of PriorKind (the order of prior_kind_names()).
using PriorUnits = std::tuple<priors::GPrior, priors::ZellnerSiow, priors::HyperG, priors::HyperGN, priors::Robust,
                              priors::Bic, priors::Aic, priors::Lr>;

/// f(std::type_identity<Unit>{}) for the unit of `kind`; every case returns the same type.
/// @throws std::invalid_argument for a value that is not a PriorKind (a cast from an integer).
template <class F>
constexpr decltype(auto) visit_prior_kind(PriorKind kind, F&& f) {
  switch (kind) {
    case PriorKind::g_prior:
      return f(std::type_identity<priors::GPrior>{});
    case PriorKind::zellner_siow:
      return f(std::type_identity<priors::ZellnerSiow>{});
    case PriorKind::hyper_g:
      return f(std::type_identity<priors::HyperG>{});
    case PriorKind::hyper_g_n:
      return f(std::type_identity<priors::HyperGN>{});
    case PriorKind::robust:
      return f(std::type_identity<priors::Robust>{});
    case PriorKind::bic:
      return f(std::type_identity<priors::Bic>{});
    case PriorKind::aic:
      return f(std::type_identity<priors::Aic>{});
    case PriorKind::lr:
      return f(std::type_identity<priors::Lr>{});
  }
  throw_invalid("visit_prior_kind", "PriorKind value " + std::to_string(static_cast<int>(kind)) + " is not a prior");
}

/// f(unit) with the unit of prior.kind built from the parameters of `prior` for n rows, p tested and
/// p0 common columns (intercept counted). The parameters are not checked here (check_prior).
template <class F>
decltype(auto) visit_prior(const Prior& prior, double n, int p, int p0, F&& f) {
  return visit_prior_kind(prior.kind, [&](auto unit) -> decltype(auto) {
    using Unit = typename decltype(unit)::type;
    return f(Unit(prior, n, p, p0));
  });
}

/// f(std::type_identity<Unit>{}) for every unit, in PriorKind order.
template <class F>
constexpr void for_each_prior_unit(F&& f) {
  [&]<class... Unit>(std::tuple<Unit...>*) { (f(std::type_identity<Unit>{}), ...); }(static_cast<PriorUnits*>(nullptr));
}

namespace priors {
/// True for a unit whose family is `family`.
template <class Unit>
inline constexpr bool is_mixture = Unit::family == Family::mixture;
template <class Unit>
inline constexpr bool is_information_criterion = Unit::family == Family::information_criterion;

// PriorUnits and visit_prior_kind agree: the i-th unit has the i-th kind and maps back to itself.
template <std::size_t... I>
constexpr bool units_match_kinds(std::index_sequence<I...>) {
  return ((static_cast<std::size_t>(std::tuple_element_t<I, PriorUnits>::kind) == I &&
           visit_prior_kind(std::tuple_element_t<I, PriorUnits>::kind,
                            [](auto unit) {
                              return std::is_same_v<typename decltype(unit)::type, std::tuple_element_t<I, PriorUnits>>;
                            })) &&
          ...);
}
static_assert(units_match_kinds(std::make_index_sequence<std::tuple_size_v<PriorUnits>>{}),
              "PriorUnits must list the prior units in PriorKind order, as visit_prior_kind maps them");
}  // namespace priors

}  // namespace dpmu::core
