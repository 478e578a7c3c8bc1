test_that("non-private test equals dpmu test --non-private (every field, every prior)", {
  for (prior in c("g-prior", "zellner-siow", "hyper-g", "hyper-g-n", "robust", "bic", "aic", "lr")) {
    r <- dpmu::test(math ~ science, math ~ science + read, data = hsb2, prior = prior)
    cli <- cli_json(c("test", "--non-private", "--data", hsb2_csv(), "--response", "math", "--common", "science",
                      "--tested", "read", "--prior", prior))
    expect_s3_class(r, "dpmu_test")
    cli$data <- NULL
    for (k in names(cli)) expect_equal(r[[k]], cli[[k]], tolerance = 1e-12, label = paste(prior, k))
    expect_false(r$private)
  }
})

test_that("a seeded DP test through R equals the CLI's", {
  for (prior in c("zellner-siow", "lr")) {
    censor <- if (prior == "lr") c(0, 7) else NULL
    r <- dpmu::test(math ~ science, math ~ science + read + female, data = hsb2, prior = prior, epsilon = 1,
                    groups = 10, censor = censor, seed = 5, simulations = 2000)
    args <- c("test", "--data", hsb2_csv(), "--response", "math", "--common", "science", "--tested", "read,female",
              "--prior", prior, "--epsilon", "1", "--groups", "10", "--seed", "5", "--simulations", "2000")
    if (!is.null(censor)) args <- c(args, "--censor", "0,7")
    cli <- cli_json(args)
    cli$settings$data <- NULL
    for (k in setdiff(names(cli), "settings")) expect_equal(r[[k]], cli[[k]], tolerance = 1e-12, label = paste(prior, k))
    expect_equal(r$settings$data, "hsb2")  # the data argument's name (the CLI's is the file, removed above)
    r$settings$data <- NULL
    expect_equal(r$settings, cli$settings)
    expect_false(r$private)
    expect_false(is.null(r$diagnostics))
  }
})

test_that("an unseeded DP test is a release without diagnostics", {
  r <- dpmu::test(math ~ 1, math ~ female, data = hsb2, prior = "zellner-siow", epsilon = 1, groups = 5)
  expect_true(r$private)
  expect_null(r$diagnostics)
  expect_output(print(r), "epsilon = 1")
})

test_that("test needs nested formulas with one response", {
  expect_error(dpmu::test(math ~ read, math ~ science, data = hsb2), "not nested")
  expect_error(dpmu::test(math ~ read, read ~ read + science, data = hsb2), "same response")
  expect_error(dpmu::test(math ~ read, math ~ read, data = hsb2), "adds no predictor")
})
