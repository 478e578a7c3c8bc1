// The release API (engine/api) as every front end uses it: the ledger charge of api::test,
// api::bma and api::select (keyed fingerprint of exactly the analysed bytes, charged before any
// noise, refused past the budget with nothing released), the options that are not releases, the
// bytes that identify in-memory data, and the audit verdict.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "../runtime/temp_dir.hpp"
#include "dpmu/api/audit.hpp"
#include "dpmu/api/bma.hpp"
#include "dpmu/api/ledger.hpp"
#include "dpmu/api/select.hpp"
#include "dpmu/api/test.hpp"
#include "dpmu/runtime/ledger.hpp"

using namespace dpmu;
using Catch::Matchers::Contains;

namespace {

struct Data {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

Data data(int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  Data d;
  d.x.resize(n, 2);
  d.y.resize(n);
  for (int i = 0; i < n; ++i) {
    d.x(i, 0) = z(rng);
    d.x(i, 1) = z(rng);
    d.y(i) = 0.5 * d.x(i, 0) + z(rng);
  }
  return d;
}

std::string key_of(const std::string& ledger) {
  std::ifstream in(runtime::ledger_key_path(ledger));
  std::string k;
  std::getline(in, k);
  return k;
}

}  // namespace

TEST_CASE("api: matrix_bytes identifies the analysed values, names and shape", "[api][ledger]") {
  const Data d = data(20, 1);
  const std::vector<std::string> names{"a", "b"};
  CHECK(api::matrix_bytes(d.x, names) == api::matrix_bytes(d.x, names));
  Eigen::MatrixXd moved = d.x;
  moved(7, 1) = std::nextafter(moved(7, 1), 10.0);  // one ulp in one value
  CHECK(api::matrix_bytes(moved, names) != api::matrix_bytes(d.x, names));
  CHECK(api::matrix_bytes(d.x, {"a", "c"}) != api::matrix_bytes(d.x, names));
  CHECK(api::matrix_bytes(d.x.topRows(19), names) != api::matrix_bytes(d.x, names));
}

TEST_CASE("api: a private test is charged on the keyed fingerprint of the analysed columns, before any noise",
          "[api][ledger]") {
  dpmu::test::TempDir dir("dpmu_release_api");
  const std::string ledger = dir / "l.jsonl";
  api::ledger_init(ledger, "1");
  const Data d = data(200, 2);
  api::TestRequest q;
  q.epsilon = 0.6;
  q.groups = 5;
  q.ledger.path = ledger;
  q.ledger.data_label = "frame";
  q.command = "test front end";
  const auto out = api::test(d.x.leftCols(1), d.x.rightCols(1), d.y, {"a"}, {"b"}, "y", q);
  CHECK(out["private"] == true);
  CHECK(out["settings"]["ledger"]["epsilon"] == 0.6);
  CHECK_FALSE(out["settings"]["ledger"].contains("data_fingerprint"));  // it would link outputs of the same data
  const runtime::Ledger l = runtime::read_ledger(ledger);
  REQUIRE(l.entries.size() == 1);
  CHECK(l.entries[0].command == "test front end");
  CHECK(l.entries[0].data_file == "frame");
  Eigen::MatrixXd cols(200, 3);
  cols << d.x, d.y;
  CHECK(l.entries[0].data_fingerprint ==
        runtime::hmac_sha256_hex(key_of(ledger), api::matrix_bytes(cols, {"a", "b", "y"})));
  // A second release would exceed the budget: refused, nothing charged, nothing returned.
  CHECK_THROWS_AS(api::test(d.x.leftCols(1), d.x.rightCols(1), d.y, {"a"}, {"b"}, "y", q), runtime::BudgetExceeded);
  CHECK(runtime::read_ledger(ledger).entries.size() == 1);
  // Given bytes (the CLI's file) are what is fingerprinted.
  api::ledger_init(dir / "m.jsonl", "5");
  q.ledger.path = dir / "m.jsonl";
  api::test(d.x.leftCols(1), d.x.rightCols(1), d.y, {"a"}, {"b"}, "y", q, "the file's bytes");
  CHECK(runtime::read_ledger(dir / "m.jsonl").entries[0].data_fingerprint ==
        runtime::hmac_sha256_hex(key_of(dir / "m.jsonl"), "the file's bytes"));
}

TEST_CASE("api: a private test's non-finite value makes its subset fail (public value), never an error", "[api]") {
  Data d = data(200, 3);
  d.x(5, 1) = -std::numeric_limits<double>::infinity();  // e.g. log(0) derived by a front end
  api::TestRequest q;
  q.epsilon = 1.0;
  q.groups = 5;
  q.seed = 4;
  const auto out = api::test(d.x.leftCols(1), d.x.rightCols(1), d.y, {"a"}, {"b"}, "y", q);
  CHECK(out["diagnostics"]["failed_subsets"] == 1);
  q.epsilon.reset();  // the non-private test refuses it
  CHECK_THROWS_WITH(api::test(d.x.leftCols(1), d.x.rightCols(1), d.y, {"a"}, {"b"}, "y", q), Contains("non-finite"));
}

TEST_CASE("api: bma and select charge the ledger, seeded and non-private runs refuse one", "[api][ledger]") {
  dpmu::test::TempDir dir("dpmu_release_api");
  const std::string ledger = dir / "l.jsonl";
  const Data d = data(100, 5);
  api::BmaSettings s;
  s.privacy = api::PrivacySettings{};
  s.privacy->epsilon = 0.5;
  s.privacy->bounds = {{-5.0, 5.0}};
  s.privacy->ridge_draws = 200;
  s.credible_level = 0.0;
  s.ledger.path = ledger;
  s.ledger.budget = "1";  // creates the ledger with budget 1
  const api::BmaFit fit = api::bma(d.x, d.y, {"a", "b"}, "y", s);
  REQUIRE(fit.ledger);
  CHECK(fit.ledger->created);
  CHECK(fit.ledger->total.epsilon == 0.5);
  CHECK(api::privacy_json(fit)["ledger"]["path"] == ledger);
  api::SelectRequest q;
  q.epsilon = 0.5;
  q.radius = 2.0;
  q.penalty = 1.0;
  q.data_bound = "5";
  q.ledger.path = ledger;
  const auto out = api::select(d.x, d.y, {"a", "b"}, "y", q);
  CHECK(out["settings"]["ledger"]["total_epsilon"] == 1.0);
  CHECK_THROWS_AS(api::bma(d.x, d.y, {"a", "b"}, "y", s), runtime::BudgetExceeded);  // 1.5 > 1
  s.ledger.budget = "3";
  CHECK_THROWS_WITH(api::bma(d.x, d.y, {"a", "b"}, "y", s), Contains("may only be lower"));
  s.ledger.budget.clear();
  CHECK_THROWS_AS(api::bma(d.x, d.y, {"a", "b"}, "y", s), runtime::BudgetExceeded);
  CHECK(runtime::read_ledger(ledger).entries.size() == 2);
  s.seed = 1;
  CHECK_THROWS_WITH(api::bma(d.x, d.y, {"a", "b"}, "y", s), Contains("real releases only"));
  s.seed.reset();
  s.privacy.reset();
  CHECK_THROWS_WITH(api::bma(d.x, d.y, {"a", "b"}, "y", s), Contains("real releases only"));
  s.ledger.path.clear();
  s.ledger.budget = "1";
  CHECK_THROWS_WITH(api::bma(d.x, d.y, {"a", "b"}, "y", s), Contains("needs a ledger"));
}

TEST_CASE("api: a secure Wishart release warns that its sampler is floating point", "[api]") {
  const Data d = data(100, 6);
  api::BmaSettings s;
  s.privacy = api::PrivacySettings{};
  s.privacy->epsilon = 0.5;
  s.privacy->delta = 1e-6;
  s.privacy->mechanism = "wishart";
  s.privacy->bounds = {{-5.0, 5.0}};
  s.credible_level = 0.0;
  const api::BmaFit fit = api::bma(d.x, d.y, {"a", "b"}, "y", s);
  REQUIRE_FALSE(fit.messages.empty());
  CHECK_THAT(fit.messages[0], Contains("floating-point") && Contains("Mironov"));
  s.seed = 1;  // a simulation: no warning
  for (const auto& m : api::bma(d.x, d.y, {"a", "b"}, "y", s).messages) CHECK_THAT(m, !Contains("Mironov"));
}

TEST_CASE("api: audit_samples refutes a claim only when the releases differ by more than it allows", "[api]") {
  // Fixed samples (deterministic): one-hot releases with P = 0.9 on D and 0.1 on D' (ε = log 9 ≈ 2.2).
  std::vector<Eigen::VectorXd> first, second;
  for (int i = 0; i < 2000; ++i) {
    first.push_back(Eigen::VectorXd::Constant(1, i % 10 == 0 ? 0.0 : 1.0));
    second.push_back(Eigen::VectorXd::Constant(1, i % 10 == 0 ? 1.0 : 0.0));
  }
  api::AuditClaim claim;
  claim.epsilon = 0.5;
  claim.score = "categorical";
  const auto refuted = api::audit_samples(first, second, claim);
  CHECK(refuted["consistent_with_claim"] == false);
  CHECK(refuted["epsilon_lower_bound"].get<double>() > 1.5);
  CHECK(refuted["epsilon_lower_bound"].get<double>() < std::log(9.0));
  claim.epsilon = 3.0;
  CHECK(api::audit_samples(first, second, claim)["consistent_with_claim"] == true);
  claim.score = "nonsense";
  CHECK_THROWS_WITH(api::audit_samples(first, second, claim), Contains("laplace or categorical"));
}

TEST_CASE("api: select maps a non-finite value by the public rule instead of refusing (no data-dependent error)",
          "[api]") {
  Data d = data(100, 7);
  api::SelectRequest q;
  q.epsilon = 1.0;
  q.radius = 2.0;
  q.penalty = 1.0;
  q.data_bound = "3";
  q.seed = 9;
  Data mapped = d;
  d.x(3, 0) = -std::numeric_limits<double>::infinity();
  d.x(4, 1) = std::numeric_limits<double>::quiet_NaN();
  d.y(5) = std::numeric_limits<double>::infinity();
  mapped.x(3, 0) = -3.0;  // r2_1pR2: |X| <= r
  mapped.x(4, 1) = 0.0;
  mapped.y(5) = 3.0;
  const auto a = api::select(d.x, d.y, {"a", "b"}, "y", q);
  const auto b = api::select(mapped.x, mapped.y, {"a", "b"}, "y", q);
  CHECK(a["selected_model"] == b["selected_model"]);
  CHECK(a["diagnostics"]["non_private_minimiser"] == b["diagnostics"]["non_private_minimiser"]);
  q.seed.reset();  // a release: no error either
  CHECK_NOTHROW(api::select(d.x, d.y, {"a", "b"}, "y", q));
  q.seed = 9;
  q.data_bound = "auto";  // a data-dependent bound cannot map: refused (a research run, not a release)
  CHECK_THROWS_WITH(api::select(d.x, d.y, {"a", "b"}, "y", q), Contains("non-finite"));
}

TEST_CASE("api: a release interrupted after its noise was drawn stays charged (charged, not delivered)",
          "[api][ledger][progress]") {
  // What Ctrl-C in R or Python does (bindings: the progress callback throws): the work stops and the
  // exception leaves api::bma. The noise was drawn before the ridge calibration and the search, and
  // charged then (docs/privacy.md "Charge first, then speak"): each interrupted release is one entry
  // in the ledger and one more charge on this thread. Before the change, none was charged.
  dpmu::test::TempDir dir("dpmu_release_interrupt");
  const std::string ledger = dir / "l.jsonl";
  api::ledger_init(ledger, "10");
  const Data d = data(100, 7);
  api::BmaSettings s;
  s.privacy = api::PrivacySettings{};
  s.privacy->epsilon = 0.5;
  s.privacy->bounds = {{-5.0, 5.0}};
  s.privacy->ridge_draws = 1000;
  s.credible_level = 0.0;
  s.ledger.path = ledger;
  struct Interrupted {};
  std::vector<std::string> phases;
  const auto interrupt_in = [&phases](const std::string& phase) {
    return [&phases, phase](const core::Progress& p) {
      phases.emplace_back(p.phase);
      if (p.phase == phase && p.done > 0) throw Interrupted{};
    };
  };
  std::size_t charged = 0;
  // the plug-in analysis by enumeration and by MCMC, then the noise-aware default (its sampler)
  for (const int analysis : {0, 1, 2}) {
    const bool mcmc = analysis == 1;
    s.mcmc = mcmc;
    s.uncertainty = analysis < 2 ? "plug-in" : "";
    const std::string search = analysis == 0 ? "enumeration" : analysis == 1 ? "mcmc" : "noise-aware-sampling";
    for (const std::string phase : {std::string("ridge-calibration"), search}) {
      phases.clear();
      s.progress = interrupt_in(phase);
      const std::uint64_t before = api::charges_on_this_thread().count;
      CHECK_THROWS_AS(api::bma(d.x, d.y, {"a", "b"}, "y", s), Interrupted);
      CHECK(phases.back() == phase);
      CHECK(runtime::read_ledger(ledger).entries.size() == ++charged);
      CHECK(api::charges_on_this_thread().count == before + 1);
      CHECK(api::charges_on_this_thread().last_ledger == ledger);
    }
  }
  phases.clear();
  s.mcmc = true;
  s.uncertainty = "plug-in";
  s.progress = [&phases](const core::Progress& p) { phases.emplace_back(p.phase); };
  const api::BmaFit fit = api::bma(d.x, d.y, {"a", "b"}, "y", s);
  REQUIRE(fit.ledger);
  CHECK(runtime::read_ledger(ledger).entries.size() == charged + 1);
  CHECK(phases.front() == "ridge-calibration");
  CHECK(phases.back() == "mcmc-summary");
  CHECK(!fit.analysis.progress);  // the caller's callback is not kept in the fit
}

TEST_CASE("api: a noise-aware analysis reports its warm-up and sampling, so Ctrl-C can stop it", "[api][progress]") {
  // B11: Ctrl-C did not stop a noise-aware bma (Wishart) in R or Python: the noise-aware analysis
  // called no progress callback. The data-augmentation sampler reports both phases, and a callback
  // that throws (what the packages do on an interrupt) stops the analysis.
  const Data d = data(200, 11);
  api::BmaSettings s;
  s.privacy = api::PrivacySettings{};
  s.privacy->epsilon = 0.5;
  s.privacy->delta = 1e-6;
  s.privacy->mechanism = "wishart";
  s.privacy->bounds = {{-5.0, 5.0}};
  s.seed = 3;
  s.credible_level = 0.0;
  s.uncertainty = "noise-aware";
  s.noise_aware_draws = 100;
  struct Interrupted {};
  for (const std::string phase : {"noise-aware-warmup", "noise-aware-sampling"}) {
    bool seen = false;
    s.progress = [&seen, phase](const core::Progress& p) {
      if (p.phase == phase) {
        seen = true;
        throw Interrupted{};
      }
    };
    bool stopped = false;
    try {
      (void)api::bma(d.x, d.y, {"a", "b"}, "y", s);
    } catch (const Interrupted&) {
      stopped = true;
    }
    CHECK(seen);
    CHECK(stopped);
  }
}

TEST_CASE("api: a signal between the noise draw and the charge is delivered after the charge", "[api][ledger]") {
  // The `dpmu` command's rule (defer_interrupts_around_charges): a child process raises SIGUSR1 on
  // itself inside draw_and_commit's draw — between the noise and the charge. The signal must wait
  // for the charge, then end the process with "charged, not delivered" and status 128 + SIGUSR1.
  dpmu::test::TempDir dir("dpmu_release_deferral");
  const std::string ledger = dir / "l.jsonl";
  api::ledger_init(ledger, "10");
  const std::string err_path = dir / "stderr.txt";
  std::fflush(nullptr);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::FILE* err = std::freopen(err_path.c_str(), "w", stderr);
    if (err == nullptr) ::_exit(90);
    api::defer_interrupts_around_charges("dpmu-test");
    core::PrivacyGuarantee g;
    g.epsilon = 0.5;
    g.delta = 0.0;
    api::LedgerOptions o;
    o.path = ledger;
    api::ReleaseCharge charge(o, "test", g, nlohmann::json::array({"x"}));
    const int drawn = charge.draw_and_commit(
        [] {
          ::raise(SIGUSR1);  // blocked: stays pending until the charge is in the ledger
          return 42;
        },
        "bytes");
    ::_exit(drawn == 42 ? 91 : 92);  // not reached: the pending signal ends the process first
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGUSR1);
  CHECK(runtime::read_ledger(ledger).entries.size() == 1);
  std::ifstream in(err_path);
  const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_THAT(err, Contains("charged, not delivered") && Contains(ledger));
}

TEST_CASE("api: MCMC bounds that cannot fit are refused up front, naming the option", "[api][bma]") {
  const Data d = data(100, 8);
  api::BmaSettings s;
  s.mcmc = true;
  s.mcmc_max_models = 0;
  CHECK_THROWS_WITH(api::bma(d.x, d.y, {"a", "b"}, "y", s), Contains("mcmc_max_models is 0"));
  s.mcmc_max_models = 1ULL << 50;  // 2^50 × 256 bytes
  CHECK_THROWS_WITH(api::bma(d.x, d.y, {"a", "b"}, "y", s),
                    Contains("mcmc_max_models 1125899906842624") && Contains("GB in memory"));
  s.mcmc_max_models = 1000;
  s.mcmc_max_iterations = 1ULL << 62;  // the stopping rule's snapshots alone
  CHECK_THROWS_WITH(api::bma(d.x, d.y, {"a", "b"}, "y", s), Contains("mcmc_max_iterations"));
  s.mcmc_max_iterations = 3000;
  const api::BmaFit fit = api::bma(d.x, d.y, {"a", "b"}, "y", s);
  REQUIRE(fit.posterior.mcmc);
  CHECK(fit.posterior.mcmc->max_iterations == 3000);
  CHECK(fit.posterior.mcmc->iterations <= 3000);
}
