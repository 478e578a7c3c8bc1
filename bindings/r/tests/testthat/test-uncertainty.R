# The noise-aware analysis, the default of a release (docs/bma.md "Uncertainty"), on held-out
# simulated data: labelled in the fit and its printout with the sampler's diagnostics; at epsilon = 1
# the noise-aware intervals contain the plug-in posterior means and are at least as wide; at
# epsilon = 1e6 it equals the non-private analysis within its Monte Carlo error (noise scale 1e-5
# against Gram entries of ~400); the same release and privacy record either way.

heldout <- function(n = 5000) {
  # y depends on x1 and x3; x2 is pure noise
  set.seed(30)
  x <- matrix(stats::runif(3 * n), n, 3, dimnames = list(NULL, c("x1", "x2", "x3")))
  y <- pmin(1, pmax(0, 0.5 + 0.4 * (x[, 1] - 0.5) + 0.2 * (x[, 3] - 0.5) + stats::rnorm(n, 0, 0.1)))
  data.frame(x, y = y)
}

test_that("noise-aware intervals: labelled, contain the plug-in means, wider, and exact at a huge epsilon", {
  d <- heldout()
  plug <- dpmu::bma(y ~ x1 + x2 + x3, data = d, prior = "g-prior", epsilon = 1, bounds = c(0, 1), seed = 11,
                    uncertainty = "plug-in")
  aware <- dpmu::bma(y ~ x1 + x2 + x3, data = d, prior = "g-prior", epsilon = 1, bounds = c(0, 1), seed = 11)
  exact <- dpmu::bma(y ~ x1 + x2 + x3, data = d, prior = "g-prior")
  huge <- dpmu::bma(y ~ x1 + x2 + x3, data = d, prior = "g-prior", epsilon = 1e6, bounds = c(0, 1), seed = 11,
                    uncertainty = "noise-aware")
  expect_equal(c(plug$posterior$uncertainty, aware$posterior$uncertainty, exact$posterior$uncertainty),
               c("plug-in", "noise-aware", "exact"))
  expect_output(print(aware), "sampling and privacy noise")
  expect_output(print(plug), "NOT the privacy noise")
  expect_output(print(summary(aware)), "Uncertainty: noise-aware")
  expect_output(print(aware), "data-augmentation: 4 chains")
  na <- aware$posterior$noise_aware
  expect_true(na$converged && na$max_rhat <= 1.01 && na$min_ess >= 400 && na$chains == 4)
  expect_identical(aware$privacy, plug$privacy)
  expect_identical(aware$release$released_gram, plug$release$released_gram)
  a <- aware$posterior; p <- plug$posterior; e <- exact$posterior; h <- huge$posterior
  expect_true(all(a$lower <= p$mean & p$mean <= a$upper))
  expect_true(all(a$upper - a$lower >= p$upper - p$lower))
  w <- e$upper - e$lower
  # up to the sampler's weak proper priors: PIPs within 4 MC SE + 0.01, interval ends of the
  # included predictors within 10 % of the width (MC error of a 2.5 % quantile ~5 %)
  hn <- huge$posterior$noise_aware
  expect_true(hn$converged)
  expect_true(all(abs(h$pip - e$pip) <= 4 * hn$pip_mc_se + 0.01))
  inc <- e$pip > 0.99
  expect_true(all(abs(h$lower - e$lower)[inc] <= 0.1 * w[inc] & abs(h$upper - e$upper)[inc] <= 0.1 * w[inc]))
  expect_true(any(abs(a$lower - e$lower) > 1e-4 * w))  # the check can fail: epsilon = 1 is not exact
  expect_error(dpmu::bma(y ~ x1, data = d, epsilon = 1, bounds = c(0, 1), seed = 1, uncertainty = "bayes"),
               "uncertainty")
})

test_that("at small n and epsilon the pure-noise predictor's noise-aware PIP stays near its prior", {
  # 300 rows, epsilon = 0.1 and 1: the Laplace scale 10 (p+1)(p+2)/2 / epsilon = 100-1000 swamps Gram
  # entries of ~25, so the release says almost nothing and the noise-aware PIP of x2 must stay near its
  # prior inclusion probability 1/2 (within 0.25; MC SE < 0.05); the plug-in analysis of the same
  # release puts it at >= 0.9 (what the noise-aware analysis fixes, and proof the check can fail).
  d <- heldout(300)
  for (eps in c(0.1, 1)) {
    aware <- dpmu::bma(y ~ x1 + x2 + x3, data = d, prior = "g-prior", epsilon = eps, bounds = c(0, 1), seed = 1)
    plug <- dpmu::bma(y ~ x1 + x2 + x3, data = d, prior = "g-prior", epsilon = eps, bounds = c(0, 1), seed = 1,
                      uncertainty = "plug-in")
    na <- aware$posterior$noise_aware
    expect_true(na$converged)
    expect_equal(unname(aware$posterior$prior_inclusion[["x2"]]), 0.5)
    expect_lt(na$pip_mc_se[["x2"]], 0.05)
    expect_lte(abs(aware$posterior$pip[["x2"]] - 0.5), 0.25)
    expect_gte(plug$posterior$pip[["x2"]], 0.9)
  }
})
