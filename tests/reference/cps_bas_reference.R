# Reference values for the "[cps_bma][reference]" test in tests/experiments/cps_bma_test.cpp:
# non-private posterior inclusion probabilities and posterior means of the CPS application
# (paper §5.2.2) on exactly the transformed data of configs/fig5_cps*.yaml (married and
# education permuted with permutation_seed 20240325, centred and rescaled into [-0.5, 0.5]).
#
# How produced (R 4.2, BAS 1.7.5.9000 built from source, as for bma_bas_reference.R):
#   mkdir -p /tmp/cps && DPMU_CPS_EXPORT=/tmp/cps build/tests/dpmu_tests '[.cps_export]'
#   Rscript tests/reference/cps_bas_reference.R /tmp/cps > tests/reference/cps_bas_reference.json
# bas.lm(response ~ all six predictors), full enumeration (method = "BAS", n.models = 64),
# modelprior = beta.binomial(1, 1) (hierarchical uniform), priors "JZS" (Zellner-Siow by
# numerical integration = dpmu "zellner-siow") and "ZS-null" (Laplace approximation = dpmu
# "zellner-siow-laplace"). column_weighted_sums (sum over rows i = 1..n of i * d_ij) identify the
# data (and its row order) used. BAS 1.7.5.9000 returns NaN posterior means for JZS on the
# public-bounds data (written as null and skipped by the test; its PIPs are finite).
suppressMessages(library(BAS))
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) > 0) args[1] else "/tmp/cps"
num <- function(x) ifelse(is.finite(x), sprintf("%.17g", x), "null")  # BAS JZS gives NaN means here
vec <- function(x) paste0("[", paste(num(x), collapse = ", "), "]")
preds <- c("age", "age_squared", "married", "male", "education", "white")
cfgs <- c()
for (mode in c("data_range", "public_bounds")) {
  d <- read.csv(file.path(dir, paste0("cps_", mode, ".csv")))
  for (prior in c("JZS", "ZS-null")) {
    fit <- bas.lm(response ~ age + age_squared + married + male + education + white, data = d, prior = prior,
                  modelprior = beta.binomial(1, 1), method = "BAS", n.models = 64)
    stopifnot(length(fit$postprobs) == 64)
    cf <- coef(fit)
    cfgs <- c(cfgs, paste0(
      "    {\n",
      sprintf('      "rescale": "%s",\n', mode),
      sprintf('      "prior": "%s",\n', prior),
      sprintf('      "n": %d,\n', nrow(d)),
      sprintf('      "column_weighted_sums": %s,\n', vec(colSums(seq_len(nrow(d)) * d[, c(preds, "response")]))),
      sprintf('      "posterior_inclusion_probabilities": %s,\n', vec(fit$probne0[-1])),
      sprintf('      "posterior_means": %s\n', vec(cf$postmean[-1])),
      "    }"))
  }
}
cat("{\n")
cat(sprintf('  "generator": "tests/reference/cps_bas_reference.R with BAS %s, %s",\n',
            as.character(packageVersion("BAS")), R.version.string))
cat('  "configurations": [\n')
cat(paste(cfgs, collapse = ",\n"))
cat("\n  ]\n}\n")
