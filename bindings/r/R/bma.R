# Bayesian model averaging (Pena & Barrientos 2024, Sec. 5; docs/bma.md), non-private or by
# sufficient-statistic perturbation, on dpmu's C++ core. The R code only builds the design matrix
# and arranges the core's results; every number comes from the core.

#' The design matrix and response of a formula (shared by bma and test).
#' @noRd
dpmu_design <- function(formula, data, na.action, caller) {
  if (missing(data)) stop(caller, ": give the data frame as 'data'", call. = FALSE)
  mf <- stats::model.frame(formula, data = data, na.action = na.action, drop.unused.levels = TRUE)
  dropped <- attr(mf, "na.action")
  if (!is.null(dropped) && length(dropped) > 0) {
    message(caller, ": ", length(dropped), " of ", nrow(data), " rows have missing values and were removed (na.action = ",
            class(dropped)[1], ")")
  }
  tt <- attr(mf, "terms")
  if (attr(tt, "intercept") != 1) {
    stop(caller, ": the intercept is always included (the data are centred); remove '- 1' / '+ 0' from the formula",
         call. = FALSE)
  }
  y <- stats::model.response(mf, "numeric")
  if (is.null(y)) stop(caller, ": the formula needs a response, e.g. y ~ x1 + x2", call. = FALSE)
  x <- stats::model.matrix(tt, mf)
  assign <- attr(x, "assign")
  keep <- colnames(x) != "(Intercept)"
  contrasts <- attr(x, "contrasts")
  x <- x[, keep, drop = FALSE]
  storage.mode(x) <- "double"
  list(x = x, y = as.double(y), response = deparse(formula[[2]]), terms = tt, assign = assign[keep],
       xlevels = stats::.getXlevels(tt, mf), contrasts = contrasts, n = nrow(x))
}

#' Bayesian model averaging for linear regression, non-private or differentially private.
#'
#' See man/bma.Rd.
#' @export
bma <- function(formula, data, prior = "zellner-siow", model_prior = "beta-binomial(1,1)", epsilon = NULL,
                delta = 0, mechanism = "laplace", bounds = NULL, seed = NULL, na.action = stats::na.omit,
                g = NULL, a = 3, top_models = 10, mcmc = FALSE, rescale = FALSE, always_include = character()) {
  d <- dpmu_design(formula, data, na.action, "dpmu::bma")
  if (ncol(d$x) == 0) stop("dpmu::bma: the formula has no predictors", call. = FALSE)
  if (!is.null(bounds)) bounds <- as.double(t(as.matrix(bounds)))
  options <- list(prior = prior, g = g, a = a, model_prior = model_prior, epsilon = epsilon,
                  delta = if (is.null(delta) || delta == 0) NULL else delta, mechanism = mechanism,
                  bounds = bounds, seed = seed, rescale = rescale, top_models = top_models, mcmc = mcmc,
                  always_include = always_include)
  out <- .Call(dpmu_bma_c, d$x, d$y, colnames(d$x), d$response, options)
  new_dpmu_bma(out, d, match.call())
}

#' @noRd
new_dpmu_bma <- function(out, d, call) {
  predictors <- colnames(d$x)
  private_run <- !is.null(out$privacy)
  analysis <- if (is.null(out$non_private)) out$non_thresholded else out$non_private
  num <- function(v) {
    x <- unlist(v[predictors])
    names(x) <- predictors
    x
  }
  models <- lapply(analysis$top_models, function(m) m)
  which <- t(vapply(models, function(m) predictors %in% unlist(m$predictors), logical(length(predictors))))
  if (length(models) == 0) which <- matrix(FALSE, 0, length(predictors))
  colnames(which) <- predictors
  field <- function(k) vapply(models, function(m) as.double(m[[k]]), 0)
  model_table <- data.frame(
    model = vapply(models, function(m) {
      s <- unlist(m$predictors)
      if (length(s) == 0) "(null)" else paste(s, collapse = " + ")
    }, ""),
    size = rowSums(which),
    posterior_probability = field("posterior_probability"),
    log_posterior_probability = field("log_posterior_probability"),
    log_prior_probability = field("log_prior_probability"),
    log_marginal = field("log_marginal"),
    r_squared = field("r_squared"),
    shrinkage = field("shrinkage"),
    stringsAsFactors = FALSE)
  structure(list(
    pip = num(analysis$posterior_inclusion_probabilities),
    prior_inclusion = num(analysis$prior_inclusion_probabilities),
    posterior_mean = num(analysis$posterior_means),
    models = model_table,
    which = which,
    highest_posterior_model = unlist(analysis$highest_posterior_model),
    median_probability_model = unlist(analysis$median_probability_model),
    expected_model_size = analysis$expected_model_size,
    privacy = if (private_run) out$privacy else NULL,
    private = isTRUE(out$private),
    private_reason = unlist(out$private_reason),
    settings = out$settings,
    release = out,
    n = d$n, response = d$response, terms = d$terms, xlevels = d$xlevels, contrasts = d$contrasts,
    call = call), class = "dpmu_bma")
}

#' @export
print.dpmu_bma <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nCall:\n", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat("Model averaging over ", length(x$pip), " predictor columns (", x$settings$search, "), n = ", x$n,
      ", prior ", x$settings$prior, ", model prior ", x$settings$model_prior, "\n", sep = "")
  if (is.null(x$privacy)) {
    cat("Non-private (exact) analysis of the data\n")
  } else {
    cat(sprintf("Differentially private release: epsilon = %g, delta = %g (%s)\n", x$privacy$epsilon,
                x$privacy$delta, x$privacy$mechanism))
  }
  if (!x$private) cat("Not private: ", paste(x$private_reason, collapse = "; "), "\n", sep = "")
  cat("\nMarginal posterior inclusion probabilities:\n")
  print(round(x$pip, digits), ...)
  invisible(x)
}

#' @export
summary.dpmu_bma <- function(object, n.models = 5, ...) {
  k <- min(n.models, nrow(object$models))
  top <- object$models[seq_len(k), , drop = FALSE]
  which <- object$which[seq_len(k), , drop = FALSE]
  best <- if (k > 0) top$log_posterior_probability[1] else 0
  inc <- rbind(Intercept = rep(1, k), t(which) * 1)
  tab <- cbind(`P(B != 0 | Y)` = c(1, object$pip), inc)
  stats_rows <- rbind(BF = c(NA, exp(top$log_marginal - top$log_marginal[1])),
                      PostProbs = c(NA, top$posterior_probability),
                      R2 = c(NA, top$r_squared),
                      dim = c(NA, top$size + 1),
                      logmarg = c(NA, top$log_marginal))
  tab <- rbind(tab, stats_rows)
  colnames(tab) <- c("P(B != 0 | Y)", if (k > 0) paste("model", seq_len(k)))
  rownames(tab)[1] <- "Intercept"
  structure(tab, class = c("summary.dpmu_bma", "matrix"), best = best)
}

#' @export
print.summary.dpmu_bma <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  print(round(unclass(structure(x, best = NULL)), digits), ...)
  invisible(x)
}

#' Model-space image (like BAS's image.bas): the top models (columns, ranked by posterior
#' probability) by predictors (rows, the first at the top); a cell is coloured by the model's log
#' posterior odds against the highest posterior model where the predictor is included, and left
#' empty where it is not.
#' @export
image.dpmu_bma <- function(x, top.models = 20, col = grDevices::hcl.colors(20, "YlOrRd", rev = TRUE), ...) {
  k <- min(top.models, nrow(x$models))
  if (k == 0) stop("dpmu: no models to draw (top_models = 0)", call. = FALSE)
  which <- x$which[seq_len(k), , drop = FALSE]
  odds <- x$models$log_posterior_probability[seq_len(k)] - x$models$log_posterior_probability[1]
  p <- ncol(which)
  z <- ifelse(which, odds, NA_real_)[, rev(seq_len(p)), drop = FALSE]  # k x p, first predictor on top
  old <- graphics::par(mar = c(5, max(4, max(nchar(colnames(which))) * 0.6), 3, 1))
  on.exit(graphics::par(old))
  graphics::image(x = seq_len(k), y = seq_len(p), z = z, col = col, axes = FALSE, xlab = "Model rank", ylab = "",
                  main = "Log posterior odds", ...)
  graphics::axis(1, at = seq_len(k), labels = seq_len(k))
  graphics::axis(2, at = seq_len(p), labels = rev(colnames(which)), las = 1)
  graphics::box()
  invisible(z)
}

#' @export
plot.dpmu_bma <- function(x, ...) image.dpmu_bma(x, ...)
