# Reference values for tests/reference/bma_bas_reference_test.cpp.
#
# How produced: R 4.2 (Debian r-base-core) with BAS 1.7.5.9000 built from source
# (github merliseclyde/BAS @ 85c7da3, `R CMD INSTALL` of a checkout outside this repository), then
#   Rscript tests/reference/bma_bas_reference.R experiments/data > tests/reference/bma_bas_reference.json
# Every configuration is a full enumeration (method = "BAS", n.models = 2^p) of
# bas.lm(y ~ all predictors), intercept always included. Recorded per configuration: posterior
# inclusion probabilities (probne0), posterior means of the slopes (coef()$postmean), and posterior
# model probabilities keyed by the model bitmask (bit j = j-th predictor in the listed order;
# all models for p <= 9, the 64 most probable otherwise).
suppressMessages(library(BAS))
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) > 0) args[1] else "experiments/data"

num <- function(x) sprintf("%.17g", x)
vec <- function(x) paste0("[", paste(num(x), collapse = ", "), "]")
strs <- function(x) paste0("[", paste0('"', x, '"', collapse = ", "), "]")

run <- function(name, file, response, predictors, prior, modelprior, mp_name, alpha = NULL, top = Inf) {
  d <- read.csv(file.path(dir, file))
  d <- d[, c(predictors, response)]
  f <- as.formula(paste(response, "~", paste(predictors, collapse = " + ")))
  p <- length(predictors)
  fit <- if (is.null(alpha)) {
    bas.lm(f, data = d, prior = prior, modelprior = modelprior, method = "BAS", n.models = 2^p)
  } else {
    bas.lm(f, data = d, prior = prior, alpha = alpha, modelprior = modelprior, method = "BAS", n.models = 2^p)
  }
  stopifnot(length(fit$postprobs) == 2^p)
  masks <- sapply(fit$which, function(w) sum(2^(w[w > 0] - 1)))
  ord <- order(-fit$postprobs)
  if (is.finite(top)) ord <- ord[seq_len(min(top, length(ord)))]
  cf <- coef(fit)
  out <- c(
    "    {",
    sprintf('      "name": "%s",', name),
    sprintf('      "data": "%s",', file),
    sprintf('      "response": "%s",', response),
    sprintf('      "predictors": %s,', strs(predictors)),
    sprintf('      "prior": "%s",', prior),
    sprintf('      "alpha": %s,', if (is.null(alpha)) "null" else num(alpha)),
    sprintf('      "model_prior": "%s",', mp_name),
    sprintf('      "n": %d,', nrow(d)),
    sprintf('      "posterior_inclusion_probabilities": %s,', vec(fit$probne0[-1])),
    sprintf('      "posterior_means": %s,', vec(cf$postmean[-1])),
    sprintf('      "model_masks": %s,', vec(masks[ord])),
    sprintf('      "model_probabilities": %s', vec(fit$postprobs[ord])),
    "    }"
  )
  paste(out, collapse = "\n")
}

hsb <- c("female", "race", "ses", "schtyp", "prog", "write", "math", "science", "socst")
crime <- c("M", "So", "Ed", "Po1", "Po2", "LF", "M.F", "Pop", "NW", "U1", "U2", "GDP", "Ineq", "Prob", "Time")
prost <- c("lcavol", "lweight", "age", "lbph", "svi", "lcp", "gleason", "pgg45")
bb <- beta.binomial(1, 1)
cfgs <- list(
  run("hsb2 g-prior bb", "hsb2.csv", "read", hsb, "g-prior", bb, "beta-binomial:1,1", alpha = 200),
  run("hsb2 hyper-g bb", "hsb2.csv", "read", hsb, "hyper-g", bb, "beta-binomial:1,1", alpha = 3),
  run("hsb2 JZS bb", "hsb2.csv", "read", hsb, "JZS", bb, "beta-binomial:1,1"),
  run("hsb2 ZS-null bb", "hsb2.csv", "read", hsb, "ZS-null", bb, "beta-binomial:1,1"),
  run("hsb2 BIC bb", "hsb2.csv", "read", hsb, "BIC", bb, "beta-binomial:1,1"),
  run("hsb2 AIC bb", "hsb2.csv", "read", hsb, "AIC", bb, "beta-binomial:1,1"),
  run("hsb2 g-prior uniform", "hsb2.csv", "read", hsb, "g-prior", uniform(), "uniform", alpha = 200),
  run("hsb2 JZS bernoulli", "hsb2.csv", "read", hsb, "JZS", Bernoulli(0.2), "bernoulli:0.2"),
  run("hsb2 BIC bernoulli", "hsb2.csv", "read", hsb, "BIC", Bernoulli(0.2), "bernoulli:0.2"),
  run("prostate JZS uniform", "prostate.csv", "lpsa", prost, "JZS", uniform(), "uniform"),
  run("prostate hyper-g bb", "prostate.csv", "lpsa", prost, "hyper-g", bb, "beta-binomial:1,1", alpha = 3),
  run("uscrime g-prior bb", "uscrime.csv", "y", crime, "g-prior", bb, "beta-binomial:1,1", alpha = 47, top = 64),
  run("uscrime ZS-null bb", "uscrime.csv", "y", crime, "ZS-null", bb, "beta-binomial:1,1", top = 64),
  run("uscrime BIC uniform", "uscrime.csv", "y", crime, "BIC", uniform(), "uniform", top = 64)
)
cat("{\n")
cat(sprintf('  "generator": "tests/reference/bma_bas_reference.R with BAS %s, %s",\n',
            as.character(packageVersion("BAS")), R.version.string))
cat('  "configurations": [\n')
cat(paste(cfgs, collapse = ",\n"))
cat("\n  ]\n}\n")
