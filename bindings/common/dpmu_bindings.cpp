// The shared conversions of the R and Python packages: the ledger charge and public bounds given
// as a flat list.
#include "dpmu_bindings.hpp"

#include <cctype>
#include <stdexcept>
#include <string>

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

namespace {
/// "--true-model-size" -> "true_model_size", "--replicates" -> "simulations" in a message.
std::string argument_names(const std::string& message) {
  std::string out;
  for (std::size_t i = 0; i < message.size();) {
    const bool option = message.compare(i, 2, "--") == 0 && i + 2 < message.size() &&
                        std::islower(static_cast<unsigned char>(message[i + 2])) != 0 &&
                        (i == 0 || std::isalnum(static_cast<unsigned char>(message[i - 1])) == 0);
    if (!option) {
      out += message[i++];
      continue;
    }
    std::size_t j = i + 2;
    std::string name;
    while (j < message.size() && (std::islower(static_cast<unsigned char>(message[j])) != 0 || message[j] == '-')) {
      name += message[j] == '-' ? '_' : message[j];
      ++j;
    }
    out += name == "replicates" ? "simulations" : name;
    i = j;
  }
  return out;
}
}  // namespace

Json plan_bma(const api::PlanBmaRequest& request) {
  try {
    return api::plan_bma(request);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(argument_names(e.what()));
  } catch (const std::domain_error& e) {
    throw std::invalid_argument(argument_names(e.what()));
  }
}

Json ledger_json(const std::optional<api::LedgerCharge>& charge) {
  return charge ? Json(api::to_json(*charge)) : Json(nullptr);
}

}  // namespace dpmu::bindings
