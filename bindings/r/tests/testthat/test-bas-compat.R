# BAS's names mean BAS's things (docs/decisions.md "The R package speaks BAS"), one vocabulary across
# bma, test, plan_bma and plan_test, and the fixes for BAS users: plan_bma's bounds matrix, update's
# printout and $call. The side-by-side checks with BAS skip when BAS is not installed (it is not in
# Debian; scripts/install-bas.sh installs it into a private library).
bas_package <- "BAS"
have_bas <- function() {
  if (!requireNamespace(bas_package, quietly = TRUE)) skip("BAS is not installed (side-by-side checks only)")
}
bas <- function(name) getExportedValue(bas_package, name)
have_mass <- function() if (!requireNamespace("MASS", quietly = TRUE)) skip("MASS is not installed (UScrime)")
f5 <- read ~ female + write + math + science + socst

test_that("plan_bma takes the 2 x (p + 1) bounds matrix bma takes, and names the orientation otherwise", {
  # Failed before the fix: plan_bma transposed the matrix ("bounds for column 1: need finite l < u").
  b <- cbind(c(-3, 3), c(-3, 3), c(-3, 3), c(-10, 10))
  m <- plan_bma(n = 500, epsilon = 2, coefficients = c(0.8, 0, 0.5), sigma = 1, bounds = b, simulations = 10,
                seed = 1, uncertainty = "plug-in")
  v <- plan_bma(n = 500, epsilon = 2, coefficients = c(0.8, 0, 0.5), sigma = 1, bounds = as.vector(b),
                simulations = 10, seed = 1, uncertainty = "plug-in")
  expect_identical(m$summary, v$summary)
  expect_equal(m$settings$bounds, list(c(-3, 3), c(-3, 3), c(-3, 3), c(-10, 10)))
  expect_error(plan_bma(n = 500, epsilon = 2, coefficients = c(0.8, 0, 0.5), sigma = 1, bounds = t(b)),
               "2 x \\(p \\+ 1\\).*row 1 the lower.*transpose")
  # bma reads the same matrix, and refuses the transposed one before any work
  bm <- cbind(c(0, 1), c(0, 100), c(0, 100))
  r1 <- dpmu::bma(read ~ female + math, data = hsb2, epsilon = 5, bounds = bm, seed = 2)
  r2 <- dpmu::bma(read ~ female + math, data = hsb2, epsilon = 5, bounds = c(0, 1, 0, 100, 0, 100), seed = 2)
  expect_identical(r1$pip, r2$pip)
  expect_error(dpmu::bma(read ~ female + math, data = hsb2, epsilon = 5, bounds = t(bm), seed = 2), "2 x 3")
})

test_that("bma, test, plan_bma and plan_test have the same default priors", {
  d <- function(f, a) eval(formals(f)[[a]])
  expect_equal(d(dpmu::bma, "prior"), "zellner-siow")
  expect_equal(d(dpmu::test, "prior"), d(dpmu::bma, "prior"))
  expect_equal(d(dpmu::plan_bma, "prior"), d(dpmu::bma, "prior"))
  expect_equal(d(dpmu::plan_test, "prior"), d(dpmu::bma, "prior"))
  expect_equal(d(dpmu::plan_bma, "model_prior"), d(dpmu::bma, "model_prior"))
})

test_that("BAS's prior spellings are aliases; an unknown prior's error lists every valid value", {
  for (pr in list(c("JZS", "zellner-siow"), c("ZS-null", "zellner-siow-laplace"), c("BIC", "bic"),
                  c("AIC", "aic"), c("hyper-g-n", "hyper-g-n"), c("g-prior", "g-prior"))) {
    a <- dpmu::bma(f5, data = hsb2, prior = pr[1])
    b <- dpmu::bma(f5, data = hsb2, prior = pr[2])
    expect_identical(a$pip, b$pip, label = pr[1])
    expect_equal(a$settings$prior, pr[2], label = pr[1])
  }
  expect_identical(dpmu::test(math ~ science, math ~ science + read, data = hsb2, prior = "JZS")$log_statistic,
                   dpmu::test(math ~ science, math ~ science + read, data = hsb2, prior = "zellner-siow")$log_statistic)
  e <- tryCatch(dpmu::bma(f5, data = hsb2, prior = "zellner"), error = conditionMessage)
  for (name in c("g-prior", "zellner-siow", "zellner-siow-laplace", "hyper-g", "hyper-g-n", "robust", "bic", "aic",
                 "lr", "JZS")) {
    expect_true(grepl(name, e, fixed = TRUE), label = name)
  }
  expect_error(dpmu::bma(f5, data = hsb2, prior = "EB-local"), "not implemented")
})

test_that("modelprior objects and include.always (BAS's names) equal dpmu's spellings", {
  pairs <- list(list(uniform(), "uniform"), list(beta.binomial(2, 3), "beta-binomial(2,3)"),
                list(Bernoulli(0.3), "bernoulli(0.3)"))
  for (pr in pairs) {
    a <- dpmu::bma(f5, data = hsb2, prior = "bic", modelprior = pr[[1]])
    b <- dpmu::bma(f5, data = hsb2, prior = "bic", model_prior = pr[[2]])
    expect_identical(a$pip, b$pip, label = pr[[2]])
    c <- dpmu::bma(f5, data = hsb2, prior = "bic", model_prior = pr[[1]])
    expect_identical(c$pip, b$pip, label = pr[[2]])
  }
  expect_error(dpmu::bma(f5, data = hsb2, model_prior = "uniform", modelprior = uniform()), "not both")
  expect_error(dpmu::bma(f5, data = hsb2, modelprior = structure(list(family = "Trunc-Poisson",
                                                                       hyper.parameters = c(1, 2)), class = "prior")),
               "not implemented")
  a <- dpmu::bma(f5, data = hsb2, prior = "bic", include.always = ~ math + female)
  b <- dpmu::bma(f5, data = hsb2, prior = "bic", always_include = c("math", "female"))
  expect_identical(a$pip, b$pip)
  expect_equal(unname(a$pip[c("math", "female")]), c(1, 1))
  expect_error(dpmu::bma(f5, data = hsb2, include.always = ~ prog), "not a term")
  # a factor's term includes all its columns
  d <- hsb2
  d$prog <- factor(d$prog)
  f <- dpmu::bma(read ~ prog + math, data = d, prior = "bic", include.always = ~ prog)
  expect_equal(unname(f$pip[c("prog2", "prog3")]), c(1, 1))
})

test_that("update of a release: no stale ledger line, and a $call that is safe to re-run", {
  ledger <- tempfile(fileext = ".ledger")
  dpmu::ledger_init(ledger, budget = "10")
  rel <- dpmu::bma(read ~ female + write + math, data = hsb2, epsilon = 1, bounds = c(0, 100), ledger = ledger)
  out <- capture.output(print(rel))
  expect_true(any(grepl("Charged to ledger", out)))
  # the release is noise-aware (the default), which needs a g prior: BIC is the paper's analysis
  expect_error(update(rel, prior = "bic"), "uncertainty = 'plug-in'")
  up <- update(rel, prior = "bic", uncertainty = "plug-in")
  out <- capture.output(print(up))
  expect_false(any(grepl("Charged to ledger", out)))   # failed before: the release's line, as if charged again
  expect_true(any(grepl("nothing charged now", out)))
  expect_equal(up$call[[1]], quote(update))
  expect_equal(up$call[[2]], quote(rel))
  before <- readBin(ledger, "raw", file.info(ledger)$size)
  again <- eval(up$call)                                 # failed before: re-ran bma, a new release
  expect_identical(readBin(ledger, "raw", file.info(ledger)$size), before)
  expect_identical(again$pip, up$pip)
  # a non-private fit keeps the bma call with the new settings
  fit <- dpmu::bma(f5, data = hsb2)
  expect_equal(update(fit, prior = "bic")$call$prior, "bic")
})

test_that("confint(fit, level =) and confint(coef(fit)) re-analyse without refitting", {
  fit <- dpmu::bma(f5, data = hsb2, prior = "bic")
  fresh <- dpmu::bma(f5, data = hsb2, prior = "bic", credible_level = 0.9)
  expect_equal(unclass(confint(fit, level = 0.9)), unclass(confint(fresh)), tolerance = 1e-12)
  ci <- confint(coef(fit))
  expect_equal(unname(ci[, 1:2]), unname(unclass(confint(fit))), tolerance = 1e-12)
  expect_equal(unname(ci[, "beta"]), coef(fit)$mean)
  expect_equal(unname(confint(coef(fit), level = 0.9)[, 1:2]), unname(unclass(confint(fresh))), tolerance = 1e-12)
  expect_error(confint(fit, level = 1.5), "level")
  # a release: post-processing, the same release
  rel <- dpmu::bma(f5, data = hsb2, epsilon = 5, bounds = c(0, 100), seed = 3)
  expect_equal(unclass(confint(rel, level = 0.8)),
               unclass(confint(update(rel, credible_level = 0.8))), tolerance = 1e-12)
})

test_that("coef() says which SD it gives", {
  fit <- dpmu::bma(f5, data = hsb2, prior = "g-prior")
  expect_true(any(grepl("exact posterior SD", capture.output(print(coef(fit))))))
  expect_true(any(grepl("BAS's coef\\(\\) SD", capture.output(print(coef(fit, sd = "bas"))))))
})

test_that("predict(se.fit = TRUE) has BAS's structure and averages over every model (p = 15)", {
  # 15 columns, 2^15 models: before, the SEs came from the 4096 most probable models only.
  d <- mtcars
  for (v in c("mpg", "disp", "hp", "drat", "wt")) d[[paste0(v, "2")]] <- (d[[v]] - mean(d[[v]]))^2
  f <- qsec ~ mpg + cyl + disp + hp + drat + wt + vs + am + gear + carb + mpg2 + disp2 + hp2 + drat2 + wt2
  fit <- dpmu::bma(f, data = d, prior = "g-prior", model_prior = uniform())
  p <- predict(fit, d[1:4, ], se.fit = TRUE)
  expect_s3_class(p, "pred.dpmu_bma")
  expect_equal(nrow(p$Ypred), 2^15)
  expect_equal(dim(p$se.fit), c(2^15, 4))
  expect_equal(sum(p$postprobs), 1, tolerance = 1e-12)
  expect_equal(p$omitted_mass, 0)
  # the model average of the per-model means is the exact BMA mean, and se.bma.fit its BAS formula
  expect_equal(unname(colSums(p$postprobs * p$Ypred)), unname(p$fit), tolerance = 1e-10)
  spread <- sweep(p$Ypred, 2, p$fit)^2
  expect_equal(unname(sqrt(colSums(p$postprobs * (p$se.fit^2 + spread)))), unname(p$se.bma.fit), tolerance = 1e-10)
  expect_equal(unname(sqrt(colSums(p$postprobs * (p$se.pred^2 + spread)))), unname(p$se.bma.pred), tolerance = 1e-10)
  # top = k: the k most probable models, renormalised (BAS's predict(top = k))
  t5 <- predict(fit, d[1:4, ], se.fit = TRUE, top = 5)
  expect_equal(nrow(t5$Ypred), 5)
  expect_equal(unname(t5$fit), unname(colSums(t5$postprobs * t5$Ypred)), tolerance = 1e-12)
  # the plain call: $fit, as BAS
  expect_equal(predict(fit, d[1:4, ])$fit, p$fit, tolerance = 1e-12)
})

test_that("confint(predict(...)) and variable.names() without refitting", {
  fit <- dpmu::bma(f5, data = hsb2, prior = "bic")
  p <- predict(fit, hsb2[1:3, ], se.fit = TRUE)
  ci <- confint(p, level = 0.9)
  ref <- predict(fit, hsb2[1:3, ], interval = "prediction", level = 0.9)$interval
  expect_equal(unname(ci[, 1:2]), unname(ref[, 2:3]), tolerance = 1e-12)
  cm <- confint(p, parm = "mean", level = 0.9)
  refm <- predict(fit, hsb2[1:3, ], interval = "confidence", level = 0.9)$interval
  expect_equal(unname(cm[, 1:2]), unname(refm[, 2:3]), tolerance = 1e-12)
  h <- predict(fit, hsb2[1:3, ], estimator = "hpm", se.fit = TRUE)
  expect_equal(variable.names(h), c("Intercept", fit$posterior$highest_posterior_model))
  expect_equal(variable.names(fit), c("Intercept", names(fit$pip)))
  expect_equal(variable.names(fit, "mpm"), c("Intercept", fit$posterior$median_probability_model))
  expect_error(diagnostics(fit), "enumerated every model")
})

test_that("image() draws BAS's orientation: columns across (the intercept first), models down", {
  fit <- dpmu::bma(f5, data = hsb2, prior = "bic")
  file <- tempfile(fileext = ".pdf")
  grDevices::pdf(file)
  z <- image(fit, top.models = 6)
  grDevices::dev.off()
  expect_equal(dim(z), c(6, 6))
  expect_equal(colnames(z)[1], "Intercept")
  expect_true(all(z[, 1] > 0))                          # the intercept is in every model
  expect_equal(z[, -1] > 0, unname(fit$which[1:6, ]), ignore_attr = TRUE)
  expect_equal(unname(z[1, 1] - z[6, 1]),
               fit$models$log_posterior_probability[1] - fit$models$log_posterior_probability[6], tolerance = 1e-12)
})

# Side by side with the vendored BAS (held-out data sets: swiss, UScrime, warpbreaks).
test_that("BAS: se.bma.fit at p = 15 (UScrime), per-model se.fit, spellings, include.always, uniform()", {
  have_bas()
  have_mass()
  d <- MASS::UScrime
  d[, -2] <- log(d[, -2])
  fit <- dpmu::bma(y ~ ., data = d, prior = "g-prior", modelprior = uniform())
  b <- bas("bas.lm")(y ~ ., data = d, prior = "g-prior", alpha = nrow(d), modelprior = bas("uniform")())
  p <- predict(fit, d[1:6, ], se.fit = TRUE)
  pb <- predict(b, d[1:6, ], se.fit = TRUE)
  expect_equal(unname(p$fit), as.vector(pb$fit), tolerance = 1e-6)
  expect_equal(unname(p$se.bma.fit), as.vector(pb$se.bma.fit), tolerance = 1e-6)
  expect_equal(unname(p$se.bma.pred), as.vector(pb$se.bma.pred), tolerance = 1e-6)
  # per model, most probable first in both (BAS's postprobs renormalised over the models used)
  expect_equal(p$postprobs[1:50], pb$postprobs[1:50], tolerance = 1e-8)
  expect_equal(unname(p$se.fit[1:50, ]), unname(pb$se.fit[1:50, ]), tolerance = 1e-6)
  expect_equal(unname(p$Ypred[1:50, ]), unname(pb$Ypred[1:50, ]), tolerance = 1e-6)
  # BAS's spellings and objects, through dpmu
  s <- dpmu::bma(Fertility ~ ., data = swiss, prior = "ZS-null", modelprior = beta.binomial(1, 1),
                 include.always = ~ Education)
  sb <- bas("bas.lm")(Fertility ~ ., data = swiss, prior = "ZS-null", modelprior = bas("beta.binomial")(1, 1),
                     include.always = ~ Education)
  expect_equal(unname(s$pip), unname(sb$probne0[-1]), tolerance = 1e-8)
  # BAS's model-prior object given to dpmu directly
  u <- dpmu::bma(Fertility ~ ., data = swiss, prior = "BIC", modelprior = bas("uniform")())
  ub <- bas("bas.lm")(Fertility ~ ., data = swiss, prior = "BIC", modelprior = bas("uniform")())
  expect_equal(unname(u$pip), unname(ub$probne0[-1]), tolerance = 1e-8)
  expect_true(is.matrix(confint(coef(u))))
})

test_that("force.heredity forces an interaction's main effects, as BAS does (warpbreaks wool * tension)", {
  # Failed before the fix: dpmu kept a factor's dummies together but allowed wool:tension without
  # wool or tension, so its PIPs differed from BAS's.
  f <- breaks ~ wool * tension
  fit <- dpmu::bma(f, data = warpbreaks, prior = "bic", model_prior = "uniform", force.heredity = TRUE,
                   top_models = 64)
  cols <- colnames(fit$which)
  inter <- grep(":", cols, value = TRUE)
  main <- setdiff(cols, inter)
  expect_length(inter, 2)
  has_inter <- rowSums(fit$which[, inter, drop = FALSE]) > 0
  expect_true(any(has_inter))
  expect_true(all(rowSums(fit$which[has_inter, main, drop = FALSE]) == length(main)))
  expect_true(all(fit$pip[inter] <= min(fit$pip[main]) + 1e-12))
  # 5 admissible models of 32: {}, {wool}, {tension}, {wool, tension}, everything
  expect_equal(nrow(fit$models), 5)
  have_bas()
  b <- bas("bas.lm")(f, data = warpbreaks, prior = "BIC", modelprior = bas("uniform")(), force.heredity = TRUE)
  expect_equal(unname(fit$pip), unname(b$probne0[-1]), tolerance = 1e-8)
})
