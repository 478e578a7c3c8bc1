# Bottom lines: plan_bma() and plan_test() print a three-line verdict first, and a release
# whose released statistics carry almost no information says so, judged from the release and the
# public settings only.
f5 <- read ~ female + write + math + science + socst
b5 <- cbind(c(0, 1), c(0, 100), c(0, 100), c(0, 100), c(0, 100), c(0, 100))

test_that("the noise SD of the information line is that of the released matrix (seeded releases)", {
  # released - exact centred Gram of the (already in-bounds) data: Laplace noise of SD sqrt(2) b per
  # entry. 40 releases x 15 off-diagonal entries: the SD's relative Monte Carlo SE is about
  # sqrt((kurtosis - 1) / (4 N)) = sqrt(5 / 2400) = 0.046 (Laplace kurtosis 6); tolerance 4 SE.
  x <- as.matrix(hsb2[, c("female", "write", "math", "science", "socst", "read")])
  g <- crossprod(scale(x, scale = FALSE))
  d <- unlist(lapply(1:40, function(s) {
    r <- dpmu::bma(f5, data = hsb2, epsilon = 1, bounds = b5, seed = s)
    e <- r$release$released_gram - g
    e[upper.tri(e)]
  }))
  r <- dpmu::bma(f5, data = hsb2, epsilon = 1, bounds = b5, seed = 1)
  info <- dpmu:::dpmu_release_information(r)
  expect_equal(sd(d), info$noise_sd, tolerance = 4 * 0.046)
})

test_that("a release that carries almost no information says so; an informative one does not", {
  # at epsilon = 1 (n = 200, scores in [0, 100]) the noise SD of a cross product is ~2e5, the data's
  # cross products ~1e4: the line appears exactly when every |released| / SD < 2 (most seeds)
  flagged <- vapply(1:10, function(s) {
    weak <- dpmu::bma(f5, data = hsb2, epsilon = 1, bounds = b5, seed = s)
    shown <- any(grepl("LITTLE INFORMATION", capture.output(print(weak))))
    expect_equal(shown, max(dpmu:::dpmu_release_information(weak)$z) < 2)
    shown
  }, TRUE)
  expect_gt(sum(flagged), 5)
  strong <- dpmu::bma(f5, data = hsb2, epsilon = 50, bounds = b5, seed = 1)
  out <- capture.output(print(strong))
  expect_false(any(grepl("LITTLE INFORMATION", out)))
  expect_true(any(grepl("^Signal:", out)))
  # the judgement uses the release and public settings only: the same for a fit without data
  expect_null(strong$x)
  expect_true(dpmu:::dpmu_release_information(strong)$informative)
  # a non-private fit has no such line
  expect_false(any(grepl("LITTLE INFORMATION|^Signal:", capture.output(print(dpmu::bma(f5, data = hsb2))))))
})

test_that("plan_bma and plan_test print a three-line verdict first and the table on request", {
  p <- plan_bma(n = 2000, epsilon = 1, p = 3, true_model_size = 1, simulations = 10, seed = 7, uncertainty = "plug-in")
  out <- capture.output(print(p))
  expect_true(any(grepl("^Expected P\\(true model \\| release\\): plug-in", out)))
  expect_true(any(grepl("^95 % coverage of the 1 active coefficient", out)))
  expect_true(any(grepl("^Recommendation:", out)))
  expect_lt(length(out), 12)
  expect_gt(length(capture.output(print(p, table = TRUE))), nrow(p$summary))
  t <- plan_test(n = 200, epsilon = 1, p = 1, p0 = 2, groups = c(5, 10), simulations = 300, seed = 1)
  out <- capture.output(print(t))
  expect_true(any(grepl("^Recommended: groups = ", out)))
  expect_true(any(grepl("^Expected error of the released statistic", out)))
  expect_true(any(grepl("^Verdict:", out)))
  expect_gt(length(capture.output(print(t, table = TRUE))), length(out))
})
