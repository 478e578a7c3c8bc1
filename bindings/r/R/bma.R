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
                budget = NULL, force.heredity = FALSE, mcmc_max_iterations = NULL, mcmc_max_models = NULL,
                uncertainty = NULL, noise_aware_draws = 1000, include.always = NULL, modelprior = NULL,
                method = "ssp") {
  caller <- "dpmu::bma"
  formula <- dpmu_as_formula(formula, caller)
  if (!(is.character(method) && length(method) == 1 && method %in% c("ssp", "adassp"))) {
    stop(caller, ": method must be \"ssp\" (SSP model averaging, the default) or \"adassp\" (the AdaSSP ",
         "baseline: a private ridge point estimate, no model uncertainty)", call. = FALSE)
  }
  if (method == "adassp") {
    takes <- c("formula", "data", "epsilon", "delta", "bounds", "seed", "na.action", "levels", "ledger", "budget",
               "method")
    extra <- setdiff(names(match.call())[-1], takes)
    if (length(extra) > 0) {
      stop(caller, ": ", paste(extra, collapse = ", "), " do not apply to method = \"adassp\" (a ridge point ",
           "estimate of the full model: no priors, models, intervals or SSP options); it takes ",
           paste(takes, collapse = ", "), call. = FALSE)
    }
  }
  if (!is.null(modelprior)) {  # BAS's name
    if (!missing(model_prior)) stop(caller, ": give model_prior or modelprior (BAS's name), not both", call. = FALSE)
    model_prior <- modelprior
  }
  model_prior <- dpmu_model_prior_text(model_prior, caller)
  for (arg in c("mcmc_max_iterations", "mcmc_max_models")) {
    v <- get(arg)
    if (!is.null(v) && !(is.numeric(v) && length(v) == 1 && !is.na(v) && v >= 1 && v == round(v) && v <= 2^53)) {
      stop(caller, ": ", arg, " must be a whole number >= 1 (or NULL for the default)", call. = FALSE)
    }
  }
  if (!(isTRUE(force.heredity) || isFALSE(force.heredity))) {
    stop(caller, ": force.heredity must be TRUE or FALSE", call. = FALSE)
  }
  if (!(is.numeric(top_models) && length(top_models) == 1 && !is.na(top_models) && top_models >= 0 &&
        top_models == round(top_models) && top_models <= .Machine$integer.max)) {
    stop(caller, ": top_models must be a whole number >= 0 (the number of models listed)", call. = FALSE)
  }
  private <- !is.null(epsilon)
  ledger <- dpmu_ledger_options(ledger, !missing(ledger), budget, private && is.null(seed),
                                dpmu_data_label(substitute(data)), caller)
  d <- dpmu_design(formula, data, na.action, caller, private = private, levels = levels)
  if (ncol(d$x) == 0) stop("dpmu::bma: the formula has no predictors", call. = FALSE)
  always_include <- unique(c(always_include, dpmu_include_always(include.always, d, caller)))
  bounds <- dpmu_bounds_vector(bounds, ncol(d$x) + 1L, caller)
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
  if (method == "adassp") {
    if (!private) stop(caller, ": method = \"adassp\" is a private release: give epsilon, delta and bounds",
                       call. = FALSE)
    options <- list(epsilon = epsilon, delta = if (is.null(delta) || delta == 0) NULL else delta, bounds = bounds,
                    seed = seed, ledger = ledger$ledger, budget = ledger$budget, data_label = ledger$data_label)
    out <- .Call(dpmu_adassp_c, d$x, d$y, colnames(d$x), d$response, options)
    out$ledger <- out$settings$ledger  # the charge; NULL when not charged
    out$levels <- d$levels
    out$call <- dpmu_public_call(match.call(), quote(dpmu::bma))
    class(out) <- "dpmu_adassp"
    return(out)
  }
  options <- list(prior = prior, g = g, a = a, model_prior = model_prior, epsilon = epsilon,
                  delta = if (is.null(delta) || delta == 0) NULL else delta, mechanism = mechanism,
                  bounds = bounds, seed = seed, rescale = rescale, top_models = top_models, mcmc = mcmc,
                  always_include = always_include, credible_level = credible_level, ledger = ledger$ledger,
                  budget = ledger$budget, data_label = ledger$data_label,
                  heredity_groups = if (force.heredity) dpmu_heredity_groups(d),
                  heredity_parents = if (force.heredity) dpmu_heredity_parents(d),
                  mcmc_max_iterations = mcmc_max_iterations, mcmc_max_models = mcmc_max_models,
                  uncertainty = uncertainty, noise_aware_draws = noise_aware_draws)
  out <- .Call(dpmu_bma_c, d$x, d$y, colnames(d$x), d$response, options)
  for (m in out$messages) message("dpmu::bma: ", m)
  new_dpmu_bma(out, d, dpmu_public_call(match.call(), quote(dpmu::bma)))
}

# The columns of each term with more than one column (a factor's dummies, an interaction with a
# factor): kept together by force.heredity = TRUE (as BAS's force.heredity). Public: they depend on the
# formula and the declared levels only.
dpmu_heredity_groups <- function(d) {
  groups <- split(colnames(d$x), d$assign)
  unname(groups[lengths(groups) > 1])
}

# BAS's force.heredity for interactions: for each term with lower-order terms in the formula (an
# interaction's main effects, a three-way interaction's two-way terms), the columns of the term and
# of those parents; a model with the term must hold its parents. Public: from the formula only.
dpmu_heredity_parents <- function(d) {
  f <- d$term_factors
  if (is.null(f) || length(f) == 0) return(NULL)
  f <- f > 0
  cols <- split(colnames(d$x), d$assign)
  out <- list()
  for (t in seq_len(ncol(f))) {
    term <- cols[[as.character(t)]]
    if (is.null(term)) next
    parents <- Filter(function(u) u != t && all(!f[, u] | f[, t]), seq_len(ncol(f)))
    pcols <- unlist(cols[as.character(parents)], use.names = FALSE)
    if (length(pcols)) out[[length(out) + 1]] <- list(term = term, parents = pcols)
  }
  if (length(out)) out
}

#' @noRd
new_dpmu_bma <- function(out, d, call) {
  object <- structure(list(
    pip = stats::setNames(rep(NA_real_, ncol(d$x)), colnames(d$x)),  # its names: the predictors
    privacy = out$report$privacy,
    private = isTRUE(out$report$private),
    private_reason = unlist(out$report$private_reason),
    release = out$release,
    messages = out$messages,
    ledger = out$ledger,
    n = d$n, response = d$response, formula = d$formula, terms = d$terms, xlevels = d$xlevels,
    contrasts = d$contrasts, levels = d$levels, call = call, pointer = out$pointer,
    # The design and response, for fitted() and the residual plot: non-private fits only (a release,
    # seeded or not, keeps nothing computed from the data without noise).
    x = if (is.null(out$release)) d$x, y = if (is.null(out$release)) d$y), class = "dpmu_bma")
  dpmu_bma_analysis(object, out)
}

# The analysis fields of a dpmu_bma from a core result `out` (bma or re-analysis).
dpmu_bma_analysis <- function(object, out) {
  predictors <- names(object$pip)
  s <- out$posterior
  k <- length(s$models$predictors)
  which <- matrix(FALSE, k, length(predictors), dimnames = list(NULL, predictors))
  for (i in seq_len(k)) which[i, ] <- predictors %in% s$models$predictors[[i]]
  object$models <- data.frame(
    model = vapply(s$models$predictors, function(m) if (length(m) == 0) "(null)" else paste(m, collapse = " + "), ""),
    size = rowSums(which),
    posterior_probability = s$models$posterior_probability,
    log_posterior_probability = s$models$log_posterior_probability,
    log_prior_probability = s$models$log_prior_probability,
    log_marginal = s$models$log_marginal,
    r_squared = s$models$r_squared,
    shrinkage = s$models$shrinkage,
    stringsAsFactors = FALSE)
  object$pip <- s$pip
  object$which <- which
  object$posterior <- s
  object$thresholded <- out$thresholded
  object$settings <- list(prior = out$prior, model_prior = out$model_prior, search = out$search, seed = out$seed)
  object$messages <- out$messages
  object$pointer <- out$pointer
  object
}

#' Re-analysis under other priors (BAS's update.bas): post-processing of the same statistics. For a
#' release, the regularised released matrix G* + rI: no new noise, no ledger charge, $privacy,
#' $ledger and $release unchanged. See man/update.dpmu_bma.Rd.
#' @export
update.dpmu_bma <- function(object, prior = NULL, model_prior = NULL, credible_level = NULL, top_models = NULL,
                            always_include = NULL, g = NULL, a = NULL, mcmc = NULL, newprior = NULL,
                            uncertainty = NULL, noise_aware_draws = NULL, ...) {
  extra <- list(...)
  if (length(extra) > 0) {
    stop("dpmu: update re-analyses the statistics the fit already holds (for a release: the released matrix, at ",
         "no privacy cost); it cannot change ", paste(sprintf("'%s'", names(extra) %||% "..."), collapse = ", "),
         ". To change the data, formula, epsilon, bounds, mechanism or seed, call dpmu::bma again (a new release ",
         "is charged to the ledger)", call. = FALSE)
  }
  if (!is.null(newprior)) {
    if (!is.null(prior)) stop("dpmu: give prior or newprior (BAS's name), not both", call. = FALSE)
    prior <- newprior
  }
  if (!is.null(model_prior)) model_prior <- dpmu_model_prior_text(model_prior, "dpmu::update")
  options <- list(prior = prior, g = g, a = a, model_prior = model_prior, always_include = always_include,
                  top_models = top_models, credible_level = credible_level, mcmc = mcmc,
                  uncertainty = uncertainty, noise_aware_draws = noise_aware_draws)
  out <- .Call(dpmu_reanalyse_c, object$pointer, options)
  for (m in out$messages) message("dpmu::update: ", m)
  new <- dpmu_bma_analysis(object, out)
  given <- Filter(Negate(is.null), options)
  if (is.null(object$privacy)) {
    # A non-private fit: the bma call with the new settings (re-running it reads the data again and
    # spends nothing).
    call <- object$call
    for (name in names(given)) call[[name]] <- given[[name]]
    if (!is.null(prior) && is.null(g) && !is.null(call$g)) call$g <- NULL  # a new prior: g back to its default
  } else {
    # A release: re-running its bma call would be a new release, charged again. The call stored is
    # this update of the release (safe to re-run: no budget), and the printout says nothing new
    # was charged (the ledger line is the release's).
    call <- as.call(c(list(quote(update), dpmu_release_name(substitute(object), object)), given))
    new$reanalysis_of <- if (is.null(object$reanalysis_of)) object$call else object$reanalysis_of
  }
  new$call <- call
  new
}

# The release an update re-analyses, as the stored call names it: the variable, else <release>.
dpmu_release_name <- function(expr, object) if (is.symbol(expr)) expr else as.name("<release>")

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
  attr(out, "pointer") <- object$pointer  # for plot(coef(fit)): the densities come from the C++ fit
  attr(out, "sd_kind") <- sd
  attr(out, "fit") <- object               # for confint(coef(fit), level = )
  out
}

#' Posterior densities of the coefficients (BAS's plot.coef.bas). See man/plot.coef.dpmu_bma.Rd.
#' @export
plot.coef.dpmu_bma <- function(x, e = 1e-04, subset = seq_len(nrow(x)), ask = TRUE, nsteps = 500, ...) {
  fit <- attr(x, "fit")
  if (identical(fit$posterior$uncertainty, "noise-aware")) {
    stop("dpmu: the noise-aware analysis of a release is a sample of draws, not a mixture of t densities, so ",
         "plot(coef(fit)) has no densities to draw; its PIPs, means, SDs and intervals are in coef(fit) and ",
         "confint(fit). The paper's (plug-in) densities of the same release: plot(coef(update(fit, uncertainty = ",
         "\"plug-in\"))) (free: no new release)", call. = FALSE)
  }
  if (is.character(subset)) subset <- match(subset, rownames(x))
  if (ask && length(subset) > 1 && grDevices::dev.interactive()) {
    op <- graphics::par(ask = TRUE)
    on.exit(graphics::par(op))
  }
  out <- list()
  for (i in subset) {
    name <- rownames(x)[i]
    if (i == 1 && is.na(x$mean[1])) {
      message("dpmu: the intercept's density is not drawn: a release publishes no means")
      next
    }
    prob0 <- 1 - x$pip[i]
    # The range: the outermost quantiles 1e-6 and 1 - 1e-6 of the t components (from the C++ fit),
    # widened to show 0; e (BAS's argument) is kept for compatibility.
    q <- .Call(dpmu_coef_density_c, attr(x, "pointer"), as.integer(i - 2L), numeric())$range
    lim <- if (i == 1) q else range(0, q)
    grid <- seq(lim[1], lim[2], length.out = nsteps)
    d <- .Call(dpmu_coef_density_c, attr(x, "pointer"), as.integer(i - 2L), grid)
    # BAS's display: the continuous part scaled to height P(beta != 0), a bar of height P(beta = 0) at 0.
    top <- max(d$density)
    ymax <- max(prob0, 1 - prob0)
    graphics::plot(lim, c(0, ymax), type = "n", xlab = "", ylab = "", main = name, ...)
    if (i > 1) graphics::lines(c(0, 0), c(0, prob0), lty = 1, lwd = 3)
    if (top > 0) graphics::lines(grid, (1 - prob0) * d$density / top, lty = 1, lwd = 1)
    out[[name]] <- data.frame(x = grid, density = d$density)
    attr(out[[name]], "probability_zero") <- prob0
  }
  invisible(out)
}

#' @export
print.coef.dpmu_bma <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Model-averaged posterior means and SDs of the coefficients",
      if (is.na(x$mean[1])) " (a release publishes no means: the intercept's mean is NA)", ":\n", sep = "")
  cat(if (identical(attr(x, "sd_kind"), "bas")) {
    "sd: BAS's coef() SD (coef(fit) gives the exact posterior SD of the model average)\n"
  } else {
    "sd: the exact posterior SD of the model average (BAS's coef() SD: coef(fit, sd = \"bas\"))\n"
  })
  print(format(data.frame(mean = x$mean, sd = x$sd, pip = x$pip, row.names = rownames(x)), digits = digits), ...)
  invisible(x)
}

#' Model-averaged equal-tailed credible intervals (exact over the mixture of models; docs/bma.md).
#' @export
confint.dpmu_bma <- function(object, parm, level = object$posterior$credible_level, ...) {
  s <- object$posterior
  if (!(is.numeric(level) && length(level) == 1 && !is.na(level) && level > 0 && level < 1)) {
    stop("dpmu: confint: level must be a number in (0, 1)", call. = FALSE)
  }
  if (abs(level - s$credible_level) > 1e-12) {
    # Another level: a re-analysis of the statistics the fit holds (post-processing; no refit, no
    # new noise, nothing charged).
    s <- .Call(dpmu_reanalyse_c, object$pointer, list(credible_level = level))$posterior
  }
  ci <- cbind(c(if (is.null(s$intercept_lower)) NA_real_ else s$intercept_lower, s$lower),
              c(if (is.null(s$intercept_upper)) NA_real_ else s$intercept_upper, s$upper))
  a <- (1 - s$credible_level) / 2
  dimnames(ci) <- list(c("(Intercept)", names(s$pip)), sprintf("%g %%", 100 * c(a, 1 - a)))
  if (!missing(parm)) ci <- ci[parm, , drop = FALSE]
  ci
}

#' Predictions at new data as BAS's predict.bas: a list of class pred.dpmu_bma with $fit, and with
#' se.fit = TRUE BAS's per-model and model-averaged standard errors (se.fit and se.pred per model,
#' se.bma.fit, se.bma.pred), exact over every model up to 16 free columns; interval adds $interval
#' (see man/predict.dpmu_bma.Rd for the formulas).
#' @export
predict.dpmu_bma <- function(object, newdata, estimator = c("bma", "hpm", "mpm", "bpm"), se.fit = FALSE,
                             interval = c("none", "confidence", "prediction"), level = 0.95, top = NULL, ...) {
  estimator <- tolower(estimator)
  estimator <- match.arg(estimator)
  interval <- match.arg(interval)
  if (is.null(object$terms)) {
    stop("dpmu: predict: a release publishes no means of the data, so predictions need a non-private fit",
         call. = FALSE)
  }
  if (!is.null(top) && !(is.numeric(top) && length(top) == 1 && !is.na(top) && top >= 1 && top == round(top))) {
    stop("dpmu: predict: top must be a whole number >= 1 (the number of most probable models averaged), or NULL ",
         "for all", call. = FALSE)
  }
  if (missing(newdata) || is.null(newdata)) {
    if (is.null(object$x)) stop("dpmu: give newdata (a data frame with the predictors)", call. = FALSE)
    x <- object$x
    rows <- rownames(x)
  } else {
    tt <- stats::delete.response(object$terms)
    mf <- stats::model.frame(tt, newdata, na.action = stats::na.pass, xlev = object$xlevels)
    x <- stats::model.matrix(tt, mf, contrasts.arg = object$contrasts)
    x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
    storage.mode(x) <- "double"
    rows <- rownames(newdata)
  }
  if (!identical(colnames(x), names(object$pip))) {
    stop("dpmu: newdata gives the columns ", paste(colnames(x), collapse = ", "), " but the fit has ",
         paste(names(object$pip), collapse = ", "), call. = FALSE)
  }
  if (interval != "none" && !(is.numeric(level) && length(level) == 1 && level > 0 && level < 1)) {
    stop("dpmu: level must be a number in (0, 1)", call. = FALSE)
  }
  s <- object$posterior
  model <- switch(estimator, bma = NULL, hpm = s$highest_posterior_model, mpm = s$median_probability_model,
                  bpm = s$best_predictive_model)
  out <- list(fit = NULL, Ybma = NULL, Ypred = NULL, postprobs = NULL, se.fit = NULL, se.pred = NULL,
              se.bma.fit = NULL, se.bma.pred = NULL, df = NULL, best = NULL, bestmodel = NULL,
              best.vars = c("Intercept", if (is.null(model)) names(object$pip) else unlist(model)),
              estimator = toupper(estimator))
  if (!se.fit && interval == "none" && is.null(top)) {
    out$fit <- stats::setNames(.Call(dpmu_predict_c, object$pointer, x, estimator), rows)
  } else {
    r <- .Call(dpmu_predict_se_c, object$pointer, x, estimator, if (interval == "none") 0 else level,
               interval == "prediction", as.double(if (is.null(top)) 0 else top))
    out$fit <- stats::setNames(r$fit, rows)
    if (se.fit) {
      if (estimator == "bma") {
        # BAS's structure: per model (rows, most probable first) and model-averaged.
        out$Ypred <- r$model_fit
        out$postprobs <- r$model_probability
        out$se.fit <- r$model_se_fit
        out$se.pred <- r$model_se_pred
        out$se.bma.fit <- stats::setNames(r$se_fit, rows)
        out$se.bma.pred <- stats::setNames(r$se_pred, rows)
        out$df <- r$model_df
        out$best <- seq_along(r$model_probability)
        out$bestmodel <- r$model_predictors
      } else {
        out$se.fit <- stats::setNames(r$se_fit, rows)
        out$se.pred <- stats::setNames(r$se_pred, rows)
        out$df <- r$df
        out$bestmodel <- unlist(model)
      }
    }
    if (interval != "none") {
      out$interval <- cbind(fit = r$fit, lwr = r$lower, upr = r$upper)
      rownames(out$interval) <- rows
    }
    out$models <- r$models
    out$omitted_mass <- r$omitted_mass
  }
  out$Ybma <- if (estimator == "bma") out$fit
  out$level <- level
  out$top <- top
  # for confint(): the fit's C++ object and the new rows (no data are kept beyond newdata's design)
  out$pointer <- object$pointer
  out$newx <- x
  out$estimator_code <- estimator
  class(out) <- "pred.dpmu_bma"
  out
}

#' @export
print.pred.dpmu_bma <- function(x, ...) {
  cat("Predictions (", x$estimator, if (!is.null(x$top)) paste0(", top ", x$top, " models"), "):\n", sep = "")
  print(x$fit, ...)
  if (!is.null(x$se.bma.fit)) {
    cat("se.bma.fit (model-averaged posterior SD of the mean):\n")
    print(x$se.bma.fit, ...)
  } else if (!is.null(x$se.fit)) {
    cat("se.fit:\n")
    print(x$se.fit, ...)
  }
  if (!is.null(x$interval)) {
    cat("Interval at level ", x$level, ":\n", sep = "")
    print(x$interval, ...)
  }
  invisible(x)
}

#' Fitted values on the data of a non-private fit (BAS's fitted.bas). See man/fitted.dpmu_bma.Rd.
#' @export
fitted.dpmu_bma <- function(object, estimator = c("bma", "hpm", "mpm", "bpm"), ...) {
  estimator <- match.arg(tolower(estimator), c("bma", "hpm", "mpm", "bpm"))
  if (is.null(object$x)) {
    stop("dpmu: fitted: a release keeps no data (and publishes no means), so it has no fitted values; a ",
         "non-private fit has them, or call predict(fit, newdata) on a non-private fit", call. = FALSE)
  }
  predict.dpmu_bma(object, estimator = estimator)$fit
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
  if (!is.null(x$reanalysis_of)) {
    l <- x$ledger
    cat("Re-analysis (update) of the release ", paste(deparse(x$reanalysis_of), collapse = " "),
        ": post-processing, nothing charged now",
        if (!is.null(l)) paste0(" (the release was charged epsilon ", format(l$epsilon[1], digits = 4), " to ledger ",
                                l$path %||% "?", ")"), "\n", sep = "")
  } else if (x$private) {
    cat(dpmu_ledger_line(x))
  }
  if (!is.null(x$privacy)) cat(dpmu_information_line(x))
  cat(dpmu_uncertainty_line(x$posterior))
  cat("\nMarginal posterior inclusion probabilities:\n")
  print(round(x$pip, digits), ...)
  invisible(x)
}

# What the SDs and intervals of an analysis carry (docs/bma.md "Uncertainty").
dpmu_uncertainty_line <- function(s) {
  u <- if (is.null(s$uncertainty)) "exact" else s$uncertainty
  carries <- switch(u, exact = "sampling uncertainty of the data (non-private)",
                    `plug-in` = "sampling only, NOT the privacy noise (the release analysed as the data's statistics)",
                    `noise-aware` = "sampling and privacy noise", u)
  extra <- if (!is.null(s$noise_aware)) {
    na <- s$noise_aware
    nc <- if (isTRUE(na$converged)) "" else
      sprintf("; NOT CONVERGED (%s): no intervals", na$not_converged_because)
    sprintf("\n  [%s: %d chains x %d draws, max R-hat %.3f, min ESS %.0f%s]", na$sampler,
            as.integer(na$chains), as.integer(na$draws_per_chain), na$max_rhat, na$min_ess, nc)
  } else ""
  paste0("Uncertainty: ", u, " - SDs and intervals carry ", carries, extra, "\n")
}

#' @export
summary.dpmu_bma <- function(object, n.models = 5, ...) {
  k <- min(n.models, nrow(object$models))
  top <- object$models[seq_len(k), , drop = FALSE]
  which <- object$which[seq_len(k), , drop = FALSE]
  best <- if (k > 0) top$log_posterior_probability[1] else 0
  inc <- rbind(Intercept = rep(1, k), t(which) * 1)
  tab <- cbind(`P(B != 0 | Y)` = c(1, object$pip), inc)
  # BF: Bayes factor of each listed model against the listed model with the largest marginal
  # likelihood (as summary.bas; not the highest posterior model, which the model prior may change).
  stats_rows <- rbind(BF = c(NA, exp(top$log_marginal - if (k > 0) max(top$log_marginal) else 0)),
                      PostProbs = c(NA, top$posterior_probability),
                      R2 = c(NA, top$r_squared),
                      dim = c(NA, top$size + 1),
                      logmarg = c(NA, top$log_marginal))
  tab <- rbind(tab, stats_rows)
  colnames(tab) <- c("P(B != 0 | Y)", if (k > 0) paste("model", seq_len(k)))
  rownames(tab)[1] <- "Intercept"
  structure(tab, class = c("summary.dpmu_bma", "matrix"), best = best,
            uncertainty = dpmu_uncertainty_line(object$posterior))
}

#' @export
print.summary.dpmu_bma <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  if (!is.null(attr(x, "uncertainty"))) cat(attr(x, "uncertainty"))
  print(round(unclass(structure(x, best = NULL, uncertainty = NULL)), digits), ...)
  invisible(x)
}

#' Model-space image as BAS's image.bas: the predictors (the intercept first) across, the top models
#' down (rank 1 at the top, each row's height its log posterior odds against the last model shown, as
#' BAS draws them); a cell is coloured where the model includes the column and black where not. The
#' left axis is the key (log posterior odds), the right axis the model rank. rotate = FALSE swaps the
#' axes.
#' @export
image.dpmu_bma <- function(x, top.models = 20, rotate = TRUE, offset = 0.75, digits = 3, vlas = 2, ...) {
  k <- min(top.models, nrow(x$models))
  if (k == 0) stop("dpmu: no models to draw (top_models = 0)", call. = FALSE)
  which <- cbind(Intercept = TRUE, x$which[seq_len(k), , drop = FALSE])
  logp <- x$models$log_posterior_probability[seq_len(k)]
  odds <- logp - min(logp)                      # log posterior odds against the last model shown
  # (a zero height, the last model's, gets a sliver so that the rows stay ordered)
  height <- if (k > 1 && any(odds > 0)) pmax(odds, 0.01 * max(odds)) else rep(1, k)
  z <- which * (odds + offset)                  # k x (p + 1); 0 where the column is excluded
  nvar <- ncol(which)
  edges <- cumsum(c(0, rev(height)))            # model k at the bottom, model 1 at the top
  mid <- (edges[-1] + edges[-(k + 1)]) / 2
  col <- c("black", grDevices::rainbow(k + 1, start = 0.75, end = 0.05))
  old <- graphics::par(mar = c(6, 6, 3, 5) + 0.1)
  on.exit(graphics::par(old))
  if (rotate) {
    graphics::image(0:nvar, edges, t(z[k:1, , drop = FALSE]), xaxt = "n", yaxt = "n", xlab = "", ylab = "",
                    zlim = c(0, max(z)), col = col, ...)
    graphics::axis(2, at = mid, labels = round(rev(odds), digits), las = 0)
    graphics::axis(4, at = mid, labels = k:1, las = 0)
    graphics::mtext("Model Rank", side = 4, line = 3)
    graphics::mtext("Log Posterior Odds", side = 2, line = 4)
    graphics::axis(1, at = seq_len(nvar) - 0.5, labels = colnames(which), las = vlas)
  } else {
    graphics::image(edges, 0:nvar, z[k:1, nvar:1, drop = FALSE], xaxt = "n", yaxt = "n", xlab = "", ylab = "",
                    zlim = c(0, max(z)), col = col, ...)
    graphics::axis(1, at = mid, labels = round(rev(odds), digits))
    graphics::axis(3, at = mid, labels = k:1)
    graphics::mtext("Model Rank", side = 3, line = 3)
    graphics::mtext("Log Posterior Odds", side = 1, line = 4)
    graphics::axis(2, at = seq_len(nvar) - 0.5, labels = rev(colnames(which)), las = vlas)
  }
  graphics::box()
  invisible(z)
}

#' Diagnostic plots (BAS's plot.bas): 1 residuals against fitted values (non-private fits only: the
#' data), 2 cumulative posterior probability of the listed models, 3 log marginal likelihood against
#' model dimension, 4 posterior inclusion probabilities. See man/plot.dpmu_bma.Rd.
#' @export
plot.dpmu_bma <- function(x, which = if (is.null(x$y)) 2:4 else 1:4, ask = prod(graphics::par("mfcol")) <
                            length(which) && grDevices::dev.interactive(), col.in = 2, col.ex = 1, ...) {
  if (!all(which %in% 1:4)) stop("dpmu: plot: which must be in 1:4", call. = FALSE)
  if (1 %in% which && is.null(x$y)) {
    stop("dpmu: plot: the residual plot (which = 1) needs the data, which a release does not keep; use ",
         "which = 2:4", call. = FALSE)
  }
  if (ask) {
    op <- graphics::par(ask = TRUE)
    on.exit(graphics::par(op))
  }
  m <- x$models
  if (1 %in% which) {
    f <- fitted.dpmu_bma(x)
    graphics::plot(f, x$y - f, xlab = "Predictions under BMA", ylab = "Residuals", main = "Residuals vs Fitted", ...)
    graphics::abline(h = 0, lty = 2, col = "gray")
  }
  if (2 %in% which) {
    graphics::plot(seq_len(nrow(m)), cumsum(m$posterior_probability), type = "s", ylim = c(0, 1),
                   xlab = "Model rank", ylab = "Cumulative probability",
                   main = paste0("Model probabilities (the ", nrow(m), " listed models; top_models)"), ...)
  }
  if (3 %in% which) {
    graphics::plot(m$size + 1, m$log_marginal, xlab = "Model dimension", ylab = "log(Marginal)",
                   main = "Model complexity", ...)
  }
  if (4 %in% which) {
    pip <- x$pip
    graphics::plot(seq_along(pip), pip, type = "h", lwd = 3, ylim = c(0, 1), xaxt = "n", xlab = "",
                   ylab = "Marginal inclusion probability", main = "Inclusion probabilities",
                   col = ifelse(pip > 0.5, col.in, col.ex), ...)
    graphics::axis(1, at = seq_along(pip), labels = names(pip), las = 2)
  }
  invisible(x)
}

# Whether a release's statistics carry information about the coefficients, judged from the release
# and the public settings only (post-processing: no budget, nothing confidential): each released
# cross product of a predictor with the response, G*[j, y], against the SD of the noise added to it
# (Laplace: sqrt(2) b; Wishart: sqrt(k) s, the SD of an off-diagonal entry of W(k, s I)). If every
# |G*[j, y]| / SD is below 2, the release cannot tell any slope from 0 and the printout says so.
dpmu_release_information <- function(x) {
  r <- x$release
  pr <- x$privacy
  if (is.null(r) || is.null(pr) || is.null(r$released_gram)) return(NULL)
  sd <- if (!is.null(pr$laplace_scale)) {
    sqrt(2) * pr$laplace_scale
  } else if (!is.null(pr$wishart_scale) && !is.null(pr$wishart_degrees_of_freedom)) {
    sqrt(pr$wishart_degrees_of_freedom) * pr$wishart_scale
  } else {
    return(NULL)
  }
  g <- r$released_gram
  k <- ncol(g)
  z <- abs(g[-k, k]) / sd
  list(z = z, noise_sd = sd, informative = any(z >= 2))
}

dpmu_information_line <- function(x) {
  info <- dpmu_release_information(x)
  if (is.null(info)) return("")
  zmax <- max(info$z)
  if (info$informative) {
    return(sprintf("Signal: the largest released predictor-response cross product is %.3g noise SDs from 0\n", zmax))
  }
  sprintf(paste0("LITTLE INFORMATION: every released predictor-response cross product is within %.2g noise SDs ",
                 "of 0, so the release cannot tell any slope from 0; the PIPs and intervals mostly reflect the ",
                 "prior and the noise (judged from the release and public settings only)\n"), zmax)
}

#' @export
print.dpmu_adassp <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("AdaSSP ridge point estimate (Wang 2018), n = ", x$settings$n, ": no model averaging, no intervals\n", sep = "")
  cat(if (isTRUE(x$private)) "private" else paste0("NOT private: ", paste(unlist(x$private_reason), collapse = "; ")),
      " (epsilon = ", format(x$privacy$epsilon), ", delta = ", format(x$privacy$delta), "; ridge ",
      format(x$ridge, digits = digits), ")\n\n", sep = "")
  print(coef(x), digits = digits)
  invisible(x)
}

#' @export
coef.dpmu_adassp <- function(object, ...) {
  b <- object$coefficients
  stats::setNames(vapply(b, function(v) if (is.null(v)) NA_real_ else as.numeric(v), 0), names(b))
}
