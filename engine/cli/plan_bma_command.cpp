// `dpmu plan-bma`: what a private model-averaging release would deliver, simulated from public
// quantities before any budget is spent (docs/bma.md "Planning a release"). The simulation is
// api::plan_bma (engine/api/src/plan_bma.cpp), the one implementation behind this command and the R
// and Python plan_bma(). No data is read and no ledger is touched.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "dpmu/api/plan_bma.hpp"
#include "dpmu/api/release_report.hpp"

namespace dpmu::cli {

namespace {

struct PlanBmaOptions {
  api::PlanBmaRequest request;
  std::optional<std::int64_t> p, true_model_size;
  std::optional<double> signal_z, sigma, delta;
  std::vector<double> coefficients, bounds;
};

}  // namespace

void add_plan_bma_command(CLI::App& app) {
  auto o = std::make_shared<PlanBmaOptions>();
  api::PlanBmaRequest& q = o->request;
  CLI::App* cmd = app.add_subcommand(
      "plan-bma",
      "Before a private model-averaging release: simulate, from public quantities only, the coverage of the "
      "credible intervals of each beta_j (plug-in and noise-aware), the Brier score of the PIPs, the mean PIPs and "
      "P(true model), with Monte Carlo SEs (experiment ssp_calibration; docs/bma.md). The design is the built-in "
      "one (--p, --true-model-size, --signal-z) or the assumed --coefficients, --sigma and --bounds. Reads no data, "
      "touches no ledger. Prints JSON.");
  cmd->add_option("--n", q.n, "Number of rows (>= p + 3)")->required();
  cmd->add_option("--p", o->p, "Number of candidate predictors (1 to 12; set by --coefficients when given)");
  cmd->add_option("--coefficients", o->coefficients,
                  "The assumed beta_1,...,beta_p (comma-separated; sets p; the non-zero ones are the true model)")
      ->delimiter(',');
  cmd->add_option("--sigma", o->sigma, "The assumed error SD (> 0; default sqrt(8/3)/z of the built-in design)");
  cmd->add_option("--bounds", o->bounds,
                  "Public bounds as `dpmu bma --bounds`: l,u for every column, or l1,u1,...,l(p+1),u(p+1) (predictors "
                  "in order, response last); predictor j is simulated Uniform(l_j, u_j). Default: (-2, 2), the "
                  "paper's reading")
      ->delimiter(',');
  cmd->add_option("--true-model-size", o->true_model_size,
                  "Built-in design: |T|, the first |T| predictors have coefficient b = 1/(z sqrt|T|), the others 0 "
                  "(default 0)");
  cmd->add_option("--signal-z", o->signal_z,
                  "Built-in design: z of docs/methods.md A6 (sigma = sqrt(8/3)/z, SNR 1/2; "
                  "default 7)");
  cmd->add_option("--mechanism", q.mechanism, "laplace | wishart")->capture_default_str();
  cmd->add_option("--epsilon", q.epsilon, "Privacy parameter epsilon > 0 (wishart: < 1)")->required();
  cmd->add_option("--delta", o->delta, "Privacy parameter delta in (0, 1) (wishart only; default 1/n)");
  cmd->add_option("--prior", q.prior, "Coefficient prior (as in `dpmu run`'s ssp_calibration)")->capture_default_str();
  cmd->add_option("--model-prior", q.model_prior, "Prior over models")->capture_default_str();
  cmd->add_option("--noise-aware-draws", q.noise_aware_draws,
                  "Noise-aware: warm-up sweeps and first batch of saved draws per chain of the data-augmentation "
                  "sampler, per simulated release (as dpmu bma)")
      ->capture_default_str();
  cmd->add_option("--uncertainty", q.uncertainty, "Analyses reported: both | plug-in | noise-aware")
      ->capture_default_str();
  cmd->add_option("--replicates,--simulations", q.replicates, "Simulated releases (10 to 100000)")
      ->capture_default_str()
      ->check(unsigned_integer());
  cmd->add_option("--seed", q.seed, "Seed of the simulation")->capture_default_str()->check(unsigned_integer());
  cmd->callback([o, cmd] {
    api::PlanBmaRequest r = o->request;
    r.p = o->p;
    r.true_model_size = o->true_model_size;
    r.signal_z = o->signal_z;
    r.sigma = o->sigma;
    r.delta = o->delta;
    if (cmd->count("--coefficients") > 0) r.coefficients = o->coefficients;
    if (cmd->count("--bounds") > 0) r.bounds = o->bounds;
    set_activity("simulating the release (plan-bma)");
    std::cout << api::json_text(api::plan_bma(r), 2) << "\n";
  });
}

}  // namespace dpmu::cli
