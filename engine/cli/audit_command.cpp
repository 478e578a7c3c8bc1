// `dpmu audit`: empirical privacy auditing of the release commands (see audit_command.hpp).
#include "audit_command.hpp"

#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "commands.hpp"
#include "dpmu/api/audit.hpp"
#include "dpmu/api/release_report.hpp"
#include "dpmu/core/checks.hpp"
#include "dpmu/core/random.hpp"
#include "dpmu/runtime/memory.hpp"

namespace dpmu::cli {

namespace {

using json = nlohmann::ordered_json;

/// A candidate pair of neighbouring data sets: `base` (the data, or a worst case built from the
/// bounds) and `base` with row `row` replaced by `values`.
struct Neighbour {
  std::shared_ptr<const Eigen::MatrixXd> base;
  Eigen::Index row = 0;
  Eigen::RowVectorXd values;
  std::string description;
  Eigen::MatrixXd neighbour() const {
    Eigen::MatrixXd m = *base;
    m.row(row) = values;
    return m;
  }
};

std::vector<Neighbour> candidate_neighbours(const AuditTarget& t) {
  const Eigen::Index d = t.data.cols();
  Eigen::RowVectorXd lo(d), hi(d), width(d);
  for (Eigen::Index j = 0; j < d; ++j) {
    lo(j) = t.bounds[static_cast<std::size_t>(j)].lower;
    hi(j) = t.bounds[static_cast<std::size_t>(j)].upper;
    width(j) = std::max(hi(j) - lo(j), 1e-300);
  }
  // Rows to replace: the first row, and the rows nearest to and farthest from the column means
  // (in units of the widths).
  const Eigen::RowVectorXd mean = t.data.colwise().mean();
  Eigen::Index near = 0, far = 0;
  double dn = std::numeric_limits<double>::infinity(), df = -1.0;
  for (Eigen::Index i = 0; i < t.data.rows(); ++i) {
    const double dist = ((t.data.row(i) - mean).array() / width.array()).abs().sum();
    if (dist < dn) dn = dist, near = i;
    if (dist > df) df = dist, far = i;
  }
  std::vector<Neighbour> out;
  const auto data = std::make_shared<const Eigen::MatrixXd>(t.data);
  Eigen::RowVectorXd mixed = hi, mixed2 = lo;
  mixed(d - 1) = lo(d - 1);
  mixed2(d - 1) = hi(d - 1);
  const std::vector<std::pair<std::string, Eigen::RowVectorXd>> rows{
      {"upper corner of the bounds", hi},
      {"lower corner of the bounds", lo},
      {"predictors at the upper bounds, response at the lower bound", mixed},
      {"predictors at the lower bounds, response at the upper bound", mixed2},
      {"outlier 1000 widths above the upper bounds", hi + 1000.0 * width},
      {"outlier 1000 widths below the lower bounds (response above)",
       [&] {
         Eigen::RowVectorXd v = lo - 1000.0 * width;
         v(d - 1) = hi(d - 1) + 1000.0 * width(d - 1);
         return v;
       }()},
  };
  for (Eigen::Index r : {Eigen::Index{0}, near, far}) {
    for (const auto& [what, v] : rows) {
      out.push_back({data, r, v, "the data, row " + std::to_string(r + 1) + " replaced by a row at the " + what});
    }
  }
  // Worst cases built from the bounds alone: every row at one corner, one row moved to the other
  // (the case that attains the SSP sensitivity bound).
  const auto at_lower = std::make_shared<const Eigen::MatrixXd>(lo.replicate(t.data.rows(), 1));
  const auto at_upper = std::make_shared<const Eigen::MatrixXd>(hi.replicate(t.data.rows(), 1));
  out.push_back({at_lower, 0, hi, "every row at the lower corner of the bounds; one row moved to the upper corner"});
  out.push_back({at_upper, 0, lo, "every row at the upper corner of the bounds; one row moved to the lower corner"});
  return out;
}

std::vector<Eigen::VectorXd> draw(const AuditTarget& t, const Eigen::MatrixXd& rows, std::uint64_t seed,
                                  std::uint64_t key, std::size_t count) {
  std::vector<Eigen::VectorXd> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    // The release's secure path (grids, exact discrete samplers, Algorithm 2's discrete variance),
    // fed by a seeded Philox stream instead of the kernel CSPRNG so the audit is reproducible.
    core::RngStream stream(seed, key, i, core::StreamPurpose::noise);
    core::NoiseSource noise = core::NoiseSource::secure([&stream] { return stream(); });
    out.push_back(t.release(rows, noise));
  }
  return out;
}

}  // namespace

void add_audit_options(CLI::App* cmd, AuditCliOptions& o) {
  const auto* g = "Audit";
  cmd->add_option("--audit-samples", o.samples, "Releases drawn on each of the two neighbouring data sets")
      ->capture_default_str()
      ->group(g)
      ->check(unsigned_integer());
  cmd->add_option("--audit-seed", o.seed, "Seed of the audit's simulation noise")
      ->capture_default_str()
      ->group(g)
      ->check(unsigned_integer());
  cmd->add_option("--audit-events", o.events, "Candidate events (thresholds) tried on the selection half")
      ->capture_default_str()
      ->group(g)
      ->check(unsigned_integer());
  cmd->add_option("--audit-confidence", o.confidence, "Confidence of the lower bound on epsilon")
      ->capture_default_str()
      ->group(g);
  cmd->add_option("--audit-pilot", o.pilot, "Releases per candidate neighbour when choosing the neighbour")
      ->capture_default_str()
      ->group(g)
      ->check(unsigned_integer());
}

void run_audit(const AuditTarget& t, const AuditCliOptions& o) {
  constexpr const char* fn = "dpmu audit";
  if (o.samples < 40) core::throw_domain(fn, "--audit-samples", static_cast<double>(o.samples), ">= 40");
  if (o.pilot < 2) core::throw_domain(fn, "--audit-pilot", static_cast<double>(o.pilot), ">= 2");
  // Every release drawn is kept (two sets of --audit-samples, one pilot set per candidate):
  // counts beyond kMaxAuditSamples are refused here, naming the option, instead of ending in
  // "out of memory" (or running for years); the memory of what is below is checked before drawing.
  for (const auto& [name, count] : {std::pair<const char*, std::size_t>{"--audit-samples", o.samples},
                                    std::pair<const char*, std::size_t>{"--audit-pilot", o.pilot}}) {
    if (count > kMaxAuditSamples) {
      throw std::invalid_argument(std::string(name) + ": " + std::to_string(count) +
                                  " is beyond the limit of 100000000 (10^8) releases per data set (the default "
                                  "of --audit-samples is 2000)");
    }
  }
  if (o.events < 1) core::throw_domain(fn, "--audit-events", o.events, ">= 1");
  core::check_open_interval(fn, "--audit-confidence", o.confidence, 0.0, 1.0);

  // The memory of the releases kept, before any is drawn: one release gives their length; a
  // release is a vector (a heap block and its header). The pilot keeps up to 4 sets of
  // --audit-pilot at once, the audit 2 sets of --audit-samples.
  const auto one = draw(t, t.data, o.seed, core::fnv1a_64("audit/size"), 1);
  const double release_bytes = 8.0 * static_cast<double>(one.front().size()) + 48.0;
  const std::string length = " (releases of " + std::to_string(one.front().size()) + " numbers)";
  runtime::check_fits_in_memory(4.0 * static_cast<double>(o.pilot) * release_bytes,
                                "--audit-pilot " + std::to_string(o.pilot) + length,
                                "use a smaller --audit-pilot (the default is 40)", 1.5);
  runtime::check_fits_in_memory(2.0 * static_cast<double>(o.samples) * release_bytes,
                                "--audit-samples " + std::to_string(o.samples) + length,
                                "use fewer --audit-samples (the default is 2000)", 1.5);

  // 1. The neighbour: the candidate whose releases move most under common random numbers
  //    (the same noise stream on both data sets, so the difference is the data's effect).
  const auto candidates = candidate_neighbours(t);
  const std::uint64_t pilot_key = core::fnv1a_64("audit/pilot");
  std::size_t best = 0;
  double best_shift = -1.0;
  std::map<const Eigen::MatrixXd*, std::vector<Eigen::VectorXd>> base_draws;  // one pilot per base data set
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    const Eigen::MatrixXd* data = candidates[c].base.get();
    auto it = base_draws.find(data);
    if (it == base_draws.end()) it = base_draws.emplace(data, draw(t, *data, o.seed, pilot_key, o.pilot)).first;
    const auto& base = it->second;
    const auto moved = draw(t, candidates[c].neighbour(), o.seed, pilot_key, o.pilot);
    double shift = 0.0;
    for (std::size_t i = 0; i < o.pilot; ++i) {
      shift += t.score == core::AuditScore::categorical ? (moved[i](0) != base[i](0) ? 1.0 : 0.0)
                                                        : (moved[i] - base[i]).cwiseAbs().sum();
    }
    if (shift > best_shift) best_shift = shift, best = c;
  }
  // 2. Independent releases on both data sets, then the bound.
  const auto first = draw(t, *candidates[best].base, o.seed, core::fnv1a_64("audit/first"), o.samples);
  const auto second = draw(t, candidates[best].neighbour(), o.seed, core::fnv1a_64("audit/second"), o.samples);
  api::AuditClaim claim;
  claim.epsilon = t.guarantee.epsilon;
  claim.delta = t.guarantee.delta;
  claim.confidence = o.confidence;
  claim.candidate_events = o.events;
  claim.score = t.score == core::AuditScore::categorical ? "categorical" : "laplace";
  const json verdict = api::audit_samples(first, second, claim);

  json out;
  out["command"] = "dpmu audit (" + t.command + ")";
  out["private"] = false;
  out["private_reason"] = {
      "an audit runs the mechanism many times on the confidential data without privacy "
      "accounting: its report is for the data owner only"};
  out["claimed"] = {{"epsilon", std::isfinite(t.guarantee.epsilon) ? json(t.guarantee.epsilon) : json(nullptr)},
                    {"delta", t.guarantee.delta},
                    {"mechanism", t.guarantee.mechanism},
                    {t.guarantee.sensitivity_name, t.guarantee.sensitivity}};
  json bounds = json::object();
  for (std::size_t j = 0; j < t.columns.size(); ++j) bounds[t.columns[j]] = {t.bounds[j].lower, t.bounds[j].upper};
  out["neighbour"] = {{"relation", t.guarantee.neighbouring},
                      {"chosen", candidates[best].description},
                      {"candidates_tried", candidates.size()},
                      {"bounds", bounds},
                      {"bounds_source", t.bounds_source}};
  out["samples_per_data_set"] = o.samples;
  out["audit_seed"] = o.seed;
  for (const auto& [k, v] : verdict.items()) {
    if (k != "samples_per_data_set") out[k] = v;
  }
  const bool consistent = verdict["consistent_with_claim"].get<bool>();
  std::cout << api::json_text(out, 2) << "\n";
  if (!consistent) throw CLI::RuntimeError(1);
}

}  // namespace dpmu::cli
