# The per-data-set pipeline that Peña & Barrientos (2024, JMLR 25) §5.2.1 implies, in R, for
# timing against dpmu (bench/r_pipeline/run.sh; docs/performance.md "dpmu against the R pipeline"):
#   1. generate: x_ij ~ U(-2, 2), y = X beta + sigma w (docs/methods.md §5.8, A6; rows with
#      |y| >= 2 redrawn), n rows, p predictors, |T| active;
#   2. Gram: the centred Gram matrix G of [X y] (docs/methods.md §5.1);
#   3. perturb: Laplace mechanism G* = G + E, E symmetric with iid L1(0, Delta1/eps) entries
#      (Delta1 = (p+1)(p+2) * 4 in paper mode with l = -2, u = 2; docs/methods.md §5.2), the
#      hard-thresholded G** (lambda = 0.95, absolute reference; §5.4) and the ridge r
#      (the 99th percentile of -eigmin(E) from `ridge_draws` draws; §5.4);
#   4. Prop. 3 synthetic data: D = M_c (M_c'M_c)^{-1/2} G~^{1/2} with D'D = G~ (docs/methods.md §5.6);
#   5. bas.lm(prior = "ZS-null", modelprior = beta.binomial(1, 1), n.models = 2^p) and coef(), for
#      the non-private data and for each DP matrix (both thresholdings).
# Step 5 needs the R package BAS (not in Debian; see bench/r_pipeline/README.md). Without it the
# script times steps 1-4 and says that BAS is missing.
#
# Usage: Rscript pipeline.R N P T EPS DATASETS SEED [RIDGE_DRAWS] [VARIANTS]
# VARIANTS: three (default; the non-private data and both DP matrices) or one (the Laplace
# non-thresholded G*_r only: one perturbation, one synthetic data set, one bas.lm).
# Prints one line per step: "step <name> <CPU seconds per data set>", then "bas <TRUE|FALSE>".
args <- commandArgs(trailingOnly = TRUE)
n <- as.integer(args[1]); p <- as.integer(args[2]); t_size <- as.integer(args[3])
eps <- as.numeric(args[4]); datasets <- as.integer(args[5]); seed <- as.integer(args[6])
ridge_draws <- if (length(args) >= 7) as.integer(args[7]) else 1000L
variants <- if (length(args) >= 8) args[8] else "three"
stopifnot(variants %in% c("three", "one"))
have_bas <- requireNamespace("BAS", quietly = TRUE)
set.seed(seed)

z <- 7
b <- if (t_size > 0) 1 / (z * sqrt(t_size)) else 0
sigma <- sqrt(8 / 3) / z
beta <- c(rep(b, t_size), rep(0, p - t_size))
delta1 <- (p + 1) * (p + 2) * 4
scale <- delta1 / eps

generate <- function() {
  x <- matrix(runif(n * p, -2, 2), n, p)
  y <- drop(x %*% beta) + sigma * rnorm(n)
  bad <- which(abs(y) >= 2)
  while (length(bad) > 0) {  # redraw whole rows (expected never)
    x[bad, ] <- matrix(runif(length(bad) * p, -2, 2), length(bad), p)
    y[bad] <- drop(x[bad, , drop = FALSE] %*% beta) + sigma * rnorm(length(bad))
    bad <- bad[abs(y[bad]) >= 2]
  }
  list(x = x, y = y)
}
gram <- function(d) {
  m <- cbind(d$x, d$y)
  crossprod(sweep(m, 2, colMeans(m)))
}
laplace_noise <- function() {
  e <- matrix(0, p + 1, p + 1)
  l <- lower.tri(e, diag = TRUE)
  e[l] <- rexp(sum(l), 1 / scale) - rexp(sum(l), 1 / scale)
  e[upper.tri(e)] <- t(e)[upper.tri(e)]
  e
}
ridge <- quantile(replicate(ridge_draws, -min(eigen(laplace_noise(), symmetric = TRUE, only.values = TRUE)$values)),
                  0.99, names = FALSE)  # once per cell (not timed per data set)
threshold <- -scale * log(1 - 0.95)
regularize <- function(a) {
  r <- ridge
  lmin <- min(eigen(a, symmetric = TRUE, only.values = TRUE)$values)
  if (lmin + r <= 0) r <- -lmin + 1e-8 * sum(diag(a)) / (p + 1)
  a + r * diag(p + 1)
}
perturb <- function(g) {
  gs <- g + laplace_noise()
  if (variants == "one") return(list(non_thresholded = regularize(gs)))
  gt <- gs
  off <- row(gt) != col(gt) & abs(gt) < threshold
  gt[off] <- 0
  list(non_thresholded = regularize(gs), thresholded = regularize(gt))
}
synthetic <- function(g) {
  u <- matrix(runif(n * (p + 1)), n, p + 1)
  mc <- sweep(u, 2, colMeans(u))
  d <- mc %*% solve(chol(crossprod(mc))) %*% chol(g)  # M_c (M_c'M_c)^{-1/2} G^{1/2}
  colnames(d) <- c(paste0("x", seq_len(p)), "y")
  as.data.frame(d)
}
analyse <- function(df) {
  fit <- BAS::bas.lm(y ~ ., data = df, prior = "ZS-null", modelprior = BAS::beta.binomial(1, 1),
                     method = "BAS", n.models = 2^p)
  coef(fit)$postmean
}

times <- c(generate = 0, gram = 0, perturb = 0, synthetic = 0, bas = 0)
tick <- function() { t <- proc.time(); t[["user.self"]] + t[["sys.self"]] }  # CPU seconds (robust to load)
for (r in seq_len(datasets)) {
  t0 <- tick(); d <- generate(); t1 <- tick()
  g <- gram(d); rm(d); t2 <- tick()
  dp <- perturb(g); t3 <- tick()
  # one synthetic data set per matrix analysed: the non-private data and both DP matrices
  # (VARIANTS one: the non-thresholded DP matrix only)
  s <- if (variants == "one") list(synthetic(dp$non_thresholded)) else
    list(synthetic(g), synthetic(dp$non_thresholded), synthetic(dp$thresholded))
  t4 <- tick()
  if (have_bas) for (df in s) invisible(analyse(df))
  t5 <- tick(); rm(s); invisible(gc(verbose = FALSE))
  times <- times + c(t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)
}
for (k in names(times)) cat("step", k, sprintf("%.6f", times[[k]] / datasets), "\n")
cat("bas", have_bas, "\n")
