predictors <- c("female", "write", "math", "science", "socst")

test_that("the package's hsb2 is experiments/data/hsb2.csv", {
  expect_equal(hsb2, utils::read.csv(hsb2_csv()))
})

test_that("non-private bma equals dpmu bma --non-private to 1e-10 (every prior)", {
  for (prior in c("bic", "zellner-siow", "g-prior", "hyper-g", "robust", "aic")) {
    fit <- dpmu::bma(read ~ female + write + math + science + socst, data = hsb2, prior = prior)
    cli <- cli_json(c("bma", "--non-private", "--data", hsb2_csv(), "--response", "read", "--predictors",
                      paste(predictors, collapse = ","), "--prior", prior))
    expect_s3_class(fit, "dpmu_bma")
    expect_equal(names(fit$pip), predictors)
    expect_equal(fit$pip, named(cli$posterior_inclusion_probabilities, predictors), tolerance = 1e-10)
    expect_equal(fit$posterior$mean, named(cli$posterior_means, predictors), tolerance = 1e-10)
    top <- cli$non_private$top_models
    expect_equal(nrow(fit$models), length(top))
    expect_equal(fit$models$posterior_probability, vapply(top, function(m) m$posterior_probability, 0),
                 tolerance = 1e-10)
    expect_equal(fit$models$model[1], paste(unlist(top[[1]]$predictors), collapse = " + "))
    expect_null(fit$privacy)
    expect_false(fit$private)
  }
})

test_that("non-private bma agrees with BAS (tests/reference/bma_bas_reference.json) to its 1e-6", {
  ref <- dpmu:::parse_json(paste(readLines(repo_file("tests", "reference", "bma_bas_reference.json")), collapse = "\n"))
  prior_of <- function(c) switch(c$prior, "g-prior" = list("g-prior", g = c$alpha), "hyper-g" = list("hyper-g", a = c$alpha),
                                 JZS = list("zellner-siow"), "ZS-null" = list("zellner-siow-laplace"),
                                 BIC = list("bic"), AIC = list("aic"))
  for (c in ref$configurations) {
    d <- utils::read.csv(repo_file("experiments", "data", c$data))
    f <- stats::as.formula(paste(c$response, "~", paste(sprintf("`%s`", c$predictors), collapse = " + ")))
    pr <- prior_of(c)
    fit <- dpmu::bma(f, data = d, prior = pr[[1]], g = pr$g, a = if (is.null(pr$a)) 3 else pr$a,
                     model_prior = c$model_prior)
    expect_equal(unname(fit$pip), c$posterior_inclusion_probabilities, tolerance = 1e-6, label = c$name)
    expect_lt(max(abs(fit$posterior$mean - c$posterior_means) / pmax(1, abs(c$posterior_means))), 1e-6)
  }
})

test_that("factors expand to dummy columns and the model space is over columns", {
  d <- hsb2
  d$prog <- factor(d$prog, labels = c("general", "academic", "vocational"))
  fit <- dpmu::bma(read ~ prog + log(write) + math, data = d, prior = "bic")
  cols <- c("progacademic", "progvocational", "log(write)", "math")
  expect_equal(names(fit$pip), cols)
  # The same columns written out and given to the CLI.
  csv <- tempfile(fileext = ".csv")
  out <- data.frame(pa = as.numeric(d$prog == "academic"), pv = as.numeric(d$prog == "vocational"),
                    lw = log(d$write), math = d$math, read = d$read)
  # %.17g: the CSV holds every bit of log(write)
  writeLines(c("pa,pv,lw,math,read", apply(out, 1, function(r) paste(sprintf("%.17g", r), collapse = ","))), csv)
  cli <- cli_json(c("bma", "--non-private", "--data", csv, "--response", "read", "--predictors", "pa,pv,lw,math",
                    "--prior", "bic"))
  expect_equal(unname(fit$pip), unname(named(cli$posterior_inclusion_probabilities, c("pa", "pv", "lw", "math"))),
               tolerance = 1e-10)
  expect_equal(fit$models$size[1], length(unlist(cli$non_private$top_models[[1]]$predictors)))
})

test_that("rows with missing values are removed with a message (na.omit)", {
  d <- hsb2
  d$math[c(3, 50)] <- NA
  expect_message(fit <- dpmu::bma(read ~ female + write + math, data = d, prior = "bic"), "2 of 200 rows")
  ref <- dpmu::bma(read ~ female + write + math, data = hsb2[-c(3, 50), ], prior = "bic")
  expect_equal(fit$pip, ref$pip, tolerance = 1e-14)
  expect_equal(fit$n, 198)
  expect_error(dpmu::bma(read ~ female + write + math, data = d, na.action = na.fail), "missing")
})

test_that("bad input is an R error with dpmu's message", {
  expect_error(dpmu::bma(read ~ female, data = hsb2, prior = "nonsense"), "nonsense")
  expect_error(dpmu::bma(read ~ female - 1, data = hsb2), "intercept")
  expect_error(dpmu::bma(read ~ female, data = hsb2, epsilon = 1), "bounds")
  expect_error(dpmu::bma(read ~ female, data = hsb2, epsilon = 1, bounds = c(0, 100), seed = -1), "seed")
})

test_that("argument errors of round 3: formula strings, simulations, many levels, search bounds", {
  # A formula given as one string is a formula (was "subscript out of bounds").
  a <- dpmu::bma("read ~ female + write + math", data = hsb2)
  b <- dpmu::bma(read ~ female + write + math, data = hsb2)
  expect_equal(a$pip, b$pip)
  expect_error(dpmu::bma("read female", data = hsb2), "is not a formula")
  expect_error(dpmu::bma(c("read ~ math", "read ~ write"), data = hsb2), "one string")
  t1 <- dpmu::test("read ~ female", "read ~ female + math", data = hsb2)
  t2 <- dpmu::test(read ~ female, read ~ female + math, data = hsb2)
  expect_true(is.numeric(t1$log_statistic))
  expect_equal(t1$log_statistic, t2$log_statistic)
  # simulations is named (was vector::_M_default_append / std::bad_alloc).
  for (bad in list(-1, 1e12, 1.5, NA, "100")) {
    expect_error(dpmu::test(read ~ female, read ~ female + math, data = hsb2, simulations = bad),
                 "simulations must be a whole number between 100 and 1e8")
  }
  expect_error(dpmu::bma(read ~ math, data = hsb2, top_models = NA), "top_models must be a whole number")
  # A character column with 40 values: a warning with the number of dummy columns and what to do.
  d <- hsb2
  d$code <- sprintf("c%02d", (seq_len(nrow(d)) %% 40) + 1)
  expect_warning(fit <- dpmu::bma(read ~ math + code, data = d, mcmc_max_iterations = 2000, seed = 1),
                 "'code' is a factor or character column with 40 levels; it becomes 39 dummy predictors")
  expect_equal(fit$settings$search, "mcmc")
  expect_equal(fit$posterior$mcmc$max_iterations, 2000)
  expect_lte(fit$posterior$mcmc$iterations, 2000)
  # The bounds of the search are named.
  expect_error(dpmu::bma(read ~ math, data = hsb2, mcmc = TRUE, mcmc_max_models = 0), "mcmc_max_models must be")
  expect_error(dpmu::bma(read ~ math, data = hsb2, mcmc = TRUE, mcmc_max_models = 2^50), "GB in memory")
  # A factor response is refused (done before this round; kept here with the others).
  d$grade <- factor(ifelse(d$read > 50, "high", "low"))
  expect_error(dpmu::bma(grade ~ math, data = d), "response must be numeric")
})

dp_args <- c("bma", "--data", NA, "--response", "read", "--predictors", "female,write,math,science,socst",
             "--prior", "bic", "--uncertainty", "plug-in", "--epsilon", "5", "--bounds", "0,100", "--seed", "11")

test_that("a seeded DP release through R equals the CLI's with the same seed, and says it is not private", {
  fit <- dpmu::bma(read ~ female + write + math + science + socst, data = hsb2, prior = "bic", uncertainty = "plug-in", epsilon = 5,
                   bounds = c(0, 100), seed = 11)
  args <- dp_args
  args[3] <- hsb2_csv()
  cli <- cli_json(args)
  g <- fit$release$released_gram
  expect_equal(dimnames(g)[[1]], unlist(cli$released_gram_columns))
  expect_equal(lapply(seq_len(nrow(g)), function(i) unname(g[i, seq_len(i)])), cli$released_gram, tolerance = 0)
  expect_equal(fit$pip, named(cli$posterior_inclusion_probabilities, predictors), tolerance = 1e-12)
  expect_equal(fit$posterior$mean, named(cli$posterior_means, predictors), tolerance = 1e-12)
  expect_equal(fit$privacy, cli$privacy)
  expect_false(fit$private)
  expect_match(fit$private_reason, "seed")
  expect_equal(fit$release$clamped_entries, cli$diagnostics$clamped_entries)  # a diagnostic: seeded runs only
})

test_that("without a seed a DP bma is a release: secure noise, private = TRUE, no diagnostics", {
  f <- read ~ female + write + math + science + socst
  a <- dpmu::bma(f, data = hsb2, prior = "bic", uncertainty = "plug-in", epsilon = 5, bounds = c(0, 100))
  b <- dpmu::bma(f, data = hsb2, prior = "bic", uncertainty = "plug-in", epsilon = 5, bounds = c(0, 100))
  expect_true(a$private)
  expect_null(a$release$clamped_entries)
  expect_equal(a$privacy$epsilon, 5)
  expect_match(a$privacy$sampler, "discrete")
  expect_false(identical(a$release$released_gram, b$release$released_gram))
})

test_that("print, summary and image work", {
  fit <- dpmu::bma(read ~ female + write + math + science + socst, data = hsb2, prior = "bic")
  expect_output(print(fit), "inclusion probabilities")
  s <- summary(fit)
  expect_equal(unname(s[predictors, "P(B != 0 | Y)"]), unname(fit$pip))
  expect_equal(unname(s["PostProbs", "model 1"]), fit$models$posterior_probability[1])
  png <- tempfile(fileext = ".png")
  grDevices::png(png)
  z <- image(fit)
  grDevices::dev.off()
  expect_true(file.exists(png))
  expect_equal(dim(z), c(nrow(fit$models), length(predictors) + 1))  # the intercept column first, as image.bas
})

test_that("coef has the posterior means and SDs of the CLI (intercept included), confint its intervals", {
  fit <- dpmu::bma(read ~ female + write + math + science + socst, data = hsb2, prior = "zellner-siow")
  cli <- cli_json(c("bma", "--non-private", "--data", hsb2_csv(), "--response", "read", "--predictors",
                    paste(predictors, collapse = ","), "--prior", "zellner-siow"))$non_private
  cf <- coef(fit)
  expect_true(all(c("mean", "sd") %in% names(cf)))
  expect_equal(rownames(cf), c("(Intercept)", predictors))
  expect_equal(cf$mean, unname(c(cli$intercept$posterior_mean, unlist(cli$posterior_means[predictors]))), tolerance = 1e-10)
  expect_equal(cf$sd, unname(c(cli$intercept$posterior_sd, unlist(cli$posterior_sds[predictors]))), tolerance = 1e-10)
  expect_equal(coef(fit, sd = "bas")$sd, unname(c(cli$intercept$posterior_sd_bas, unlist(cli$posterior_sds_bas[predictors]))),
               tolerance = 1e-10)
  expect_equal(cf$mean[1], mean(hsb2$read), tolerance = 1e-12)  # E[alpha | Y] = mean(y) with centred predictors
  ci <- confint(fit)
  expect_equal(dim(ci), c(6L, 2L))
  expect_equal(unname(ci[-1, ]), unname(do.call(rbind, cli$credible_intervals$intervals[predictors])), tolerance = 1e-10)
  expect_equal(unname(ci[1, ]), unlist(cli$intercept$credible_interval), tolerance = 1e-10)
  expect_true(all(ci[, 1] < cf$mean & cf$mean < ci[, 2]))
  # another level without refitting (BAS's confint(fit, level =)): nested inside the 95 % intervals
  ci90 <- confint(fit, level = 0.9)
  expect_true(all(ci90[, 1] >= ci[, 1] & ci90[, 2] <= ci[, 2]))
  expect_true(all(ci90[-1, 2] - ci90[-1, 1] < ci[-1, 2] - ci[-1, 1]))
})

test_that("bic model-averaged means are the OLS slopes averaged over the models (lm)", {
  fit <- dpmu::bma(read ~ female + write + math + science + socst, data = hsb2, prior = "bic", top_models = 32)
  expect_equal(sum(fit$models$posterior_probability), 1, tolerance = 1e-12)
  avg <- setNames(numeric(length(predictors)), predictors)
  for (i in seq_len(nrow(fit$models))) {
    cols <- predictors[fit$which[i, ]]
    if (length(cols) == 0) next
    b <- coef(lm(stats::reformulate(cols, "read"), data = hsb2))[cols]
    avg[cols] <- avg[cols] + fit$models$posterior_probability[i] * b
  }
  expect_equal(coef(fit)$mean[-1], unname(avg), tolerance = 1e-10)
})

test_that("predict: BMA is the intercept plus the averaged slopes; HPM under bic is lm's fit", {
  fit <- dpmu::bma(read ~ female + write + math + science + socst, data = hsb2, prior = "bic")
  x <- as.matrix(hsb2[, predictors])
  cf <- coef(fit)
  expect_equal(unname(predict(fit, hsb2)$fit),
               unname(drop(cf$mean[1] + sweep(x, 2, colMeans(x)) %*% cf$mean[-1])), tolerance = 1e-10)
  hpm <- fit$posterior$highest_posterior_model
  expect_equal(unname(predict(fit, hsb2, estimator = "hpm")$fit),
               unname(fitted(lm(stats::reformulate(hpm, "read"), data = hsb2))), tolerance = 1e-10)
  expect_length(predict(fit, hsb2[1:3, ], estimator = "mpm")$fit, 3)
  expect_length(predict(fit, hsb2[1:3, ], estimator = "bpm")$fit, 3)
  # factors: newdata is expanded with the fit's levels
  d <- hsb2
  d$prog <- factor(d$prog)
  f2 <- dpmu::bma(read ~ prog + math, data = d, prior = "bic")
  expect_equal(unname(predict(f2, d[1:5, ])$fit), unname(predict(f2, d)$fit[1:5]), tolerance = 1e-12)
  dp <- dpmu::bma(read ~ female + math, data = hsb2, epsilon = 5, bounds = c(0, 100), seed = 1)
  expect_error(predict(dp, hsb2), "release publishes no means")
  expect_true(is.na(coef(dp)$mean[1]))
})
