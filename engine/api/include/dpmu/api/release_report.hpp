#pragma once
/// @file release_report.hpp
/// The JSON printed by the release commands (`dpmu test`, `dpmu bma`, `dpmu select`), built so that
/// every field is one of three kinds (docs/privacy.md):
///  * setting — public: an option the user gave, or a function of options and the public n;
///  * released — an output of the mechanism, or post-processing of it together with settings;
///  * diagnostic — computed from the confidential data without noise (a non-private answer, clamp
///    counts, subsets that could not be fitted). Diagnostics exist only in simulation mode; adding
///    one to a report in release mode is a programming error (std::logic_error), never printed.
/// `"private"` is derived, never typed in: true only for a release drawn from the secure noise
/// source with no data-dependent option and no diagnostic; otherwise `"private": false` with the
/// reasons in `"private_reason"`.

#include <Eigen/Dense>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpmu/core/release.hpp"

namespace dpmu::api {

class ReleaseReport {
 public:
  using json = nlohmann::ordered_json;

  /// @param secure_noise true when the release draws from the secure noise source (no --seed).
  /// @param method what is released, e.g. "SSP model averaging (PB Sec. 5)".
  ReleaseReport(bool secure_noise, std::string method) : secure_(secure_noise) {
    out_["method"] = std::move(method);
    if (!secure_noise) not_private("seeded simulation noise (--seed): anyone with the seed can remove the noise");
  }

  /// A public setting (under "settings").
  template <class T>
  void setting(const std::string& key, T&& value) {
    settings_[key] = std::forward<T>(value);
  }
  /// The privacy guarantee derived by the release type, plus public extras (under "privacy").
  void privacy(const core::PrivacyGuarantee& g) {
    privacy_["epsilon"] = g.epsilon;
    privacy_["delta"] = g.delta;
    privacy_["neighbouring"] = g.neighbouring;
    privacy_["mechanism"] = g.mechanism;
    privacy_[g.sensitivity_name] = g.sensitivity;
    privacy_["sampler"] = secure_ ? g.sampler : "simulation: continuous samplers on a seeded stream";
  }
  template <class T>
  void privacy_detail(const std::string& key, T&& value) {
    privacy_[key] = std::forward<T>(value);
  }
  /// A released value (top level).
  template <class T>
  void released(const std::string& key, T&& value) {
    released_[key] = std::forward<T>(value);
  }
  /// A confidential diagnostic (under "diagnostics"). @throws std::logic_error in release mode.
  template <class T>
  void diagnostic(const std::string& key, T&& value) {
    if (secure_) throw std::logic_error("internal error: a diagnostic '" + key + "' in a release");
    diagnostics_[key] = std::forward<T>(value);
  }
  /// The output is not private (a data-dependent option, a seed, a non-private analysis).
  void not_private(const std::string& reason) { reasons_.push_back(reason); }
  bool is_private() const { return reasons_.empty(); }

  /// The whole report: method, private, private_reason, settings, privacy, released fields,
  /// diagnostics (only if any).
  json finish() const {
    json out = out_;
    out["private"] = is_private();
    out["private_reason"] = reasons_;
    out["settings"] = settings_;
    if (!privacy_.empty()) out["privacy"] = privacy_;
    for (const auto& [k, v] : released_.items()) out[k] = v;
    if (!diagnostics_.empty()) out["diagnostics"] = diagnostics_;
    return out;
  }

 private:
  bool secure_;
  json out_ = json::object();
  json settings_ = json::object();
  json privacy_ = json::object();
  json released_ = json::object();
  json diagnostics_ = json::object();
  std::vector<std::string> reasons_;
};

/// `v` as a JSON object keyed by `names` (one name per entry, in order); a non-finite entry is
/// null (JSON has no NaN or infinity).
inline nlohmann::ordered_json keyed_or_null(const Eigen::VectorXd& v, const std::vector<std::string>& names) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (std::size_t j = 0; j < names.size(); ++j) {
    const double x = v(static_cast<Eigen::Index>(j));
    out[names[j]] = std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
  }
  return out;
}

/// JSON as text for output (stdout, files, the bindings): invalid UTF-8 in a string — a Latin-1
/// column or file name — becomes U+FFFD instead of an exception, so an output whose release was
/// charged is never lost to its encoding (docs/reliability.md). `indent` as nlohmann's dump().
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace dpmu::api
