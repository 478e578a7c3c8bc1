// Charging releases to a privacy-budget ledger: one implementation for every front end.
#include "dpmu/api/ledger.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace dpmu::api {

void check_ledger_options(const LedgerOptions& o, bool secure_release) {
  if (!o.budget.empty() && o.path.empty()) {
    throw std::invalid_argument("a budget (--budget / budget =) needs a ledger (--ledger FILE / ledger =)");
  }
  if (o.path.empty()) return;
  if (!secure_release) {
    throw std::invalid_argument(
        "a ledger records real releases only: drop the seed / non-private option (a simulation is not charged to "
        "a budget), or drop the ledger");
  }
  if (!o.budget.empty()) runtime::parse_budget(o.budget);
}

std::optional<runtime::MechanismRecord> mechanism_record(const core::PrivacyGuarantee& g) {
  if (g.noise_kind.empty()) return std::nullopt;
  runtime::MechanismRecord m;
  m.kind = g.noise_kind;
  m.sensitivity_name = g.sensitivity_name;
  m.sensitivity = g.sensitivity;
  m.noise_scale = g.noise_scale;
  m.neighbouring = g.neighbouring;
  m.description = g.mechanism;
  return m;
}

namespace {
std::optional<runtime::Budget> checked_charge(const LedgerOptions& o, const core::PrivacyGuarantee& g) {
  if (!std::isfinite(g.epsilon)) {
    throw std::invalid_argument("ledger: this release has no valid epsilon (see privacy), so it cannot be charged");
  }
  std::optional<runtime::Budget> budget;
  if (!o.budget.empty()) budget = runtime::parse_budget(o.budget);
  return budget;
}
}  // namespace

// ---- Interrupts around charges (docs/privacy.md "Charge first, then speak") ----

namespace {

constexpr int kInterruptSignals[] = {SIGINT,    SIGTERM, SIGHUP,  SIGQUIT, SIGALRM,
                                     SIGVTALRM, SIGPROF, SIGXCPU, SIGUSR1, SIGUSR2};

// Set once by defer_interrupts_around_charges() (interrupt_deferral.cpp, linked into the `dpmu`
// command only: it installs a handler that calls _exit, which the R package must not contain).
std::atomic<detail::AfterChargeHandler> g_after_charge{nullptr};
std::string& program_name() {
  static std::string name = "dpmu";
  return name;
}

thread_local ThreadCharges t_charges;

}  // namespace

namespace detail {
void set_after_charge_handler(std::string name, AfterChargeHandler handler) {
  program_name() = std::move(name);
  g_after_charge.store(handler);
}
}  // namespace detail

const ThreadCharges& charges_on_this_thread() { return t_charges; }

ReleaseCharge::InterruptDeferral::InterruptDeferral() {
  if (g_after_charge.load() == nullptr) return;
  sigset_t block;
  sigemptyset(&block);
  for (const int s : kInterruptSignals) sigaddset(&block, s);
  if (::pthread_sigmask(SIG_BLOCK, &block, &saved_) == 0) active_ = true;
}

ReleaseCharge::InterruptDeferral::~InterruptDeferral() {
  if (active_) ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr);  // a pending signal is delivered now
}

void ReleaseCharge::InterruptDeferral::charged(const std::string& path) const {
  if (!active_ || path.empty()) return;  // no ledger: a pending signal acts as it would have
  const std::string text = program_name() + ": interrupted after the release was charged to ledger " + path +
                           ": charged, not delivered (its noise was drawn, so the spend stands)\n";
  g_after_charge.load()(text, kInterruptSignals, std::size(kInterruptSignals));
}

ReleaseCharge::ReleaseCharge(LedgerOptions options, std::string command, const core::PrivacyGuarantee& guarantee,
                             nlohmann::json released)
    : options_(std::move(options)),
      command_(std::move(command)),
      guarantee_(guarantee),
      released_(std::move(released)) {
  if (options_.path.empty()) return;
  budget_ = checked_charge(options_, guarantee_);
  // The ledger as it stands now: a release it cannot afford is refused before any work. A missing
  // or empty ledger is created by commit() (with --budget); until then only the budget is checked.
  std::error_code ec;
  const auto size = std::filesystem::file_size(options_.path, ec);
  const auto mechanism = mechanism_record(guarantee_);
  if (!ec && size > 0) {
    const runtime::LedgerLock lock(options_.path);
    lock.check(guarantee_.epsilon, guarantee_.delta, budget_, mechanism);
  } else if (budget_) {
    runtime::LedgerEntry release;
    release.epsilon = guarantee_.epsilon;
    release.delta = guarantee_.delta;
    release.mechanism = mechanism;
    runtime::check_release_fits(runtime::default_accountant(*budget_), *budget_, {}, release, options_.path, false);
  } else {
    const runtime::LedgerLock lock(options_.path);  // throws: how to create the ledger
  }
}

std::optional<LedgerCharge> ReleaseCharge::commit(std::string_view data_bytes) {
  if (committed_) throw std::logic_error("ReleaseCharge::commit called twice");
  committed_ = true;
  if (options_.path.empty()) return std::nullopt;
  runtime::LedgerLock lock(options_.path, budget_);  // creates a missing ledger with the budget
  LedgerCharge c;
  c.created = lock.created();
  const auto mechanism = mechanism_record(guarantee_);
  lock.check(guarantee_.epsilon, guarantee_.delta, c.created ? std::nullopt : budget_, mechanism);
  runtime::LedgerEntry e;
  e.command = command_;
  e.data_file = options_.data_label;
  e.data_fingerprint = lock.fingerprint(data_bytes);
  e.epsilon = guarantee_.epsilon;
  e.delta = guarantee_.delta;
  e.released = released_;
  e.mechanism = mechanism;
  lock.append(e);
  c.path = options_.path;
  c.data_fingerprint = e.data_fingerprint;
  c.epsilon = guarantee_.epsilon;
  c.delta = guarantee_.delta;
  c.budget = lock.ledger().budget();
  c.total = lock.ledger().total();
  c.accountant = lock.ledger().accountant();
  c.accounted = runtime::accountant_total_json(c.accountant, lock.ledger().entries, c.budget.delta);
  ++t_charges.count;
  t_charges.last_ledger = c.path;
  return c;
}

std::string matrix_bytes(const Eigen::Ref<const Eigen::MatrixXd>& x, const std::vector<std::string>& names) {
  std::string out = "dpmu matrix v1\n" + std::to_string(x.rows()) + " " + std::to_string(x.cols()) + "\n";
  for (const auto& n : names) out += n + "\n";
  out.reserve(out.size() + static_cast<std::size_t>(x.size()) * sizeof(double));
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const double v = x(i, j);
      char b[sizeof(double)];
      std::memcpy(b, &v, sizeof v);
      out.append(b, sizeof b);
    }
  }
  return out;
}

nlohmann::ordered_json to_json(const LedgerCharge& c) {
  // Not the data's fingerprint: a fixed function of the data, it would let anyone holding two
  // outputs tell whether they came from the same data. It stays in the ledger file only.
  nlohmann::ordered_json out = {{"path", c.path},
                                {"epsilon", c.epsilon},
                                {"delta", c.delta},
                                {"total_epsilon", c.total.epsilon},
                                {"total_delta", c.total.delta},
                                {"releases", c.total.releases}};
  if (c.budget.is_zcdp()) {
    out["budget_rho"] = c.budget.rho;
  } else {
    out["budget_epsilon"] = c.budget.epsilon;
    out["budget_delta"] = c.budget.delta;
  }
  out["created"] = c.created;
  out["accountant"] = runtime::accountant_name(c.accountant);
  out["accounted_total"] = c.accounted;
  return out;
}

void ledger_init(const std::string& path, const std::string& budget, const std::string& accountant) {
  runtime::init_ledger(path, runtime::parse_budget(budget),
                       accountant.empty() ? std::nullopt : std::optional(runtime::parse_accountant(accountant)));
}

void ledger_set_budget(const std::string& path, const std::string& budget, const std::string& reason) {
  const runtime::Budget b = runtime::parse_budget(budget);
  runtime::LedgerLock lock(path);
  lock.change_budget(b, reason);
}

nlohmann::ordered_json ledger_summary(const std::string& path) {
  using Json = nlohmann::ordered_json;
  const runtime::Ledger ledger = runtime::read_ledger(path);
  const auto& entries = ledger.entries;
  const runtime::LedgerTotal total = ledger.total();
  const runtime::Budget budget = ledger.budget();
  Json data_sets = Json::object();
  for (const auto& [fingerprint, t] : runtime::ledger_totals(entries)) {
    Json releases = Json::array();
    for (const auto& e : entries) {
      if (e.data_fingerprint != fingerprint) continue;
      Json r{{"time", e.time}, {"command", e.command}, {"epsilon", e.epsilon}, {"delta", e.delta}};
      r["mechanism"] = e.mechanism ? Json(e.mechanism->kind) : Json(nullptr);
      if (runtime::entry_family(e) == runtime::EntryFamily::gaussian) r["mu"] = runtime::entry_mu(e);
      releases.push_back(r);
    }
    data_sets[fingerprint] = {{"data_files", t.data_files},
                              {"releases", t.releases},
                              {"epsilon", t.epsilon},
                              {"delta", t.delta},
                              {"release_list", releases}};
  }
  Json changes = Json::array();
  for (const auto& c : ledger.budget_changes) {
    Json change{{"time", c.time}};
    if (c.budget.is_zcdp()) {
      change["rho"] = c.budget.rho;
    } else {
      change["epsilon"] = c.budget.epsilon;
      change["delta"] = c.budget.delta;
    }
    change["reason"] = c.reason;
    changes.push_back(change);
  }
  const runtime::Accountant accountant = ledger.accountant();
  // Every total: basic always; tight at the budget's δ for an (ε, δ) budget; zcdp when every
  // release has a zCDP bound (always shown for a ρ budget).
  Json totals = Json::object();
  totals["basic"] = runtime::accountant_total_json(runtime::Accountant::basic, entries, 0.0);
  if (!budget.is_zcdp()) {
    totals["tight"] = runtime::accountant_total_json(runtime::Accountant::tight, entries, budget.delta);
  }
  const Json zcdp = runtime::accountant_total_json(runtime::Accountant::zcdp, entries, 0.0);
  if (budget.is_zcdp() || !zcdp["rho"].is_null()) totals["zcdp"] = zcdp;
  const Json& charged = totals[runtime::accountant_name(accountant)];
  Json remaining;
  if (budget.is_zcdp()) {
    remaining = {{"rho", charged["rho"].is_null() ? Json(nullptr) : Json(budget.rho - charged["rho"].get<double>())}};
  } else if (accountant == runtime::Accountant::tight) {
    remaining = {{"epsilon", charged["epsilon"].is_null() ? Json(nullptr)
                                                          : Json(budget.epsilon - charged["epsilon"].get<double>())},
                 {"delta", nullptr}};
  } else {
    remaining = {{"epsilon", budget.epsilon - total.epsilon}, {"delta", budget.delta - total.delta}};
  }
  Json budget_json =
      budget.is_zcdp() ? Json{{"rho", budget.rho}} : Json{{"epsilon", budget.epsilon}, {"delta", budget.delta}};
  return {
      {"ledger", path},
      {"created", ledger.header.created},
      {"accountant", runtime::accountant_name(accountant)},
      {"composition", "the budget is checked with the ledger's accountant (" + runtime::accountant_name(accountant) +
                          "): " + runtime::accountant_description(accountant)},
      {"budget", budget_json},
      {"budget_changes", changes},
      {"spent", {{"epsilon", total.epsilon}, {"delta", total.delta}, {"releases", total.releases}}},
      {"totals", totals},
      {"remaining", remaining},
      {"entries", entries.size()},
      {"data_sets", data_sets}};
}

}  // namespace dpmu::api
