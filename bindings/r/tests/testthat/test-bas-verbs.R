# The verbs BAS users reach for on a fit: update (re-analysis, no privacy cost), predict with
# standard errors and intervals, fitted, plot(coef(fit)), plot(fit, which), summary's BF row.
predictors <- c("female", "write", "math", "science", "socst")
f5 <- read ~ female + write + math + science + socst
# BAS (not in Debian) is an optional side-by-side reference, installed into a private library by
# those who compare: it is reached through a variable, not declared in DESCRIPTION, so that
# R CMD check --as-cran on an offline machine neither needs it nor looks it up on CRAN.
bas_package <- "BAS"
have_bas <- function() {
  if (!requireNamespace(bas_package, quietly = TRUE)) skip("BAS is not installed (side-by-side checks only)")
}
bas <- function(name) getExportedValue(bas_package, name)

test_that("update of a seeded release equals the CLI's release with the new prior and the same seed", {
  rel <- dpmu::bma(f5, data = hsb2, prior = "zellner-siow", uncertainty = "plug-in", epsilon = 5,
                   bounds = c(0, 100), seed = 11)
  up <- update(rel, prior = "bic")
  args <- c("bma", "--data", hsb2_csv(), "--response", "read", "--predictors", paste(predictors, collapse = ","),
            "--prior", "bic", "--uncertainty", "plug-in", "--epsilon", "5", "--bounds", "0,100", "--seed", "11")
  cli <- cli_json(args)
  expect_equal(up$pip, named(cli$posterior_inclusion_probabilities, predictors), tolerance = 1e-12)
  expect_equal(up$posterior$mean, named(cli$posterior_means, predictors), tolerance = 1e-12)
  expect_identical(up$release, rel$release)    # the same released matrix, ridge and scales
  expect_identical(up$privacy, rel$privacy)
  expect_equal(up$settings$prior, "bic")
  expect_equal(up$call$prior, "bic")
  # and a fresh seeded fit with the new prior (noise and ridge streams do not depend on the prior)
  fresh <- dpmu::bma(f5, data = hsb2, prior = "bic", uncertainty = "plug-in", epsilon = 5, bounds = c(0, 100), seed = 11)
  expect_equal(up$pip, fresh$pip, tolerance = 1e-14)
  expect_equal(up$models, fresh$models, tolerance = 1e-14)
  # back to the original prior gives the original analysis
  back <- update(up, prior = "zellner-siow")
  expect_equal(back$pip, rel$pip, tolerance = 1e-14)
})

test_that("update of a real release charges nothing: the ledger file and the privacy record are unchanged", {
  ledger <- tempfile(fileext = ".ledger")
  dpmu::ledger_init(ledger, budget = "10")
  rel <- dpmu::bma(read ~ female + write + math, data = hsb2, prior = "zellner-siow", epsilon = 1,
                   bounds = c(0, 100), ledger = ledger)
  expect_true(rel$private)
  before <- readBin(ledger, "raw", file.info(ledger)$size)
  up <- update(rel, prior = "bic", model_prior = "uniform", credible_level = 0.9, top_models = 8,
               uncertainty = "plug-in")
  expect_identical(readBin(ledger, "raw", file.info(ledger)$size), before)
  expect_identical(up$ledger, rel$ledger)
  expect_identical(up$privacy, rel$privacy)
  expect_true(up$private)
  expect_equal(up$posterior$credible_level, 0.9)
  expect_equal(nrow(up$models), 8)
  expect_equal(up$settings$model_prior, "uniform")
  expect_null(up$x)
  expect_null(up$y)
  # privacy settings and data cannot change through update
  expect_error(update(rel, epsilon = 2), "call dpmu::bma again")
  expect_error(update(rel, data = hsb2), "call dpmu::bma again")
})

test_that("update of a non-private fit equals a fresh fit with the new settings", {
  fit <- dpmu::bma(f5, data = hsb2, prior = "zellner-siow")
  for (pr in list(list(prior = "bic"), list(prior = "g-prior", g = 50), list(prior = "hyper-g", a = 4))) {
    up <- do.call(update, c(list(fit), pr))
    fresh <- do.call(dpmu::bma, c(list(f5, data = hsb2), pr))
    expect_equal(up$pip, fresh$pip, tolerance = 1e-14)
    expect_equal(coef(up)$mean, coef(fresh)$mean, tolerance = 1e-14)
    expect_equal(coef(up)$sd, coef(fresh)$sd, tolerance = 1e-14)
    expect_equal(unclass(confint(up)), unclass(confint(fresh)), tolerance = 1e-12)
    expect_equal(predict(up, hsb2[1:4, ])$fit, predict(fresh, hsb2[1:4, ])$fit, tolerance = 1e-12)
  }
  up <- update(fit, always_include = "math", newprior = "bic")
  fresh <- dpmu::bma(f5, data = hsb2, prior = "bic", always_include = "math")
  expect_equal(up$pip, fresh$pip, tolerance = 1e-14)
  expect_equal(unname(up$pip["math"]), 1)
})

test_that("a saved and reloaded fit gives a clear error", {
  fit <- dpmu::bma(read ~ female + math, data = hsb2, prior = "bic")
  file <- tempfile(fileext = ".rds")
  saveRDS(fit, file)
  old <- readRDS(file)
  expect_error(update(old, prior = "zellner-siow"), "saved and reloaded")
  expect_error(predict(old, hsb2[1:2, ], se.fit = TRUE), "saved and reloaded")
  expect_error(plot(coef(old), ask = FALSE), "saved and reloaded")
})

test_that("summary's BF row: against the listed model with the largest marginal likelihood (swiss, JZS: BAS)", {
  fit <- dpmu::bma(Fertility ~ ., data = swiss, prior = "zellner-siow")
  s <- summary(fit)
  expect_equal(round(unname(s["BF", 2:4]), 3), c(0.291, 1, 0.563))
  # a model prior that makes the highest posterior model differ from the largest-marginal one
  f <- dpmu::bma(Fertility ~ ., data = swiss, prior = "bic", model_prior = "bernoulli:0.95")
  s <- summary(f)
  lm <- f$models$log_marginal[1:5]
  expect_false(which.max(lm) == 1)
  expect_equal(unname(s["BF", 2:6]), exp(lm - max(lm)), tolerance = 1e-14)
  expect_equal(max(s["BF", 2:6]), 1)
  expect_lt(s["BF", 2], 1)
})

test_that("summary's BF row equals BAS's (swiss, JZS)", {
  have_bas()
  fit <- dpmu::bma(Fertility ~ ., data = swiss, prior = "zellner-siow")
  b <- bas("bas.lm")(Fertility ~ ., data = swiss, prior = "JZS", modelprior = bas("beta.binomial")(1, 1))
  expect_equal(unname(summary(fit)["BF", 2:6]), unname(summary(b)["BF", 2:6]), tolerance = 1e-5)
})

# The g-prior with fixed g and one model (always_include every predictor): the posterior of the mean
# at x is exactly ybar + s b'(x - xbar) + t_{n-1} * sqrt(SSY (1 - s R2)/(n - 1) (1/n + s h)),
# s = g/(1+g), h = (x - xbar)'(Xc'Xc)^{-1}(x - xbar) (b, R2 from lm).
test_that("predict se.fit / intervals equal the closed form of a one-model g-prior fit", {
  g <- 30
  fit <- dpmu::bma(read ~ write + math, data = hsb2, prior = "g-prior", g = g, always_include = c("write", "math"))
  expect_equal(nrow(fit$models), 1)
  n <- nrow(hsb2)
  s <- g / (1 + g)
  ols <- lm(read ~ write + math, data = hsb2)
  r2 <- summary(ols)$r.squared
  ssy <- sum((hsb2$read - mean(hsb2$read))^2)
  X <- as.matrix(hsb2[, c("write", "math")])
  xbar <- colMeans(X)
  Xc <- sweep(X, 2, xbar)
  new <- data.frame(write = c(30, 52, 70), math = c(35, 50, 75))
  xn <- sweep(as.matrix(new), 2, xbar)
  h <- rowSums((xn %*% solve(crossprod(Xc))) * xn)
  mean_cf <- mean(hsb2$read) + s * drop(xn %*% coef(ols)[-1])
  mse <- ssy * (1 - s * r2) / (n - 1)
  se_fit <- sqrt(mse * (1 / n + s * h))
  se_pred <- sqrt(mse * (1 + 1 / n + s * h))
  for (est in c("bma", "hpm")) {
    p <- predict(fit, new, se.fit = TRUE, estimator = est)
    expect_equal(unname(p$fit), mean_cf, tolerance = 1e-10)
    # bma: BAS's se.bma.fit / se.bma.pred (se.fit / se.pred are per model: one model here)
    expect_equal(unname(if (est == "bma") p$se.bma.fit else p$se.fit), se_fit, tolerance = 1e-10)
    expect_equal(unname(if (est == "bma") p$se.bma.pred else p$se.pred), se_pred, tolerance = 1e-10)
    if (est == "bma") expect_equal(as.vector(p$se.fit), se_fit, tolerance = 1e-10)
    tq <- qt(0.95, n - 1)
    ci <- predict(fit, new, interval = "confidence", level = 0.9, estimator = est)$interval
    expect_equal(unname(ci[, "lwr"]), mean_cf - tq * se_fit, tolerance = 1e-9)
    expect_equal(unname(ci[, "upr"]), mean_cf + tq * se_fit, tolerance = 1e-9)
    pi <- predict(fit, new, interval = "prediction", level = 0.9, estimator = est)$interval
    expect_equal(unname(pi[, "upr"]), mean_cf + tq * se_pred, tolerance = 1e-9)
  }
  # the default (no se.fit, no interval): $fit, the named vector of means (as BAS)
  expect_equal(unname(predict(fit, new)$fit), mean_cf, tolerance = 1e-10)
})

test_that("predict with se.fit equals BAS's predict.bas (se.bma.fit / se.bma.pred; HPM se.fit / se.pred)", {
  have_bas()
  for (pr in list(list("g-prior", "g-prior"), list("bic", "BIC"), list("zellner-siow", "JZS"))) {
    fit <- dpmu::bma(Fertility ~ ., data = swiss, prior = pr[[1]])
    b <- bas("bas.lm")(Fertility ~ ., data = swiss, prior = pr[[2]], alpha = if (pr[[2]] == "JZS") 1 else nrow(swiss),
                     modelprior = bas("beta.binomial")(1, 1))
    p <- predict(fit, swiss[1:10, ], se.fit = TRUE)
    pb <- predict(b, swiss[1:10, ], se.fit = TRUE)
    expect_equal(unname(p$fit), as.vector(pb$fit), tolerance = 1e-6, label = pr[[1]])
    expect_equal(unname(p$se.bma.fit), as.vector(pb$se.bma.fit), tolerance = 1e-6, label = pr[[1]])
    expect_equal(unname(p$se.bma.pred), as.vector(pb$se.bma.pred), tolerance = 1e-6, label = pr[[1]])
    expect_equal(unname(p$se.fit), unname(pb$se.fit), tolerance = 1e-6, label = pr[[1]])  # per model
    h <- predict(fit, swiss[1:10, ], se.fit = TRUE, estimator = "hpm")
    hb <- predict(b, swiss[1:10, ], se.fit = TRUE, estimator = "HPM")
    expect_equal(unname(h$se.fit), as.vector(hb$se.fit), tolerance = 1e-6, label = pr[[1]])
    expect_equal(unname(h$se.pred), as.vector(hb$se.pred), tolerance = 1e-6, label = pr[[1]])
    expect_equal(h$df, hb$df, label = pr[[1]])
  }
})

test_that("BMA intervals are the equal-tailed intervals of the mixture of the models' t distributions", {
  fit <- dpmu::bma(f5, data = hsb2, prior = "bic")
  p <- predict(fit, hsb2[1:3, ], interval = "prediction", level = 0.8, se.fit = TRUE)
  expect_equal(p$models, 32)
  expect_true(all(p$interval[, "lwr"] < p$interval[, "fit"] & p$interval[, "fit"] < p$interval[, "upr"]))
  # Monte Carlo check of the mixture's coverage of its own interval (10^5 draws, 5 SE ~ 0.007)
  set.seed(1)
  m <- fit$models
  draws <- 1e5
  k <- sample(nrow(m), draws, replace = TRUE, prob = m$posterior_probability)
  x1 <- hsb2[1, , drop = FALSE]
  per <- vapply(seq_len(nrow(m)), function(i) {
    cols <- predictors[fit$which[i, ]]
    u <- dpmu::bma(f5, data = hsb2, prior = "bic", always_include = cols, model_prior = "bernoulli:0.000001")
    q <- predict(u, x1, se.fit = TRUE, estimator = "hpm")
    c(q$fit, q$se.pred, q$df, identical(u$posterior$highest_posterior_model, cols))
  }, numeric(4))
  expect_true(all(per[4, ] == 1))
  y <- per[1, k] + per[2, k] * rt(draws, per[3, k])
  expect_equal(mean(y >= p$interval[1, "lwr"] & y <= p$interval[1, "upr"]), 0.8, tolerance = 0.007 / 0.8)
  expect_error(predict(fit, hsb2[1:3, ], interval = "prediction", level = 1), "level")
})

test_that("fitted: a non-private fit's fitted values; a release has none and keeps no data", {
  fit <- dpmu::bma(f5, data = hsb2, prior = "bic")
  expect_equal(fitted(fit), predict(fit, hsb2)$fit, tolerance = 1e-14)
  expect_equal(unname(fitted(fit, estimator = "hpm")),
               unname(fitted(lm(stats::reformulate(fit$posterior$highest_posterior_model, "read"), data = hsb2))),
               tolerance = 1e-10)
  rel <- dpmu::bma(f5, data = hsb2, prior = "bic", uncertainty = "plug-in", epsilon = 5, bounds = c(0, 100), seed = 3)
  expect_null(rel$x)
  expect_null(rel$y)
  expect_error(fitted(rel), "keeps no data")
  expect_error(predict(rel, hsb2, se.fit = TRUE), "release publishes no means")
  priv <- dpmu::bma(f5, data = hsb2, prior = "bic", uncertainty = "plug-in", epsilon = 5, bounds = c(0, 100))
  expect_null(priv$x)
  expect_null(priv$y)
})

test_that("plot(coef(fit)): densities integrate to the PIP, with the posterior mean and exact SD", {
  for (fit in list(dpmu::bma(f5, data = hsb2, prior = "zellner-siow"), dpmu::bma(f5, data = hsb2, prior = "bic"),
                   dpmu::bma(f5, data = hsb2, prior = "g-prior", uncertainty = "plug-in", epsilon = 5,
                             bounds = c(0, 100), seed = 2))) {
    cf <- coef(fit)
    png <- tempfile(fileext = ".png")
    grDevices::png(png)
    d <- suppressMessages(plot(cf, ask = FALSE, nsteps = 20001))
    grDevices::dev.off()
    expect_true(file.exists(png))
    for (nm in names(d)) {
      x <- d[[nm]]$x
      h <- x[2] - x[1]
      mass <- sum(d[[nm]]$density) * h
      mu <- sum(x * d[[nm]]$density) * h
      v <- sum(x^2 * d[[nm]]$density) * h - mu^2
      expect_equal(mass, cf[nm, "pip"], tolerance = 1e-6, label = nm)
      # the grid stops at the components' 1e-6 / 1 - 1e-6 quantiles: the t tails beyond are cut off
      expect_lt(abs(mu - cf[nm, "mean"]), 1e-4 * cf[nm, "sd"])
      expect_equal(sqrt(v), cf[nm, "sd"], tolerance = 1e-3, label = nm)
      expect_equal(attr(d[[nm]], "probability_zero"), 1 - cf[nm, "pip"])
    }
    expect_equal(is.na(cf$mean[1]), !("(Intercept)" %in% names(d)))
  }
})

test_that("plot(coef(release)) of a noise-aware release is refused (a sample, not a t mixture), plug-in drawn", {
  rel <- dpmu::bma(f5, data = hsb2, epsilon = 5, bounds = c(0, 100), seed = 2, noise_aware_draws = 100)
  expect_equal(rel$posterior$uncertainty, "noise-aware")
  png <- tempfile(fileext = ".png")
  grDevices::png(png)
  on.exit(grDevices::dev.off())
  # before: the plug-in mixture's densities under the noise-aware summary's name (mass != PIP)
  expect_error(plot(coef(rel), ask = FALSE), "update(fit, uncertainty = \"plug-in\")", fixed = TRUE)
  up <- update(rel, uncertainty = "plug-in")
  d <- suppressMessages(plot(coef(up), ask = FALSE, nsteps = 2001))
  expect_equal(sum(d$write$density) * (d$write$x[2] - d$write$x[1]), coef(up)["write", "pip"], tolerance = 1e-4)
})

test_that("plot(fit, which = 1:4) draws BAS's diagnostics; which = 1 needs the data; image(fit) stays", {
  fit <- dpmu::bma(f5, data = hsb2, prior = "bic")
  rel <- dpmu::bma(f5, data = hsb2, prior = "bic", uncertainty = "plug-in", epsilon = 5, bounds = c(0, 100), seed = 3)
  png <- tempfile(fileext = ".png")
  grDevices::png(png)
  expect_invisible(plot(fit, which = 1:4, ask = FALSE))
  expect_invisible(plot(rel, ask = FALSE))
  expect_error(plot(rel, which = 1, ask = FALSE), "needs the data")
  z <- image(fit)
  grDevices::dev.off()
  expect_equal(dim(z), c(nrow(fit$models), length(predictors) + 1))  # the intercept column first, as image.bas
})

test_that("force.heredity keeps a factor's columns together (BAS's force.heredity as renormalisation)", {
  d <- hsb2
  d$prog <- factor(d$prog)
  f <- read ~ prog + write + math
  all <- dpmu::bma(f, data = d, prior = "bic", top_models = 16)
  kept <- dpmu::bma(f, data = d, prior = "bic", top_models = 16, force.heredity = TRUE)
  expect_equal(unname(kept$pip["prog2"]), unname(kept$pip["prog3"]), tolerance = 1e-12)
  # the listed models hold both prog columns or neither
  w <- kept$which[, c("prog2", "prog3")]
  expect_true(all(w[, 1] == w[, 2]))
  # the reference: the ungrouped posterior with the inadmissible models removed, renormalised
  ok <- all$which[, "prog2"] == all$which[, "prog3"]
  expect_equal(sum(ok), nrow(kept$models))
  ref <- all$models$posterior_probability[ok] / sum(all$models$posterior_probability[ok])
  expect_equal(kept$models$posterior_probability, ref, tolerance = 1e-10)
  expect_error(dpmu::bma(f, data = d, force.heredity = NA), "force.heredity must be TRUE or FALSE")
})
