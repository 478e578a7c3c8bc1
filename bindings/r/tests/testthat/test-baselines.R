# The baselines of docs/methods.md Sec. 11 through dpmu::test(method = ): the same release as
# `dpmu test --method` for the same data, options and seed; the settings echo the method; bad
# options are refused before any release.

test_that("test(method = 'test-of-tests' | 'dp-f') equals the CLI's seeded release", {
  d <- utils::read.csv(hsb2_csv())
  tot <- dpmu::test(math ~ science, math ~ science + read, data = d, method = "test-of-tests", epsilon = 1,
                    seed = 3)
  cli <- cli_json(c("test", "--data", hsb2_csv(), "--response", "math", "--common", "science", "--tested", "read",
                    "--method", "test-of-tests", "--epsilon", "1", "--seed", "3"))
  expect_equal(tot$settings$method, "test-of-tests")
  expect_equal(tot$settings$num_subsets, cli$settings$num_subsets)
  expect_equal(tot$noisy_count, cli$noisy_count, tolerance = 1e-12)
  expect_equal(tot$p_value, cli$p_value, tolerance = 1e-12)
  expect_false(tot$private)
  expect_output(print(tot), "Test of Tests, m = ")
  dpf <- dpmu::test(math ~ science, math ~ science + read, data = d, method = "dp-f", epsilon = 5, delta = 1e-6,
                    bounds = c(0, 100), seed = 2)
  cli <- cli_json(c("test", "--data", hsb2_csv(), "--response", "math", "--common", "science", "--tested", "read",
                    "--method", "dp-f", "--epsilon", "5", "--delta", "1e-6", "--bounds", "0,100", "--seed", "2"))
  expect_equal(dpf$f_statistic, cli$f_statistic, tolerance = 1e-12)
  expect_equal(dpf$p_value, cli$p_value, tolerance = 1e-12)
  expect_output(print(dpf), "DP F-test")
  expect_error(dpmu::test(math ~ science, math ~ science + read, data = d, method = "dp-f", epsilon = 5,
                          delta = 1e-6, seed = 1), "bounds")
  expect_error(dpmu::test(math ~ science, math ~ science + read, data = d, method = "tot", epsilon = 1, seed = 1),
               "method")
})

test_that("bma(method = 'adassp') equals the CLI's seeded release, is typed and refuses what it does not take", {
  d <- utils::read.csv(hsb2_csv())
  fit <- dpmu::bma(science ~ read + write, data = d, method = "adassp", epsilon = 1, delta = 1e-6,
                   bounds = c(20, 80), seed = 4)
  cli <- cli_json(c("bma", "--data", hsb2_csv(), "--response", "science", "--predictors", "read,write",
                    "--method", "adassp", "--epsilon", "1", "--delta", "1e-6", "--bounds", "20,80", "--seed", "4"))
  expect_s3_class(fit, "dpmu_adassp")
  expect_equal(fit$settings$method, "adassp")
  expect_equal(unname(coef(fit)), unname(unlist(cli$coefficients)), tolerance = 1e-12)
  expect_equal(names(coef(fit)), c("(intercept)", "read", "write"))
  expect_equal(fit$lambda_min_noisy, cli$lambda_min_noisy, tolerance = 1e-12)
  expect_false(fit$private)
  expect_true(is.list(fit$diagnostics))
  expect_null(fit$pip)
  expect_output(print(fit), "AdaSSP ridge point estimate")
  # a secure release: private, no diagnostics
  sec <- dpmu::bma(science ~ read + write, data = d, method = "adassp", epsilon = 1, delta = 1e-6,
                   bounds = c(20, 80), ledger = NULL)
  expect_true(sec$private)
  expect_null(sec$diagnostics)
  # with a large epsilon the estimate approaches least squares (independent: lm)
  big <- dpmu::bma(science ~ read + write, data = d, method = "adassp", epsilon = 1e6, delta = 0.5,
                   bounds = c(20, 80), seed = 1)
  expect_equal(unname(coef(big)), unname(coef(stats::lm(science ~ read + write, data = d))), tolerance = 1e-3)
  expect_error(dpmu::bma(science ~ read, data = d, method = "adassp", epsilon = 1, bounds = c(20, 80), seed = 1),
               "delta")
  expect_error(dpmu::bma(science ~ read, data = d, method = "adassp", epsilon = 1, delta = 1e-6,
                         bounds = c(20, 80), prior = "bic", seed = 1), "prior do not apply")
  expect_error(dpmu::bma(science ~ read, data = d, method = "adassp"), "private release")
  expect_error(dpmu::bma(science ~ read, data = d, method = "ada"), "method must be")
})
