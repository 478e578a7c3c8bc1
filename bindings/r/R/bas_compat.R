# BAS's names with BAS's meanings (docs/decisions.md "The R package speaks BAS"): the model-prior
# objects uniform(), beta.binomial(), Bernoulli(); include.always; confint of coef() and predict();
# variable.names(); diagnostics(). Every number still comes from the C++ core.

#' Model priors as objects (BAS's uniform(), beta.binomial(), Bernoulli()).
#'
#' See man/model-priors.Rd.
#' @export
uniform <- function() structure(list(family = "Uniform", hyper.parameters = 0.5), class = "prior")

#' @rdname uniform
#' @export
beta.binomial <- function(alpha = 1.0, beta = 1.0) {
  structure(list(family = "Beta-Binomial", hyper.parameters = c(alpha, beta)), class = "prior")
}

#' @rdname uniform
#' @export
Bernoulli <- function(probs = 0.5) {
  structure(list(family = "Bernoulli", hyper.parameters = probs), class = "prior")
}

# A model prior as the core reads it: a string ("beta-binomial(1,1)", "uniform", "bernoulli(0.2)")
# or a model-prior object (this package's or BAS's: list(family, hyper.parameters)).
dpmu_model_prior_text <- function(x, caller) {
  if (is.character(x) && length(x) == 1 && !is.na(x)) return(x)
  if (is.list(x) && !is.null(x$family)) {
    h <- as.double(x$hyper.parameters)
    num <- function(v) sprintf("%.17g", v)
    text <- switch(x$family,
      Uniform = "uniform",
      `Beta-Binomial` = if (length(h) == 2) paste0("beta-binomial(", num(h[1]), ",", num(h[2]), ")"),
      Bernoulli = if (length(h) == 1) paste0("bernoulli(", num(h), ")"),
      NULL)
    if (!is.null(text)) return(text)
    stop(caller, ": the model prior ", x$family, "(", paste(format(h), collapse = ", "), ") is not implemented; use ",
         "uniform(), beta.binomial(alpha, beta) or Bernoulli(probs) with one probability for every column ",
         "(or the strings \"uniform\", \"beta-binomial(a,b)\", \"bernoulli(w)\")", call. = FALSE)
  }
  stop(caller, ": model_prior must be a string such as \"beta-binomial(1,1)\", \"uniform\", \"bernoulli(0.5)\", or ",
       "an object uniform(), beta.binomial(alpha, beta), Bernoulli(probs)", call. = FALSE)
}

# BAS's include.always (a one-sided formula such as ~ x1 + x2, or column names) as design columns:
# the columns of every term of the formula. The intercept is always included anyway.
dpmu_include_always <- function(include, d, caller) {
  if (is.null(include)) return(character())
  if (is.character(include)) return(include)
  if (!inherits(include, "formula")) {
    stop(caller, ": include.always must be a formula such as ~ x1 + x2 (BAS) or column names", call. = FALSE)
  }
  labels <- attr(stats::terms(include), "term.labels")
  if (length(labels) == 0) return(character())
  term_labels <- d$term_labels
  unknown <- setdiff(labels, term_labels)
  if (length(unknown) > 0) {
    stop(caller, ": include.always names ", paste(unknown, collapse = ", "), ", which ",
         if (length(unknown) == 1) "is not a term" else "are not terms", " of the formula (its terms: ",
         paste(term_labels, collapse = ", "), ")", call. = FALSE)
  }
  colnames(d$x)[term_labels[d$assign] %in% labels]
}

#' Credible intervals of the coefficients from coef(fit) (BAS's confint.coef.bas), exact.
#' @export
confint.coef.dpmu_bma <- function(object, parm, level = 0.95, ...) {
  fit <- attr(object, "fit")
  if (is.null(fit)) stop("dpmu: this coef() table has no fit attached; call confint(fit, level = )", call. = FALSE)
  ci <- confint.dpmu_bma(fit, level = level)
  ci <- cbind(ci, beta = object$mean)
  if (!missing(parm)) ci <- ci[parm, , drop = FALSE]
  ci
}

#' Intervals of predictions without refitting (BAS's confint.pred.bas): parm = "pred" for a new
#' observation (BAS's default), "mean" for the regression function; exact quantiles of the mixture
#' (BAS simulates it and reports an HPD interval).
#' @export
confint.pred.dpmu_bma <- function(object, parm = "pred", level = 0.95, ...) {
  if (!(identical(parm, "pred") || identical(parm, "mean"))) {
    stop("dpmu: confint of predictions: parm must be \"pred\" (a new observation) or \"mean\"", call. = FALSE)
  }
  if (!(is.numeric(level) && length(level) == 1 && level > 0 && level < 1)) {
    stop("dpmu: level must be a number in (0, 1)", call. = FALSE)
  }
  r <- .Call(dpmu_predict_se_c, object$pointer, object$newx, object$estimator_code, level, parm == "pred",
             as.double(object$top %||% 0))
  ci <- cbind(r$lower, r$upper, r$fit)
  a <- (1 - level) / 2
  dimnames(ci) <- list(names(object$fit), c(sprintf("%g%%", 100 * a), sprintf("%g%%", 100 * (1 - a)), parm))
  attr(ci, "Probability") <- level
  ci
}

#' The columns of the model behind predictions (BAS's variable.names.pred.bas).
#' @export
variable.names.pred.dpmu_bma <- function(object, ...) object$best.vars

#' The columns of a fit, or of one of its models (estimator = "hpm", "mpm", "bpm").
#' @export
variable.names.dpmu_bma <- function(object, estimator = c("all", "hpm", "mpm", "bpm"), ...) {
  estimator <- match.arg(tolower(estimator[1]), c("all", "hpm", "mpm", "bpm"))
  s <- object$posterior
  switch(estimator,
         all = c("Intercept", names(object$pip)),
         hpm = c("Intercept", unlist(s$highest_posterior_model)),
         mpm = c("Intercept", unlist(s$median_probability_model)),
         bpm = c("Intercept", unlist(s$best_predictive_model)))
}

#' Convergence of an MCMC model search (BAS's diagnostics()). See man/diagnostics.Rd.
#' @export
diagnostics <- function(obj, ...) UseMethod("diagnostics")

#' @export
diagnostics.dpmu_bma <- function(obj, plot = TRUE, ...) {
  m <- obj$posterior$mcmc
  if (is.null(m)) {
    stop("dpmu: diagnostics: the fit enumerated every model (no MCMC), so its probabilities are exact; ",
         "diagnostics are for fits with mcmc = TRUE or more than 24 columns", call. = FALSE)
  }
  out <- data.frame(iterations = m$iterations, max_iterations = m$max_iterations, models_visited = m$models_visited,
                    acceptance_rate = m$acceptance_rate, converged = m$converged,
                    max_pip_difference_between_halves = m$max_pip_difference_between_halves)
  if (plot) {
    graphics::plot(seq_along(obj$pip), obj$pip, ylim = c(0, 1), pch = 19, xaxt = "n", xlab = "",
                   ylab = "Posterior inclusion probability",
                   main = sprintf("MCMC: %d iterations, %d models; halves differ by <= %.3g", as.integer(m$iterations),
                                  as.integer(m$models_visited), m$max_pip_difference_between_halves), ...)
    graphics::arrows(seq_along(obj$pip), pmax(0, obj$pip - m$max_pip_difference_between_halves), seq_along(obj$pip),
                     pmin(1, obj$pip + m$max_pip_difference_between_halves), angle = 90, code = 3, length = 0.03)
    graphics::axis(1, at = seq_along(obj$pip), labels = names(obj$pip), las = 2)
  }
  out
}
