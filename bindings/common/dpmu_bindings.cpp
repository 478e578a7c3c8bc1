// The shared conversions of the R and Python packages: the ledger charge and public bounds given
// as a flat list.
#include "dpmu_bindings.hpp"

#include <stdexcept>

namespace dpmu::bindings {

std::vector<core::ColumnBounds> bounds_from_pairs(const std::vector<double>& flat) {
  if (flat.empty() || flat.size() % 2 != 0) {
    throw std::invalid_argument(
        "bounds: give l, u (public bounds on the raw values of every column) or l1, u1, ..., "
        "l(p+1), u(p+1) (predictors in order, response last); " +
        std::to_string(flat.size()) + " numbers given");
  }
  std::vector<core::ColumnBounds> out;
  for (std::size_t j = 0; j < flat.size(); j += 2) out.push_back({flat[j], flat[j + 1]});
  return out;
}

Json ledger_json(const std::optional<api::LedgerCharge>& charge) {
  return charge ? Json(api::to_json(*charge)) : Json(nullptr);
}

}  // namespace dpmu::bindings
