# plan_bma(): the same numbers as `dpmu plan-bma` for the same seed, every summary with its Monte
# Carlo SE, private = FALSE, and argument errors named before any simulation.

design_bounds <- c(rep(c(-3, 3), 5), -10, 10)
cli_design <- c("--coefficients", "0.8,0,0,0.5,0", "--sigma", "1", "--bounds", paste(design_bounds, collapse = ","))
# the R functions' default prior (zellner-siow; the command's is g_prior)
cli_prior <- c("--prior", "zellner-siow")

test_that("plan_bma equals dpmu plan-bma for the same seed", {
  r <- plan_bma(n = 500, epsilon = 2, coefficients = c(0.8, 0, 0, 0.5, 0), sigma = 1, bounds = design_bounds,
                simulations = 12, seed = 5)
  d <- cli_json(c("plan-bma", "--n", "500", "--epsilon", "2", "--simulations", "12", "--seed", "5", cli_design,
                  cli_prior))
  expect_false(r$private)
  expect_false(d$private)
  expect_s3_class(r, "dpmu_plan_bma")
  expect_equal(r$truth$beta, c(0.8, 0, 0, 0.5, 0))
  expect_equal(r$settings$bounds, d$settings$bounds)
  for (analysis in c("plug_in", "noise_aware", "noise_aware_diagnostics")) {
    for (quantity in names(d[[analysis]])) {
      rows <- r$summary[r$summary$analysis == analysis & r$summary$quantity == quantity, ]
      want <- dpmu:::plan_numbers(d[[analysis]][[quantity]]$mean)
      want_se <- dpmu:::plan_numbers(d[[analysis]][[quantity]]$mc_se)
      expect_identical(rows$mean, want)  # the same bits
      expect_identical(rows$mc_se, want_se)
    }
  }
  expect_equal(nrow(r$summary), 2 * (5 * 5 + 2 + 6 * 10) + 3)  # diagnostics: converged, max R-hat, min ESS
  expect_equal(r$summary$term[r$summary$quantity == "pip" & r$summary$analysis == "plug_in"], paste0("beta", 1:5))
})

test_that("plan_bma: the built-in design, a bounds matrix, and the print says it is a simulation", {
  r <- plan_bma(n = 2000, epsilon = 1, p = 3, true_model_size = 1, simulations = 10, seed = 7,
                uncertainty = "plug-in")
  d <- cli_json(c("plan-bma", "--n", "2000", "--p", "3", "--true-model-size", "1", "--epsilon", "1",
                  "--replicates", "10", "--seed", "7", "--uncertainty", "plug-in", cli_prior))
  expect_identical(r$summary$mean[r$summary$quantity == "pip"], d$plug_in$pip$mean)
  expect_equal(unique(r$summary$analysis), "plug_in")
  m <- plan_bma(n = 500, epsilon = 2, coefficients = c(0.8, 0, 0, 0.5, 0), sigma = 1,
                bounds = matrix(design_bounds, nrow = 2), simulations = 10, seed = 1)
  v <- plan_bma(n = 500, epsilon = 2, coefficients = c(0.8, 0, 0, 0.5, 0), sigma = 1, bounds = design_bounds,
                simulations = 10, seed = 1)
  expect_identical(m$summary, v$summary)
  out <- capture.output(print(v))
  expect_true(any(grepl("simulation from public settings", out)))
  expect_true(any(grepl("not a release", out)))
})

test_that("plan_bma names the argument in its errors", {
  b <- c(0.8, 0, 0)
  expect_error(plan_bma(500, 1, coefficients = b, p = 5), "coefficients: 3 given but p is 5")
  expect_error(plan_bma(500, 1, coefficients = c(0.8, NA)), "coefficients: entry 2")
  expect_error(plan_bma(500, 1, coefficients = c(0.8, Inf)), "coefficients: entry 2")
  expect_error(plan_bma(500, 1, coefficients = numeric(0)), "coefficients: empty")
  expect_error(plan_bma(500, 1, coefficients = b, sigma = 0), "sigma: value 0 is out of range")
  expect_error(plan_bma(500, 1, coefficients = b, sigma = -1), "sigma:")
  expect_error(plan_bma(500, 1, coefficients = b, bounds = numeric(0)), "bounds: empty")
  expect_error(plan_bma(500, 1, coefficients = b, bounds = c(1, 2, 3)), "bounds: 3 numbers given")
  expect_error(plan_bma(500, 1, coefficients = b, bounds = c(2, 1)), "bounds for every column")
  expect_error(plan_bma(500, 1, coefficients = b, true_model_size = 1), "true_model_size: set by coefficients")
  expect_error(plan_bma(500, 1, coefficients = b, delta = 0.1), "delta: only the wishart mechanism")
  expect_error(plan_bma(500, 1, coefficients = b, simulations = 5), "simulations: must be >= 10")
  expect_error(plan_bma(500, 1, coefficients = b, mechanism = "gaussian"), "mechanism:")
  expect_error(plan_bma(500, 1, coefficients = b, seed = -1), "seed:")
  expect_error(plan_bma(500, 1, coefficients = b, uncertainty = "exact"), "uncertainty:")
  expect_error(plan_bma(500, 1), "p: give the number of predictors")
  expect_error(plan_bma(500, 2, coefficients = b, mechanism = "wishart"), "epsilon: wishart needs epsilon < 1")
})
