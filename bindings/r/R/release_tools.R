# DP model selection (Lei et al. 2018), planning a private test, auditing a release through this
# package, and the privacy-budget ledger: the R faces of the release API (engine/api), the same
# numbers as `dpmu select`, `dpmu plan-test`, `dpmu audit` and `dpmu ledger`.

#' Differentially private model selection of Lei et al. (2018).
#'
#' See man/select.Rd.
#' @export
select <- function(formula, data, epsilon, radius, penalty, data_bound, algorithm = 1, delta = NULL, seed = NULL,
                   levels = NULL, ledger = getOption("dpmu.ledger", Sys.getenv("DPMU_LEDGER", "")), budget = NULL,
                   lcssf_delta = "r2_1pR2", objective_scale = 0.5, noise_factor = 2, variance_floor = 0.01,
                   alg2_selection = "exponential_mechanism") {
  if (missing(data)) stop("dpmu::select: give the data frame as 'data'", call. = FALSE)
  for (a in c("epsilon", "radius", "penalty", "data_bound")) {
    if (eval(call("missing", as.name(a)))) stop("dpmu::select: give ", a, call. = FALSE)
  }
  caller <- "dpmu::select"
  private <- is.null(seed)
  ledger <- dpmu_ledger_options(ledger, !missing(ledger), budget, private, dpmu_data_label(substitute(data)), caller)
  d <- dpmu_design(formula, data, stats::na.fail, caller, private = private, levels = levels)
  if (ncol(d$x) == 0) stop("dpmu::select: the formula has no predictors", call. = FALSE)
  options <- list(algorithm = as.integer(algorithm), epsilon = epsilon, delta = delta, radius = radius,
                  penalty = penalty, data_bound = as.character(data_bound), lcssf_delta = lcssf_delta,
                  objective_scale = objective_scale, noise_factor = noise_factor, variance_floor = variance_floor,
                  alg2_selection = alg2_selection, seed = seed, ledger = ledger$ledger, budget = ledger$budget,
                  data_label = ledger$data_label)
  out <- .Call(dpmu_select_c, d$x, d$y, colnames(d$x), d$response, options)
  out$ledger <- out$settings$ledger
  out$call <- dpmu_public_call(match.call(), quote(dpmu::select))
  class(out) <- "dpmu_select"
  out
}

#' @export
print.dpmu_select <- function(x, ...) {
  s <- x$settings
  cat("\nDP model selection (Lei et al. 2018), algorithm ", s$algorithm, ": ", s$response, " ~ ",
      paste(s$predictors, collapse = " + "), " (no intercept), n = ", s$n, "\n", sep = "")
  m <- x$selected_model$predictors
  cat("Selected model: ", if (length(m) == 0) "(none)" else paste(m, collapse = " + "), "\n", sep = "")
  if (!is.null(x$privacy)) {
    cat(sprintf("epsilon = %g, delta = %g (%s)\n", x$privacy$epsilon, x$privacy$delta, x$privacy$mechanism))
  }
  cat(if (isTRUE(x$private)) "A differentially private release" else
        paste0("Not private: ", paste(unlist(x$private_reason), collapse = "; ")), "\n", sep = "")
  if (isTRUE(x$private)) cat(dpmu_ledger_line(x))
  invisible(x)
}

#' Plan a private test before any budget is spent (Pena & Barrientos 2024, Sec. 4.5).
#'
#' See man/plan_test.Rd.
#' @export
plan_test <- function(n, epsilon, p = 1, p0 = 1, prior = "zellner-siow", delta = 0, groups = c(2, 5, 10), censor = NULL,
                      r_squared = NULL, simulations = 2000, seed = NULL, g = NULL, a = 3,
                      gaussian_calibration = "exact") {
  if (is.matrix(censor)) censor <- as.vector(t(censor))
  options <- list(n = n, p = as.integer(p), p0 = as.integer(p0), prior = prior, g = g, a = a, epsilon = epsilon,
                  delta = delta, groups = as.double(groups), censor = if (is.null(censor)) NULL else as.double(censor),
                  r_squared = r_squared, simulations = simulations, seed = seed,
                  gaussian_calibration = gaussian_calibration)
  out <- .Call(dpmu_plan_test_c, options)
  rows <- out$settings
  out$settings <- data.frame(
    num_subsets = vapply(rows, function(r) r$num_subsets, 0),
    lower = vapply(rows, function(r) r$censoring_limits[1], 0),
    upper = vapply(rows, function(r) r$censoring_limits[2], 0),
    target = vapply(rows, function(r) r$target, 0),
    bias = vapply(rows, function(r) r$bias, 0),
    variance = vapply(rows, function(r) r$variance, 0),
    mse = vapply(rows, function(r) r$mse, 0),
    mse_mcse = vapply(rows, function(r) r$mse_mcse, 0),
    released_mse = vapply(rows, function(r) r$released_mse, 0),
    probability_at_upper = vapply(rows, function(r) r$probability_at_upper, 0))
  class(out) <- "dpmu_plan_test"
  out
}

#' @export
print.dpmu_plan_test <- function(x, digits = max(3L, getOption("digits") - 3L), table = FALSE, ...) {
  cat("\nPlan of a private test: n = ", x$n, ", p = ", x$p, ", p0 = ", x$p0, ", prior ", x$prior, ", epsilon = ",
      x$epsilon, ", delta = ", x$delta, ", scenario: ", x$scenario, " (", x$simulations, " simulations)\n", sep = "")
  for (line in dpmu_plan_test_verdict(x, digits)) cat(line, "\n", sep = "")
  if (table) {
    cat("\n")
    print(format(x$settings, digits = digits), row.names = FALSE)
  } else {
    cat("(the table of every setting: print(plan, table = TRUE) or plan$settings)\n")
  }
  invisible(x)
}

# Three lines: the recommended setting, the error of its released statistic, and what to do.
dpmu_plan_test_verdict <- function(x, digits) {
  r <- x$recommended
  row <- x$settings[x$settings$num_subsets == r$num_subsets & abs(x$settings$lower - r$censoring_limits[1]) < 1e-12 &
                      abs(x$settings$upper - r$censoring_limits[2]) < 1e-12, , drop = FALSE]
  f <- function(v) format(v, digits = digits)
  line1 <- paste0("Recommended: groups = ", r$num_subsets, ", censor = c(", paste(f(r$censoring_limits), collapse = ", "),
                  ") (", r$rule, ")")
  if (nrow(row) == 0) return(c(line1, "", ""))
  row <- row[1, ]
  rmse <- sqrt(row$released_mse)
  line2 <- paste0("Expected error of the released statistic: RMSE ", f(rmse), " (bias ", f(row$bias), ") around the ",
                  "non-private value ", f(row$target), "; P(censored at the upper limit) = ",
                  f(row$probability_at_upper))
  line3 <- if (is.finite(rmse) && is.finite(row$target) && rmse > max(1, abs(row$target))) {
    paste0("Verdict: at this n and epsilon the noise (RMSE ", f(rmse), ") is larger than the signal (", f(row$target),
           "): the test would carry little information; raise epsilon or n, or do not release")
  } else {
    "Verdict: the released statistic is informative at this n and epsilon; use the recommended groups and censor"
  }
  c(line1, line2, line3)
}

#' Plan a private model-averaging release before any budget is spent (docs/bma.md, "Planning a release").
#'
#' See man/plan_bma.Rd.
#' @export
plan_bma <- function(n, epsilon, coefficients = NULL, sigma = NULL, bounds = NULL, mechanism = "laplace",
                     delta = NULL, prior = "zellner-siow", model_prior = "beta-binomial(1,1)", simulations = 200,
                     seed = 1, uncertainty = "both", noise_aware_draws = 100, p = NULL, true_model_size = NULL,
                     signal_z = NULL) {
  bounds <- dpmu_bounds_vector(bounds, NULL, "dpmu::plan_bma")
  options <- list(n = n, p = p, coefficients = if (is.null(coefficients)) NULL else as.double(coefficients),
                  sigma = sigma, bounds = bounds, mechanism = mechanism,
                  epsilon = epsilon, delta = delta, prior = prior,
                  model_prior = dpmu_model_prior_text(model_prior, "dpmu::plan_bma"),
                  noise_aware_draws = noise_aware_draws, simulations = simulations, seed = seed,
                  uncertainty = uncertainty, true_model_size = true_model_size, signal_z = signal_z)
  out <- .Call(dpmu_plan_bma_c, options)
  rows <- list()
  for (analysis in c("plug_in", "noise_aware", "noise_aware_diagnostics")) {
    for (quantity in names(out[[analysis]])) {
      s <- out[[analysis]][[quantity]]
      m <- plan_numbers(s$mean)
      se <- plan_numbers(s$mc_se)
      if (length(se) != length(m)) se <- rep(NA_real_, length(m))
      term <- if (is.null(s$labels)) NA_character_ else as.character(unlist(s$labels))
      rows[[length(rows) + 1L]] <- data.frame(analysis = analysis, quantity = quantity, term = term, mean = m,
                                              mc_se = se, stringsAsFactors = FALSE)
    }
  }
  out$summary <- do.call(rbind, rows)
  rownames(out$summary) <- NULL
  class(out) <- "dpmu_plan_bma"
  out
}

# JSON numbers as doubles, null (an undefined summary) as NA.
plan_numbers <- function(v) {
  if (is.null(v)) return(NA_real_)
  vapply(v, function(x) if (is.null(x)) NA_real_ else as.double(x), 0)
}

#' @export
print.dpmu_plan_bma <- function(x, digits = max(3L, getOption("digits") - 3L), table = FALSE, ...) {
  s <- x$settings
  cat("\nPlan of a private model-averaging release: a simulation from public settings only (no data read,",
      "no budget spent; not a release)\n", sep = " ")
  cat("n = ", s$n, ", p = ", s$p, ", ", s$mechanism, ", epsilon = ", s$epsilon, ", delta = ", s$delta, ", prior ",
      s$prior, ", model prior ", s$model_prior, " (", x$simulation$replicates, " simulations, seed ",
      x$simulation$seed, ")\n", sep = "")
  cat("Assumed beta = (", paste(format(x$truth$beta, digits = digits), collapse = ", "), "), sigma = ",
      format(x$truth$sigma, digits = digits), "\n", sep = "")
  for (line in dpmu_plan_bma_verdict(x, digits)) cat(line, "\n", sep = "")
  if (table) {
    cat("\n")
    print(format(x$summary, digits = digits), row.names = FALSE)
    cat("\nEach mean is over the simulated releases; mc_se is its Monte Carlo standard error.\n")
  } else {
    cat("(the full table, ", nrow(x$summary), " rows: print(plan, table = TRUE) or plan$summary)\n", sep = "")
  }
  invisible(x)
}

# Three lines: the expected probability of the true model, the coverage of the active coefficients'
# 95 % intervals, and a recommendation (from the simulation's means; "MC SE" their Monte Carlo SEs).
dpmu_plan_bma_verdict <- function(x, digits) {
  t <- x$summary
  f <- function(v) format(v, digits = max(2L, digits - 2L))
  analyses <- intersect(c("plug_in", "noise_aware"), unique(t$analysis))
  label <- c(plug_in = "plug-in", noise_aware = "noise-aware")
  active <- which(x$truth$beta != 0)
  ptrue <- cover <- stats::setNames(rep(NA_real_, length(analyses)), analyses)
  parts1 <- parts2 <- character()
  for (a in analyses) {
    r <- t[t$analysis == a & t$quantity == "prob_true_model", ]
    if (nrow(r) == 1) {
      ptrue[a] <- r$mean
      parts1 <- c(parts1, paste0(label[a], " ", f(r$mean), " (MC SE ", f(r$mc_se), ")"))
    }
    c95 <- t[t$analysis == a & t$quantity == "coverage95", ]
    if (nrow(c95) >= length(active) && length(active) > 0) {
      cover[a] <- mean(c95$mean[active])
      parts2 <- c(parts2, paste0(label[a], " ", f(cover[a])))
    }
  }
  line1 <- paste0("Expected P(true model | release): ", paste(parts1, collapse = "; "))
  line2 <- if (length(active) == 0) {
    "95 % coverage of the active coefficients: none is active (beta = 0)"
  } else {
    paste0("95 % coverage of the ", length(active), " active coefficient", if (length(active) > 1) "s",
           " (nominal 0.95): ", paste(parts2, collapse = "; "))
  }
  best <- if (all(is.na(cover))) analyses[1] else names(which.min(abs(cover - 0.95)))
  line3 <- if (all(is.na(ptrue)) || max(ptrue, na.rm = TRUE) < 0.1) {
    paste0("Recommendation: at n = ", x$settings$n, " and epsilon = ", x$settings$epsilon, " a release would say little ",
           "about which model is true; raise epsilon or n, narrow the bounds, or do not release")
  } else if (!is.na(cover[best]) && cover[best] < 0.85) {
    paste0("Recommendation: the intervals under-cover (", f(cover[best]), " at best); report PIPs, not intervals, or ",
           "raise epsilon or n")
  } else {
    paste0("Recommendation: release with uncertainty = \"", label[best], "\" (its intervals cover closest to 95 %)")
  }
  c(line1, line2, line3)
}

#' Audit a release empirically through this package (a lower bound on epsilon).
#'
#' See man/audit.Rd.
#' @export
audit <- function(release, data, neighbour, epsilon, delta = 0, samples = 1000, confidence = 0.95,
                  score = c("laplace", "categorical")) {
  score <- match.arg(score)
  if (!is.function(release)) stop("dpmu::audit: 'release' must be a function of a data frame", call. = FALSE)
  if (!is.data.frame(data) || !is.data.frame(neighbour) || nrow(data) != nrow(neighbour)) {
    stop("dpmu::audit: 'data' and 'neighbour' must be data frames with the same number of rows (neighbours under ",
         "replace-one)", call. = FALSE)
  }
  if (!(is.numeric(samples) && length(samples) == 1 && samples >= 20)) {
    stop("dpmu::audit: samples must be a number >= 20", call. = FALSE)
  }
  draw <- function(d) {
    v <- lapply(seq_len(samples), function(i) as.double(release(d)))
    k <- unique(lengths(v))
    if (length(k) != 1 || k == 0) stop("dpmu::audit: 'release' must return numeric vectors of one length", call. = FALSE)
    matrix(unlist(v), nrow = samples, byrow = TRUE)
  }
  first <- draw(data)
  second <- draw(neighbour)
  out <- .Call(dpmu_audit_c, first, second, list(epsilon = epsilon, delta = delta, confidence = confidence,
                                                 score = score))
  out$claimed <- list(epsilon = epsilon, delta = delta)
  class(out) <- "dpmu_audit"
  out
}

#' @export
print.dpmu_audit <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nAudit: ", x$samples_per_data_set, " releases on each data set; event ", x$event, "\n", sep = "")
  cat("epsilon lower bound (", format(100 * x$confidence), "%): ", format(x$epsilon_lower_bound, digits = digits),
      " against the claimed ", format(x$claimed$epsilon, digits = digits), ": ", x$verdict, "\n", sep = "")
  invisible(x)
}

#' Privacy-budget ledgers: create one, change its budget, read it.
#'
#' See man/ledger.Rd.
#' @export
ledger_init <- function(path, budget, accountant = NULL) {
  if (is.null(budget)) stop("dpmu::ledger_init: give the budget (epsilon, or c(epsilon, delta))", call. = FALSE)
  if (!is.null(accountant) && !(is.character(accountant) && length(accountant) == 1 &&
                                accountant %in% c("basic", "tight", "zcdp"))) {
    stop("dpmu::ledger_init: accountant must be \"basic\", \"tight\" or \"zcdp\"", call. = FALSE)
  }
  .Call(dpmu_ledger_init_c, path.expand(path), dpmu_budget_text(budget),
        if (is.null(accountant)) "" else accountant)
  invisible(path)
}

#' @rdname ledger_init
#' @export
ledger_set_budget <- function(path, budget, reason) {
  if (missing(reason) || !nzchar(reason)) stop("dpmu::ledger_set_budget: give the reason (it is recorded)", call. = FALSE)
  .Call(dpmu_ledger_set_budget_c, path.expand(path), dpmu_budget_text(budget), reason)
  invisible(path)
}

#' @rdname ledger_init
#' @export
ledger_summary <- function(path = getOption("dpmu.ledger", Sys.getenv("DPMU_LEDGER", ""))) {
  if (!nzchar(path)) stop("dpmu::ledger_summary: give the ledger's path", call. = FALSE)
  .Call(dpmu_ledger_summary_c, path.expand(path))
}

#' A budget as the core reads it: "EPS" or "EPS,DELTA" (NULL stays NULL).
#' @noRd
dpmu_budget_text <- function(budget) {
  if (is.null(budget)) return(NULL)
  if (is.character(budget) && length(budget) == 1) return(budget)
  if (is.numeric(budget) && length(budget) %in% 1:2 && all(is.finite(budget))) {
      return(paste(sprintf("%.17g", budget), collapse = ","))
  }
  stop("budget must be a number (epsilon), c(epsilon, delta) or a string \"EPS,DELTA\"", call. = FALSE)
}
