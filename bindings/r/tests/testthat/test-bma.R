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
    expect_equal(fit$posterior_mean, named(cli$posterior_means, predictors), tolerance = 1e-10)
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
    expect_lt(max(abs(fit$posterior_mean - c$posterior_means) / pmax(1, abs(c$posterior_means))), 1e-6)
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

dp_args <- c("bma", "--data", NA, "--response", "read", "--predictors", "female,write,math,science,socst",
             "--prior", "bic", "--epsilon", "5", "--bounds", "0,100", "--seed", "11")

test_that("a seeded DP release through R equals the CLI's with the same seed, and says it is not private", {
  fit <- dpmu::bma(read ~ female + write + math + science + socst, data = hsb2, prior = "bic", epsilon = 5,
                   bounds = c(0, 100), seed = 11)
  args <- dp_args
  args[3] <- hsb2_csv()
  cli <- cli_json(args)
  expect_equal(fit$release$released_gram, cli$released_gram, tolerance = 0)
  expect_equal(fit$pip, named(cli$posterior_inclusion_probabilities, predictors), tolerance = 1e-12)
  expect_equal(fit$posterior_mean, named(cli$posterior_means, predictors), tolerance = 1e-12)
  expect_equal(fit$privacy, cli$privacy)
  expect_false(fit$private)
  expect_match(fit$private_reason, "seed")
  expect_false(is.null(fit$release$diagnostics))
})

test_that("without a seed a DP bma is a release: secure noise, private = TRUE, no diagnostics", {
  f <- read ~ female + write + math + science + socst
  a <- dpmu::bma(f, data = hsb2, prior = "bic", epsilon = 5, bounds = c(0, 100))
  b <- dpmu::bma(f, data = hsb2, prior = "bic", epsilon = 5, bounds = c(0, 100))
  expect_true(a$private)
  expect_null(a$release$diagnostics)
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
  expect_equal(dim(z), c(nrow(fit$models), length(predictors)))
})
