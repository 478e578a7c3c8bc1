# Bayesian model averaging (Pena & Barrientos 2024, Sec. 5; docs/bma.md), non-private or by
# sufficient-statistic perturbation, on dpmu's C++ core. The R code only builds the design matrix
# and arranges the core's results; every number comes from the core.

#' Bayesian model averaging for linear regression, non-private or differentially private.
#'
#' See man/bma.Rd.
#' @export
bma <- function(formula, data, prior = "zellner-siow", model_prior = "beta-binomial(1,1)", epsilon = NULL,
                delta = 0, mechanism = "laplace", bounds = NULL, seed = NULL, na.action = stats::na.omit,
                g = NULL, a = 3, top_models = 10, mcmc = FALSE, rescale = FALSE, always_include = character(),
                credible_level = 0.95, levels = NULL, ledger = getOption("dpmu.ledger", Sys.getenv("DPMU_LEDGER", "")),
                budget = NULL) {
  caller <- "dpmu::bma"
  private <- !is.null(epsilon)
  ledger <- dpmu_ledger_options(ledger, !missing(ledger), budget, private && is.null(seed),
                                dpmu_data_label(substitute(data)), caller)
  d <- dpmu_design(formula, data, na.action, caller, private = private, levels = levels)
  if (ncol(d$x) == 0) stop("dpmu::bma: the formula has no predictors", call. = FALSE)
  if (!is.null(bounds)) bounds <- as.double(if (is.matrix(bounds)) bounds else unlist(bounds))
  if (private) {
    if (is.null(bounds)) {
      stop("dpmu::bma: a private run (epsilon given) needs public bounds on the raw values: bounds = c(l, u)",
           call. = FALSE)
    }
    # A value derived from a valid row that is not finite (log(0), 1/0) never stops a release: it
    # becomes a public bound (-Inf and NaN the lower, +Inf the upper).
    m <- dpmu_map_nonfinite(d$x, d$y, bounds, caller)
    d$x <- m$x
    d$y <- m$y
  }
  options <- list(prior = prior, g = g, a = a, model_prior = model_prior, epsilon = epsilon,
                  delta = if (is.null(delta) || delta == 0) NULL else delta, mechanism = mechanism,
                  bounds = bounds, seed = seed, rescale = rescale, top_models = top_models, mcmc = mcmc,
                  always_include = always_include, credible_level = credible_level, ledger = ledger$ledger,
                  budget = ledger$budget, data_label = ledger$data_label)
  out <- .Call(dpmu_bma_c, d$x, d$y, colnames(d$x), d$response, options)
  for (m in out$messages) message("dpmu::bma: ", m)
  new_dpmu_bma(out, d, dpmu_public_call(match.call(), quote(dpmu::bma)))
}

#' @noRd
new_dpmu_bma <- function(out, d, call) {
  predictors <- colnames(d$x)
  s <- out$posterior
  k <- length(s$models$predictors)
  which <- matrix(FALSE, k, length(predictors), dimnames = list(NULL, predictors))
  for (i in seq_len(k)) which[i, ] <- predictors %in% s$models$predictors[[i]]
  model_table <- data.frame(
    model = vapply(s$models$predictors, function(m) if (length(m) == 0) "(null)" else paste(m, collapse = " + "), ""),
    size = rowSums(which),
    posterior_probability = s$models$posterior_probability,
    log_posterior_probability = s$models$log_posterior_probability,
    log_prior_probability = s$models$log_prior_probability,
    log_marginal = s$models$log_marginal,
    r_squared = s$models$r_squared,
    shrinkage = s$models$shrinkage,
    stringsAsFactors = FALSE)
  structure(list(
    pip = s$pip,
    models = model_table,
    which = which,
    posterior = s,
    thresholded = out$thresholded,
    privacy = out$report$privacy,
    private = isTRUE(out$report$private),
    private_reason = unlist(out$report$private_reason),
    release = out$release,
    settings = list(prior = out$prior, model_prior = out$model_prior, search = out$search, seed = out$seed),
    messages = out$messages,
    ledger = out$ledger,
    n = d$n, response = d$response, formula = d$formula, terms = d$terms, xlevels = d$xlevels,
    contrasts = d$contrasts, levels = d$levels, call = call, pointer = out$pointer), class = "dpmu_bma")
}

#' Posterior means and SDs of the coefficients (like coef.bas), with the inclusion probabilities.
#' @export
coef.dpmu_bma <- function(object, sd = c("exact", "bas"), ...) {
  sd <- match.arg(sd)
  s <- object$posterior
  out <- data.frame(
    mean = c(if (is.null(s$intercept)) NA_real_ else s$intercept, s$mean),
    sd = c(if (sd == "exact") s$intercept_sd else s$intercept_sd_bas, if (sd == "exact") s$sd else s$sd_bas),
    pip = c(1, s$pip),
    row.names = c("(Intercept)", names(s$pip)))
  class(out) <- c("coef.dpmu_bma", "data.frame")
  out
}

#' @export
print.coef.dpmu_bma <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Model-averaged posterior means and SDs of the coefficients",
      if (is.na(x$mean[1])) " (a release publishes no means: the intercept's mean is NA)", ":\n", sep = "")
  print(format(as.data.frame(unclass(x), row.names = rownames(x)), digits = digits), ...)
  invisible(x)
}

#' Model-averaged equal-tailed credible intervals (exact over the mixture of models; docs/bma.md).
#' @export
confint.dpmu_bma <- function(object, parm, level = object$posterior$credible_level, ...) {
  s <- object$posterior
  if (s$credible_level == 0) stop("dpmu: the fit has no credible intervals (credible_level = 0)", call. = FALSE)
  if (abs(level - s$credible_level) > 1e-12) {
    stop("dpmu: the intervals were computed at credible_level = ", s$credible_level,
         "; refit with dpmu::bma(..., credible_level = ", level, ")", call. = FALSE)
  }
  ci <- cbind(c(if (is.null(s$intercept_lower)) NA_real_ else s$intercept_lower, s$lower),
              c(if (is.null(s$intercept_upper)) NA_real_ else s$intercept_upper, s$upper))
  a <- (1 - s$credible_level) / 2
  dimnames(ci) <- list(c("(Intercept)", names(s$pip)), sprintf("%g %%", 100 * c(a, 1 - a)))
  if (!missing(parm)) ci <- ci[parm, , drop = FALSE]
  ci
}

#' Posterior mean of the response at new data: model-averaged (estimator = "bma") or from the
#' highest posterior (hpm), median probability (mpm) or best predictive (bpm) model.
#' @export
predict.dpmu_bma <- function(object, newdata, estimator = c("bma", "hpm", "mpm", "bpm"), ...) {
  estimator <- match.arg(estimator)
  if (missing(newdata)) stop("dpmu: give newdata (a data frame with the predictors)", call. = FALSE)
  if (is.null(object$terms)) {
    stop("dpmu: predict: a release publishes no means of the data, so predictions need a non-private fit",
         call. = FALSE)
  }
  tt <- stats::delete.response(object$terms)
  mf <- stats::model.frame(tt, newdata, na.action = stats::na.pass, xlev = object$xlevels)
  x <- stats::model.matrix(tt, mf, contrasts.arg = object$contrasts)
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  storage.mode(x) <- "double"
  if (!identical(colnames(x), names(object$pip))) {
    stop("dpmu: newdata gives the columns ", paste(colnames(x), collapse = ", "), " but the fit has ",
         paste(names(object$pip), collapse = ", "), call. = FALSE)
  }
  out <- .Call(dpmu_predict_c, object$pointer, x, estimator)
  names(out) <- rownames(newdata)
  out
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
  if (x$private) cat(dpmu_ledger_line(x))
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
