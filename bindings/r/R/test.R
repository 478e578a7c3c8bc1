# Nested tests H0: y ~ 1 + common against H1: y ~ 1 + common + tested (Pena & Barrientos 2024,
# Sec. 3-4), non-private or differentially private by subsample and aggregate, on dpmu's C++ core.

#' Test two nested linear models with a Bayes factor or an information criterion.
#'
#' See man/test.Rd.
#' @export
test <- function(formula_h0, formula_h1, data, prior = "zellner-siow", epsilon = NULL, delta = 0, groups = NULL,
                 censor = NULL, censor_probability = NULL, alpha = c(0.05, 0.01), seed = NULL,
                 simulations = 10000, g = NULL, a = 3, prior_h0 = 0.5, gaussian_calibration = "exact",
                 na.action = stats::na.omit, levels = NULL,
                 ledger = getOption("dpmu.ledger", Sys.getenv("DPMU_LEDGER", "")), budget = NULL,
                 method = "subsample-aggregate", bounds = NULL, alpha0 = NULL, power_target = 0.9) {
  caller <- "dpmu::test"
  if (missing(data)) stop("dpmu::test: give the data frame as 'data'", call. = FALSE)
  formula_h0 <- dpmu_as_formula(formula_h0, caller, "formula_h0")
  formula_h1 <- dpmu_as_formula(formula_h1, caller, "formula_h1")
  if (!(is.numeric(simulations) && length(simulations) == 1 && !is.na(simulations) && simulations >= 100 &&
        simulations <= 1e8 && simulations == round(simulations))) {
    stop(caller, ": simulations must be a whole number between 100 and 1e8 (null simulations for the critical ",
         "values of lr, bic and aic; 10^4 give them to about two digits); got ",
         paste(format(simulations), collapse = " "), call. = FALSE)
  }
  if (!identical(formula_h0[[2]], formula_h1[[2]])) {
    stop("dpmu::test: formula_h0 and formula_h1 must have the same response", call. = FALSE)
  }
  private <- !is.null(epsilon)
  ledger <- dpmu_ledger_options(ledger, !missing(ledger), budget, private && is.null(seed),
                                dpmu_data_label(substitute(data)), caller)
  if (!private) {
    # The rows complete in both models, so that both models see the same rows.
    ok <- stats::complete.cases(stats::model.frame(formula_h0, data = data, na.action = stats::na.pass),
                                stats::model.frame(formula_h1, data = data, na.action = stats::na.pass))
    if (!all(ok)) {
      if (identical(na.action, stats::na.fail)) {
        stop("dpmu::test: missing values in the data (na.action = na.fail)", call. = FALSE)
      }
      data <- data[ok, , drop = FALSE]
      message("dpmu::test: ", sum(!ok), " of ", length(ok), " rows have missing values and were removed")
    }
  }
  # A private call: row-local public designs, no row dropped; a value derived from a valid row that
  # is not finite (log(0)) is passed on, and the core makes that row's subset fail (the public
  # failed-subset value).
  d0 <- dpmu_design(formula_h0, data, stats::na.fail, caller, private = private, levels = levels)
  d1 <- dpmu_design(formula_h1, data, stats::na.fail, caller, private = private, levels = levels)
  common <- colnames(d0$x)
  missing_h1 <- setdiff(common, colnames(d1$x))
  if (length(missing_h1) > 0) {
    stop("dpmu::test: the models are not nested: ", paste(missing_h1, collapse = ", "),
         " of formula_h0 are not in formula_h1", call. = FALSE)
  }
  tested <- setdiff(colnames(d1$x), common)
  if (length(tested) == 0) stop("dpmu::test: formula_h1 adds no predictor to formula_h0", call. = FALSE)
  options <- list(prior = prior, g = g, a = a, prior_h0 = prior_h0, epsilon = epsilon, delta = delta, groups = groups,
                  censor = censor, censor_probability = censor_probability, alpha = alpha, seed = seed,
                  simulations = simulations, gaussian_calibration = gaussian_calibration, ledger = ledger$ledger,
                  budget = ledger$budget, data_label = ledger$data_label, method = method,
                  bounds = if (is.null(bounds)) NULL else as.numeric(bounds), alpha0 = alpha0,
                  power_target = power_target)
  out <- .Call(dpmu_test_c, d1$x[, common, drop = FALSE], d1$x[, tested, drop = FALSE], d1$y, common, tested,
               d1$response, options)
  out$ledger <- out$settings$ledger  # the charge; NULL when not charged
  if (private) out$levels <- d1$levels
  out$call <- dpmu_public_call(match.call(), quote(dpmu::test))
  class(out) <- "dpmu_test"
  out
}

#' @export
print.dpmu_test <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  s <- if (is.null(x$settings)) x else x$settings
  cat("\nH0: ", s$response, " ~ 1", if (length(s$common)) paste0(" + ", paste(s$common, collapse = " + ")),
      "\nH1: H0 + ", paste(s$tested, collapse = " + "), "\n", sep = "")
  cat("prior: ", s$prior, ", n = ", s$n %||% x$n, "\n", sep = "")
  if (!is.null(x$privacy)) {
    method <- s$method %||% "subsample-aggregate"
    how <- switch(method,
                  `subsample-aggregate` = sprintf("subsample and aggregate, M = %d", as.integer(s$num_subsets)),
                  `test-of-tests` = sprintf("Test of Tests, m = %d, alpha0 = %g", as.integer(s$num_subsets),
                                            s$alpha0),
                  `dp-f` = "DP F-test (Alabi & Vadhan)", method)
    cat(sprintf("Differentially private (%s): epsilon = %g, delta = %g\n", how, x$privacy$epsilon,
                x$privacy$delta))
  }
  if (!isTRUE(x$private)) {
    cat("Not private", if (length(x$private_reason)) paste0(": ", paste(x$private_reason, collapse = "; ")), "\n",
        sep = "")
  } else if (!is.null(x$privacy)) {
    cat(dpmu_ledger_line(x))
  }
  cat(x$statistic %||% s$statistic, " = ", format(x$log_statistic, digits = digits), "\n", sep = "")
  if (!is.null(x$posterior_probability_h1)) {
    cat("P(H1 | data) = ", format(x$posterior_probability_h1, digits = digits), "\n", sep = "")
  }
  invisible(x)
}

