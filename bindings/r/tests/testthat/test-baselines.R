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
