#pragma once
/// @file dpmu_bindings.hpp
/// Conversions shared by the R package (bindings/r) and the Python package (bindings/python). The
/// packages call the release API (engine/api: api::bma, api::test, the ledger) exactly as the `dpmu`
/// command does; here are only the pieces that turn its results into what both packages return.
/// Nothing statistical happens here or in R or Python.

#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dpmu/api/bma.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/api/plan_bma.hpp"
#include "dpmu/api/test.hpp"
#include "dpmu/core/release.hpp"

namespace dpmu::bindings {

using Json = nlohmann::ordered_json;

/// Public bounds given as one flat list l1, u1, l2, u2, ... (R and Python): pairs.
/// @throws std::invalid_argument for an odd count or an empty list.
std::vector<core::ColumnBounds> bounds_from_pairs(const std::vector<double>& flat);

/// api::plan_bma with the options in its messages named as the packages' arguments ("--sigma: ..."
/// becomes "sigma: ...", "--replicates" "simulations", "--true-model-size" "true_model_size").
/// @throws std::invalid_argument / std::runtime_error as api::plan_bma, renamed.
Json plan_bma(const api::PlanBmaRequest& request);

/// The ledger charge of a result as JSON (null when the release was not charged).
Json ledger_json(const std::optional<api::LedgerCharge>& charge);

}  // namespace dpmu::bindings
